"""TypeScript type stripping: positions kept, output equal to npm ts-blank-space, results in V8.

The reference is ts-blank-space itself (tests/fixtures/node/ts_blank_space.mjs), run once per
session on every source here. Where we differ on purpose, both outputs are run in V8 instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import tree_sitter_javascript
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py_mini_racer import JSEvalException, MiniRacer
from tree_sitter import Language, Parser
from ts_reference import ts_blank_space
from typestrip_corpus import CASES, PLAIN_JS, Case, programs, random_programs

from mcp_kernel.engine.rewrite import rewrite
from mcp_kernel.engine.typestrip import TypeScriptError, strip_types

# (source, construct, line, column, a piece of the suggested JavaScript)
ERRORS: list[tuple[str, str, int, int, str]] = [
    ("enum Color { Red, Green }", "enum", 1, 1, "Object.freeze({ Red: 0"),
    ("let x = 1\n  const enum F { B }", "const enum", 2, 3, "Object.freeze"),
    ("namespace N { export const x = 1 }", "namespace", 1, 1, "const N = {"),
    ("namespace A.B { export function f() {} }", "namespace", 1, 1, "plain object"),
    ("module Legacy { export const v = 1 }", "module", 1, 1, "plain object"),
    ("class K {\n  constructor(private x: number) {}\n}", "parameter property", 2, 15, "this.x = x"),
    ("class K { constructor(readonly x = 1) {} }", "parameter property", 1, 23, "this.x = x"),
    ("class K { constructor(a, override b) {} }", "parameter property", 1, 26, "this.x = x"),
    ("@sealed\nclass X {}", "decorator", 1, 1, "dec(class"),
    ("class Y {\n  @log m() {}\n}", "decorator", 2, 3, "C.prototype.m = dec(C.prototype.m)"),
    ("class Z { @observable value = 1 }", "decorator", 1, 11, "dec("),
    ("class P { m(@inject() a) {} }", "decorator", 1, 13, "dec("),
    ("import fs = require('fs')", "import = require", 1, 1, "const x = require("),
    ("import A = N.B", "import alias", 1, 1, "const A = N.B"),
    ("export = fs", "export =", 1, 1, "export default x"),
    ("let v = <string>x", "type assertion", 1, 9, "expr as T"),
    ("x = 1 + 1 as number / 2", "as", 1, 5, "(a + b) as T"),
    ("y = a ?? b satisfies T || c", "satisfies", 1, 5, "parentheses"),
    ("const 😀 = '𝒳'; enum E {}", "enum", 1, 16, "Object.freeze"),
]


@pytest.fixture(scope="session")
def reference() -> dict[str, Any]:
    """ts-blank-space's output for every source in this file (one Node process per mode)."""
    sources = [c.ts for c in CASES] + PLAIN_JS + [e[0] for e in ERRORS] + RANDOM
    outputs = ts_blank_space(sources)
    errors = ts_blank_space(sources, "--errors")
    return {"output": dict(zip(sources, outputs, strict=True)), "errors": dict(zip(sources, errors, strict=True))}


@pytest.fixture
def v8() -> Iterator[Any]:
    """Runs a script in a fresh V8 context; returns its value, or `error: ` and the error's last line."""
    racers: list[MiniRacer] = []

    def run(code: str) -> Any:
        racer = MiniRacer()
        racers.append(racer)
        try:
            return racer.eval(code)
        except JSEvalException as exc:  # SyntaxError or a thrown error: compare their last line
            return f"error: {str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}"

    yield run
    for racer in racers:
        racer.close()


def _js_errors(code: str) -> bool:
    return Parser(Language(tree_sitter_javascript.language())).parse(code.encode()).root_node.has_error


def _same_shape(src: str, out: str) -> None:
    assert len(out) == len(src)
    for i, (a, b) in enumerate(zip(src, out, strict=True)):
        if a in "\n\r\u2028\u2029" or b in "\n\r\u2028\u2029":
            assert a == b, f"line break changed at {i}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_positions_are_kept(case: Case):
    _same_shape(case.ts, strip_types(case.ts))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_ts_blank_space(case: Case, reference, v8):
    ours, theirs = strip_types(case.ts), reference["output"][case.ts]
    assert reference["errors"][case.ts] == []
    if case.same_as_reference:
        assert ours == theirs
    else:
        assert ours != theirs, f"no longer differs ({case.reason}): mark it as the same"
        assert case.expected is not None
        assert v8(ours) == v8(theirs) == case.expected


