"""Cells as the engine runs them: TypeScript or JavaScript, stripped then rewritten, errors in the user's own text.

Every cell goes through strip_types, so these also hold the promise that plain JavaScript is
untouched: the cells the rest of the suite runs (tests/fixtures/js_cells.json, collected from a
whole run of it) and the runtime's own JS files come back from the stripper unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from typestrip_corpus import programs

from mcp_kernel.engine.typestrip import strip_types

ROOT = Path(__file__).resolve().parents[2]
#: every distinct cell the test suite ran (engine, session and kernel tests), recorded once
JS_CELLS: list[str] = json.loads((ROOT / "tests" / "fixtures" / "js_cells.json").read_text(encoding="utf-8"))
RUNTIME_JS = sorted((ROOT / "mcp_kernel").rglob("*.js"))


def test_the_suites_javascript_cells_are_unchanged() -> None:
    assert len(JS_CELLS) > 400
    changed = [cell for cell in JS_CELLS if strip_types(cell) != cell]
    assert changed == []


@pytest.mark.parametrize("path", RUNTIME_JS, ids=lambda p: str(p.relative_to(ROOT / "mcp_kernel")))
def test_the_runtimes_javascript_is_unchanged(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert strip_types(source) == source


def test_typescript_cells_run(js) -> None:
    assert js.value("interface P { x: number }\nconst p: P = { x: 20 };\nfunction twice<T extends number>(v: T): number { return v * 2 }") is None
    assert js.value("twice<number>(p.x + 1) satisfies number") == "42"
    assert js.value("const q = p as unknown as { x: number };\nq.x!") == "20"
    assert js.value("abstract class Shape { abstract area(): number }\nclass Sq extends Shape { area(): number { return 4 } }\nnew Sq().area()") == "4"
    assert js.value("type Id = string;\ndeclare const later: Id;\ntypeof later") == "'undefined'"


def test_top_level_typed_declarations_persist(js) -> None:
    js.value("const limit: number = 3;\nlet names: string[] = ['a'];\nclass Box<T> { constructor(v: T) { this.v = v } v: T }")
    assert js.value("names.push('b'); [limit, names.length, new Box<string>('x').v]") == "[ 3, 2, 'x' ]"
    assert js.value("const limit: number = 4; limit") == "4"  # re-running a typed const works like an untyped one


def test_a_throw_inside_a_typed_function_points_at_the_typescript(js) -> None:
    cell = (
        "interface Size { w: number; h: number }\n"
        "function area(s: Size, scale: number = 1): number { if (s.w < 0) throw new RangeError(`negative width ${s.w}`); return s.w * s.h * scale }\n"
        "let stack: string = '';\n"
        "try { area({ w: -1, h: 2 } as Size) } catch (e: unknown) { stack = (e as Error).stack! }\n"
        "stack"
    )
    throw_col = cell.splitlines()[1].index("throw new RangeError") + 1 + len("throw ")
    stack = js.value(cell)
    assert f"at area (cell[1]:2:{throw_col})" in stack
    assert "at cell[1]:4:7" in stack
    err = js.error("area({ w: -5, h: 1 })")
    assert err.name == "RangeError"
    assert f"  at cell[1] line 2, col {throw_col}, in area" in err.traceback
    # the excerpt quotes the TypeScript the user wrote, types and all
    assert any("function area(s: Size, scale: number = 1): number {" in line for line in err.traceback)


def test_a_syntax_error_in_a_typescript_cell_quotes_the_typescript(js) -> None:
    err = js.error("type T = { a: number };\nconst v: T = { a: 1 } as T;\nconst w: number = ;")
    assert err.name == "SyntaxError"
    assert err.message == "Unexpected token ';'"
    assert err.traceback[1:] == ["  at cell[1] line 3, col 19", "    const w: number = ;", "                      ^"]


@pytest.mark.parametrize(
    ("cell", "construct", "line", "alternative"),
    [
        ("enum Color { Red, Green }\nColor.Red", "enum", 1, "Object.freeze({ Red: 0, Green: 1 })"),
        ("const x = 1;\nnamespace Util { export const pi = 3.14 }", "namespace", 2, "a plain object"),
        ("class P {\n  constructor(private name: string) {}\n}", "parameter property", 2, "this.x = x"),
        ("@sealed\nclass K {}", "decorator", 1, "dec(class"),
    ],
)
def test_typescript_that_needs_generated_code_is_a_syntax_error(js, cell: str, construct: str, line: int, alternative: str) -> None:
    err = js.error(cell)
    assert err.name == "SyntaxError"
    assert f"TypeScript `{construct}` (line {line}," in err.message
    assert alternative in err.message
    assert err.extra == {"construct": construct}
    assert err.traceback[1].startswith(f"  at cell[1] line {line}, col ")
    assert err.traceback[2].strip() == cell.splitlines()[line - 1].strip()


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        # V8 inserts the semicolon before a line that cannot continue the statement; tree-sitter does not
        ("let t: string\n`value`", "'value'"),
        ("let t\n`value`", "'value'"),
        ("var u: RegExp\n/re/.test('re')", "true"),
        ("let n: number\n(() => 7)()", "7"),
        ("let first: number // no value yet\n[1, 2].length", "2"),
        ("class C {\n  x: number\n  ['y'] = 2\n}\nObject.keys(new C()).join()", "'x,y'"),
    ],
)
def test_semicolons_tree_sitter_misses_are_inserted(js, cell: str, expected: str) -> None:
    assert js.value(cell) == expected


def test_a_semicolon_is_never_inserted_into_invalid_code(js) -> None:
    # `if (a);` would parse, but JavaScript inserts no semicolon that makes an empty statement
    err = js.error("if (a)\nelse b")
    assert (err.name, err.message) == ("SyntaxError", "Unexpected token 'else'")


def test_positions_after_an_inserted_semicolon_are_the_users(js) -> None:
    err = js.error("let t: string\n`value`\nnull.x")
    assert err.traceback[1] == "  at cell[1] line 3, col 6"


def test_javascript_that_typescript_reads_differently_is_read_as_typescript(js) -> None:
    # documented in docs/typescript.md: `f < T > (x)` is a generic call, as in TypeScript
    assert js.value("const f = (x) => x * 10, T = 0;\nf < T > (4)") == "40"
    assert js.value("const a = 1, b = 2, c = 0; a < b > c") == "true"  # no parenthesis: a comparison


#: what a random TypeScript program may end with: a value, or an error a JS user knows
KNOWN_ERRORS = {"ReferenceError", "TypeError", "SyntaxError", "RangeError", "Error"}


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_typescript_cells_end_as_javascript_would(js, source: str) -> None:
    out = js.run(source)
    assert out.error is None or out.error.name in KNOWN_ERRORS, (source, out.error.traceback)
    if out.error is not None and out.error.name == "SyntaxError":
        assert out.error.traceback[1].startswith("  at cell[")


def test_a_typed_loop_still_stops_at_the_time_limit(js) -> None:
    err = js.error("function spin(limit: number): never {\n  let i: number = 0\n  while (true) { i = (i + 1) % limit }\n}\nspin(7)", timeout=0.5)
    assert err.name == "TimeoutError"
    assert js.value("const after: string = 'alive'; after") == "'alive'"


def test_a_cell_without_typescript_tokens_compiles_no_query() -> None:
    """``1+1`` (a one-shot's usual first cell) pays no ~20 ms for the TypeScript marks query."""
    from mcp_kernel.engine import typestrip

    typestrip._marks_query.cache_clear()
    assert strip_types("1+1\n'a' + \"b\" // done") == "1+1\n'a' + \"b\" // done"
    assert typestrip._marks_query.cache_info().currsize == 0
    assert strip_types("let n: number = 1") == "let n         = 1"  # a colon: the query is needed
    assert typestrip._marks_query.cache_info().currsize == 1


def test_the_warm_up_builds_every_query_a_first_typescript_cell_needs() -> None:
    from mcp_kernel.engine import prepare, rewrite, typestrip

    cached = (typestrip._marks_query, rewrite._query, rewrite._returns)
    for fn in cached:
        fn.cache_clear()
    prepare.warm_up()
    assert [fn.cache_info().currsize for fn in cached] == [1, 1, 1]
    hits = [fn.cache_info().hits for fn in cached]
    first = prepare._first("const p: { x: number } = { x: (1) }; return p.x as number", "cell[1]")
    assert isinstance(first, rewrite.Rewritten)
    assert [fn.cache_info().currsize for fn in cached] == [1, 1, 1]  # nothing more to compile
    assert all(fn.cache_info().hits > hit for fn, hit in zip(cached, hits, strict=True))


def test_a_small_cell_is_prepared_on_the_loop_and_a_larger_one_in_a_thread() -> None:
    """A one-line step costs less to prepare (~40 µs) than two hand-offs to a worker thread; past
    INLINE_CHARS the loop stays free while the cell is prepared."""
    import asyncio
    import threading

    from mcp_kernel.engine import prepare

    def where(code: str, cell: str) -> str:
        return threading.current_thread().name

    async def both() -> tuple[str, str, str]:
        small = "return 1"
        edge = "x" * prepare.INLINE_CHARS
        larger = "x" * (prepare.INLINE_CHARS + 1)
        return (
            await prepare.in_thread(None, where, small, "c"),
            await prepare.in_thread(None, where, edge, "c"),
            await prepare.in_thread(None, where, larger, "c"),
        )

    main = threading.current_thread().name
    small, edge, larger = asyncio.run(both())
    assert (small, edge) == (main, main)
    assert larger != main
