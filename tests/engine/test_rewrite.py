"""The cell rewriter: what it produces, and that positions map back to the user's columns."""

from __future__ import annotations

import pytest

from mcp_kernel.engine.rewrite import CHECK, CellSyntaxError, rewrite, strip_checks


def body(src: str) -> str:
    code = rewrite(src, "cell[1]").code
    head = f'__mcp2repl.run("cell[1]",async function(){{{CHECK}'
    assert code.startswith(head)
    assert code.endswith(")\n//# sourceURL=cell[1]")
    return code[len(head) : code.rindex("\n},{")]


def test_declarations_become_global_assignments():
    assert body("const a = 1, {b, c: [d]} = o;") == ";( a = 1, {b, c: [d]} = o);"
    assert body("let x") == ";( x = undefined);"
    assert body("class K {}") == ";K=class K {};"


def test_functions_publish_to_global_at_start():
    assert body("function f() {}") == 'globalThis["f"]=f;function f() {' + CHECK + "}"


def test_var_without_value_keeps_existing():
    out = body("var v")
    assert out == 'if(!("v" in globalThis))globalThis["v"]=undefined;;( v = globalThis["v"]);'


def test_last_expression_returned_and_lines_preserved():
    src = "const a = 1\n\n// note\na +\n  2 // tail"
    out = body(src)
    assert out.count("\n") == src.count("\n")
    assert out.endswith(";return __mk$v((a +\n  2)) // tail")


def test_what_the_cell_returns_is_boxed_but_not_what_its_functions_return():
    out = body("if (a) { return /* x */ a, b }\nfunction f() { return 1 }\nconst g = () => { return 2 }\nreturn;")
    assert "return /* x */ __mk$v((a, b))" in out
    assert "return 1 }" in out and "return 2 }" in out and out.endswith("return;")


def test_loops_and_functions_get_checks():
    out = body("while (x) y()\nfor (;;) {}\nconst f = async () => { await g() }\nconst h = x => x")
    assert out.count(CHECK) == 3
    assert "{" + CHECK + "y()}" in out
    assert strip_checks(out).count("__mk$") == 0


def test_use_strict_prologue_stays_first():
    out = body("function s() { 'use strict'; return this }")
    assert "{ 'use strict';" + CHECK in out


@pytest.mark.parametrize(
    ("src", "line", "col"),
    [("let x = ;", 1, 9), ("a\nb c d e(", 2, 11), ("import x from 'y'", 1, 1)],
)
def test_parser_errors_carry_positions(src, line, col):
    with pytest.raises(CellSyntaxError) as info:
        rewrite(src, "cell[1]")
    assert (info.value.line, info.value.column) >= (line, 1)


def test_source_map_round_trip_with_unicode():
    src = "const é = 'ü'; const 𝒳 = 1\nthrow new Error(é)"
    rw = rewrite(src, "cell[1]")
    gen_lines = rw.code.split("\n")
    gen_col = gen_lines[1].index("new") + 1  # columns are 1-based; line 2 has no insertions
    assert rw.source_map.original(2, gen_col) == (2, 7)
    # on line 1 the wrapper and declarations were inserted; "'ü'" must map to its own column
    utf16 = gen_lines[0].encode("utf-16-le")
    col16 = len(gen_lines[0][: gen_lines[0].index("'ü'")].encode("utf-16-le")) // 2 + 1
    assert rw.source_map.original(1, col16) == (1, 11)
    assert len(utf16) > 0


def test_rewrite_cost_is_linear_enough():
    big = "\n".join(f"const v{i} = await f({i}, 'abc', [1, 2, 3]);" for i in range(2000))
    rw = rewrite(big, "cell[1]")
    assert len(rw.declared) == 2000


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ("if (true) { 1 } else { 2 }", "1"),
        ("const n = 0\nif (n) { 'a' } else if (n === 0) { 'b' } else { 'c' }", "'b'"),
        ("if (1) 4; else 5", "4"),
        ("if (false) 1", None),
        ("try { throw new Error('x') } catch { 'caught' }", "'caught'"),
        ("try { 5 } finally { 6 }", "5"),
        ("try { 1 } catch (e) { 2 } finally { 3 }", "1"),
        ("switch (2) { case 1: 'a'; break; case 2: 'b'; break; default: 'c' }", "'b'"),
        ("switch (1) { case 1: 'a'; case 2: 'b' }", "'b'"),
        ("{ { 8 } }", "8"),
        ("{ 1; let z = 2 }", "1"),
        ("done: { if (1) { await Promise.resolve(9) } }", "9"),
        ("if (1) { for (const i of [1, 2]) i }", "2"),
        ("for (let i = 0; i < 3; i++) i * 10", "20"),
        ("let k = 0\nwhile (k < 2) { k++; `k${k}` }", "'k2'"),
        ("do 7; while (false)", "7"),
    ],
)
def test_a_cell_ending_in_if_try_switch_a_loop_or_a_block_shows_its_completion_value(js, code: str, shown: str | None) -> None:
    assert js.value(code) == shown
