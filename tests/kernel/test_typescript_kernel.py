"""TypeScript cells in a real kernel (jupyter_client): results, errors, completion and is_complete.

The corpus of tests/engine/typestrip_corpus.py runs twice in one kernel: as TypeScript, and as the
JavaScript npm ts-blank-space makes of it. Both must give the same result; TypeScript semantics
are the reference's, not ours.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from conftest import KernelProcess
from ts_reference import ts_blank_space
from typestrip_corpus import CASES

SCRIPTS = [c for c in CASES if c.expected is not None]


@pytest.fixture(scope="module")
def k() -> Iterator[KernelProcess]:
    kernel = KernelProcess()
    yield kernel
    kernel.close()


@pytest.fixture(scope="module")
def stripped() -> dict[str, str]:
    return dict(zip([c.ts for c in SCRIPTS], ts_blank_space([c.ts for c in SCRIPTS]), strict=True))


@pytest.mark.parametrize("case", SCRIPTS, ids=lambda c: c.name)
def test_a_typescript_cell_gives_what_its_reference_javascript_gives(k: KernelProcess, stripped: dict[str, str], case) -> None:
    ours = k.run(case.ts)
    assert ours.reply["status"] == "ok", ours.outputs
    theirs = k.run(stripped[case.ts])
    assert theirs.reply["status"] == "ok", (stripped[case.ts], theirs.outputs)
    assert ours.text == theirs.text
    assert [o["type"] for o in ours.outputs] == ["execute_result"]


def test_a_throw_in_a_typed_function_is_reported_at_the_typescript(k: KernelProcess) -> None:
    k.run("interface Order { id: string; qty: number }")
    check = "function check(o: Order, max: number = 10): Order { if (o.qty > max) throw new RangeError(`too many: ${o.qty}`); return o }"
    col = check.index("throw") + len("throw ") + 1
    cell = k.run(f"{check}\nconst ok: Order = check({{ id: 'a', qty: 1 }});\ncheck({{ id: 'b', qty: 99 }} as Order)")
    error = cell.error
    assert (error["ename"], error["evalue"]) == ("RangeError", "too many: 99")
    n = cell.reply["execution_count"]
    assert error["traceback"][1:] == [
        f"  at cell[{n}] line 1, col {col}, in check",
        f"    {check}",
        "    " + " " * (col - 1) + "^",
        f"  at cell[{n}] line 3, col 1",
        "    check({ id: 'b', qty: 99 } as Order)",
        "    ^",
    ]
    stack = k.value("let trace: string = '';\ntry { check({ id: 'c', qty: 11 }) } catch (e) { trace = (e as Error).stack ?? '' }\ntrace")
    assert f"at check (cell[{n}]:1:{col})" in stack
    assert f"cell[{n + 1}]:2:7" in stack


@pytest.mark.parametrize(
    ("cell", "construct", "alternative"),
    [
        ("enum Status { Open, Closed }", "enum", "Object.freeze"),
        ("namespace Shop { export const open = true }", "namespace", "plain object"),
    ],
)
def test_enum_and_namespace_say_what_to_write_instead(k: KernelProcess, cell: str, construct: str, alternative: str) -> None:
    result = k.run(f"const before: number = 1;\n{cell}")
    error = result.error
    assert error["ename"] == "SyntaxError"
    assert error["evalue"].startswith(f"TypeScript `{construct}` (line 2, column 1) cannot run by erasing types")
    assert alternative in error["evalue"]
    assert error["traceback"][1:] == [f"  at cell[{result.reply['execution_count']}] line 2, col 1", f"    {cell}", "    ^"]


def test_completion_on_typescript_input(k: KernelProcess) -> None:
    k.wait_for_servers()
    k.run("const shelf: { title: string; year: number } = { title: 'x', year: 2000 }")
    assert "search_books" in k.complete("const r: Foo = mcp.demo.")["matches"]
    assert k.complete("const hits: Hit[] = await tools.search_b")["matches"] == ["search_books"]
    assert "query" in k.complete("const b: Book[] = (await tools.search_books({ qu")["matches"]
    assert k.complete("const p = api.project<Book[]>(x, { a: true });\napi.proj")["matches"] == ["project"]
    assert k.complete("shelf!.ti")["matches"] == ["title"]
    assert "string" in k.complete("let label: str")["matches"]


def test_inspect_inside_a_generic_call(k: KernelProcess) -> None:
    reply = k.inspect("api.project<Book[]>(res, ")
    assert reply["found"] and reply["data"]["text/plain"].startswith("api.project: function")
    doc = k.inspect("const r = await tools.search_books<Hit>({ query: 'x', ")
    assert doc["found"] and "async function search_books(" in doc["data"]["text/plain"]


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("const x: number = 1", "complete"),
        ("interface Book {", "incomplete"),
        ("const b = api.project<Book[]>(x, { a: true })", "complete"),
        ("enum E { A }", "invalid"),
    ],
)
def test_is_complete_on_typescript_input(k: KernelProcess, code: str, status: str) -> None:
    assert k.reply(k.kc.is_complete(code))["status"] == status


def test_kernel_info_highlights_cells_as_typescript(k: KernelProcess) -> None:
    info = k.reply(k.kc.kernel_info())
    assert info["language_info"]["codemirror_mode"] == "typescript"
    assert info["language_info"]["name"] == "javascript"
    assert re.search(r"Cells may be TypeScript", info["banner"])


def test_inspect_shows_a_typescript_function_as_written(k: KernelProcess) -> None:
    k.run("function label(r: { id: number }, prefix: string = '#'): string {\n  return prefix + r.id\n}")
    data = k.inspect("label")["data"]
    assert "function label(r: { id: number }, prefix: string = '#'): string {\n  return prefix + r.id\n}" in data["text/plain"]
    assert "```ts\nfunction label(" in data["text/markdown"]
    js = k.inspect("Math.max")["data"]["text/plain"]  # builtins and JS functions are unchanged
    assert js.startswith("Math.max: function")