@pytest.mark.parametrize("case", [c for c in CASES if c.expected is not None], ids=lambda c: c.name)
def test_runs_in_v8(case: Case, v8):
    assert v8(strip_types(case.ts)) == case.expected


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_output_is_javascript(case: Case):
    out = strip_types(case.ts)
    assert _js_errors(out) != case.tree_sitter_js
    if case.expected is not None and case.tree_sitter_js:  # and the kernel's rewrite takes it as a cell
        assert rewrite(out, "cell[1]").code


def test_types_are_gone():
    out = strip_types("let x: Map<string, number> = new Map<string, number>()!\nfunction f<T>(a?: T): asserts a {}")
    assert out == "let x                      = new Map                () \nfunction f   (a    )            {}"


@pytest.mark.parametrize("src", PLAIN_JS)
def test_plain_javascript_is_unchanged(src: str, reference):
    assert strip_types(src) == src
    assert reference["output"][src] == src  # TypeScript reads it the same way


def test_crlf_and_tabs():
    src = "let a:\tnumber = 1\r\ninterface I {\r\n\tx: number\r\n}\r\na"
    out = strip_types(src)
    _same_shape(src, out)
    assert out == "let a         = 1\r\n;            \r\n          \r\n \r\na"  # `;`: ASI


def test_line_separators_stay_line_breaks():
    # V8 counts U+2028/U+2029 as line breaks, so they survive erasure (ts-blank-space blanks them)
    src = "type T = 1 /*\u2028*/ | 2;\nlet v = 3\nv"
    out = strip_types(src)
    _same_shape(src, out)
    assert out.count("\u2028") == 1
    assert out.endswith("\nlet v = 3\nv")


def test_unparsable_input_is_left_for_v8_to_report():
    src = "let x: number = ;\nlet y: string = 'ok'"
    out = strip_types(src)
    _same_shape(src, out)
    assert out.endswith("let y         = 'ok'")


@pytest.mark.parametrize(("src", "construct", "line", "column", "alternative"), ERRORS, ids=[e[1] + ":" + e[0][:20] for e in ERRORS])
def test_refused_syntax(src, construct, line, column, alternative, reference):
    with pytest.raises(TypeScriptError) as info:
        strip_types(src)
    err = info.value
    assert (err.construct, err.line, err.column) == (construct, line, column)
    assert alternative in err.message
    assert f"line {line}, column {column}" in str(err)
    assert f"`{construct}`" in err.message
    # ts-blank-space lets TypeScript 5 decorators and `override` parameter properties through
    if construct != "decorator" and "override" not in src:
        assert reference["errors"][src], "ts-blank-space accepts it too"


def test_erased_code_is_not_refused():
    src = (
        "declare enum E { A }\ndeclare namespace N { const x: 1 }\ndeclare module 'm' { export = x }\nnamespace T { export type U = 1 }\n1"
    )
    assert strip_types(src).strip() == "1"


def test_big_cell():
    # its speed is measured in bench/typestrip_bench.py (bench/run.py --only typestrip)
    chunk = (
        "interface P { x: number }\nfunction d(a: P, b: P): number { return (a.x - b.x) as number }\nconst m = new Map<string, P[]>()!\n"
    )
    big = chunk * 700
    out = strip_types(big)
    _same_shape(big, out)
    assert not _js_errors(out)


# --- random programs from small TypeScript pieces ----------------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_keep_positions_and_parse_as_javascript(src: str):
    out = strip_types(src)
    _same_shape(src, out)
    assert not _js_errors(out), f"{src!r} -> {out!r}"


RANDOM = random_programs(400)


def test_random_programs_match_ts_blank_space(reference):
    differ = [(src, strip_types(src), reference["output"][src]) for src in RANDOM if strip_types(src) != reference["output"][src]]
    assert differ == []


WORDS = (
    "let const x : number = 1 as satisfies T < > ( ) [ ] { } , ; ! ? type interface class extends implements declare abstract"
    " public readonly function => this | & keyof typeof new return async await get set static #p . ... * + - ?? && @ enum namespace"
)
TOKENS = [*WORDS.split(), "\n", "\r\n", "\u2028", " ", "\t", "`t${", "}`", "'é😀'", "/*c*/", "//c\n", "'", '"', "`", "/"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=30))
def test_any_input_keeps_positions_or_is_refused(tokens: list[str]):
    src = " ".join(tokens)
    try:
        out = strip_types(src)
    except TypeScriptError as err:
        assert err.line >= 1 and err.column >= 1 and err.construct in err.message
        return
    _same_shape(src, out)


def test_empty_and_comment_only_cells():
    assert strip_types("") == ""
    assert strip_types("// just a note\n/* type T = 1 */") == "// just a note\n/* type T = 1 */"
