"""The linear tree walks under type stripping and the rewrite (engine/treewalk.py).

The pruned query walk must give exactly the query's own captures (it replaces a superlinear
QueryCursor on big trees), so it is compared with the query on every cell the stripper's and the
rewriter's tests know; the rest checks what made big and deep cells hang: recursion, a parse that
cannot be stopped, and the query's cost on wide and deep trees.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from tree_sitter import Parser, QueryCursor
from typestrip_corpus import CASES, random_programs

from mcp_kernel.engine import rewrite as rw
from mcp_kernel.engine import treewalk
from mcp_kernel.engine import typestrip as ts
from mcp_kernel.engine.typestrip_support import language

CELLS = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "js_cells.json").read_text(encoding="utf-8"))
TS_CELLS = [c.ts for c in CASES] + random_programs(150)
EXTRA = [
    "[{ a: (x: number) => x }, { m(y: string): void {} }, class { x: T; [k: string]: any }, { a: b! }, { m?() {} }]",
    "const rows = [{ id: 1, f: function (a: A): B { return a } }, { g: <T,>(t: T) => t }, { h: x as Y }]",
    "({ a: { b: [{ c: class C { p?: number; private q = 1 } }] } })",
    "let o = { 'a:b': [1, 2, { 'c': { d: async (e): Promise<void> => { for (;;) {} } } }] }",
]


def _key(found: dict[str, list]) -> dict[str, list[tuple[int, int, str]]]:
    return {name: sorted((n.start_byte, n.end_byte, n.type) for n in nodes) for name, nodes in found.items() if nodes}


@pytest.mark.parametrize("small", [1, 6, 40])
@pytest.mark.parametrize("language_name", ["typescript", "javascript"])
def test_the_pruned_walk_finds_exactly_what_the_query_finds(language_name: str, small: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(treewalk, "SMALL", small)  # so that small cells are walked, not queried whole
    if language_name == "typescript":
        lang, query, cells = language(), ts._marks_query(), TS_CELLS + EXTRA + CELLS
        needed, extra = ts._MARK_TOKENS, ts._COLON
    else:
        lang, query, cells = rw._language(), rw._query(), CELLS + EXTRA
        needed, extra = rw._FN_OR_LOOP_TOKENS, None
    for code in cells:
        raw = code.encode("utf-8")
        root = Parser(lang).parse(raw).root_node
        pruned = treewalk._pruned(
            query, root, treewalk._positions(needed, raw), treewalk._positions(extra, raw) if extra is not None else []
        )
        assert _key(pruned) == _key(QueryCursor(query).captures(root)), code


def test_deep_and_wide_trees_are_walked_without_recursion() -> None:
    deep = "(" * 5000 + "x" + " as any)" * 5000
    assert ts.strip_types(deep) == "(" * 5000 + "x" + "       )" * 5000
    chain = "a" + "<b>c" * 20000  # comparisons, each a mark, 40,000 levels deep
    assert ts.strip_types(chain) == chain
    blocks = "{" * 20000 + "1" + "}" * 20000
    assert rw.rewrite(blocks, "cell[1]").code.count(rw.CHECK) == 1
    broken = "{" * 20000 + "1 +" + "}" * 20000
    with pytest.raises(rw.CellSyntaxError):
        rw.rewrite(broken, "cell[1]")


def test_a_big_data_literal_is_stripped_and_rewritten_unchanged() -> None:
    rows = [{"id": i, "name": f"n{i}", "tags": ["a", "b:c"], "ok": True} for i in range(4000)]
    code = "const data: Row[] = " + json.dumps(rows) + ";\ndata.length"
    stripped = ts.strip_types(code)
    assert stripped == code.replace(": Row[]", "       ", 1)
    assert rw.rewrite(stripped, "cell[1]").code.count(rw.CHECK) == 1


def test_a_stopped_preparation_ends_its_parse_and_its_walk() -> None:
    event = threading.Event()
    event.set()
    with treewalk.stoppable(event), pytest.raises(treewalk.Stopped):
        treewalk.parse(Parser(language()), b"[" + b"1," * 200000 + b"]")
    with treewalk.stoppable(event), pytest.raises(treewalk.Stopped):
        treewalk.checkpoint()
    treewalk.checkpoint()  # outside a stopped preparation: nothing happens


def test_other_threads_run_while_a_big_cell_parses() -> None:
    raw = b"[" + b"1," * 400000 + b"]"
    ticks: list[float] = []
    parsing = threading.Event()
    done = threading.Event()

    def tick() -> None:
        parsing.wait(60)
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        parsing.set()
        started = time.monotonic()
        treewalk.parse(Parser(language()), raw)
        ended = time.monotonic()
    finally:
        done.set()
        ticker.join(30)
    during = [t for t in ticks if started < t < ended]
    assert len(during) >= 3, (len(ticks), ended - started)  # a parse holding the GIL lets no tick through


def test_parsing_a_big_cell_again_and_again_keeps_no_memory() -> None:
    """py-tree-sitter 0.26 leaks each answer of a read callback; ours are views it keeps anyway."""
    import gc
    import tracemalloc

    raw = ("let a = [" + ",".join(str(i) for i in range(100000)) + "];\n").encode()
    parser = rw.parser()
    treewalk.parse(parser, raw)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(5):
            treewalk.parse(parser, raw)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"{grown} bytes kept after 5 parses of a {len(raw)}-byte cell"  # was 5 × its size


@pytest.mark.parametrize("size", [1, 2, 3, 5, 100, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 200001])
def test_the_tree_from_chunked_reads_is_the_tree_of_the_whole_text(size: int) -> None:
    """Answers of any length and characters split between them (é, €, 😀) give the same tree."""
    text = "".join("é€😀x;\n"[i % 6] for i in range(size))
    raw = ("let s = `" + text + "`; f(s)").encode()
    parser = rw.parser()
    assert str(treewalk.parse(parser, raw).root_node) == str(parser.parse(raw).root_node)
    assert treewalk.parse(parser, raw).root_node.end_byte == len(raw)
