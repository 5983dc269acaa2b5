"""is_complete verdicts that drive jupyter console's Enter key."""

from __future__ import annotations

import pytest

from mcp_kernel.engine.completeness import classify


@pytest.mark.parametrize(
    "code", ["1", "const a = 1", "function f(x) { return x }", "x = `a${b}c`", "a / b / c", "/re/g.test(s)", "x++", "", "// just a comment"]
)
def test_complete(code):
    assert classify(code).status == "complete"


@pytest.mark.parametrize(
    ("code", "indent"),
    [
        ("function f(x) {", "  "),
        ("if (a) {\n  b()", "  "),
        ("const o = {\n    a: 1,", "    "),
        ("foo(1,", ""),
        ("const s = `abc", ""),
        ("const s = `a${", ""),
        ("/* open", ""),
        ("const x =", ""),
        ("a +", ""),
    ],
)
def test_incomplete_with_indent(code, indent):
    verdict = classify(code)
    assert (verdict.status, verdict.indent) == ("incomplete", indent)


@pytest.mark.parametrize("code", ["}", "const = 7q", "let x = )", "'unterminated\n", "a b c", "foo(]"])
def test_invalid(code):
    assert classify(code).status == "invalid"


# Every cell may be TypeScript: the parser judges the cell with its types stripped.
@pytest.mark.parametrize(
    "code",
    [
        "const x: number = 1",
        "interface A { a: string }",
        "const b = api.project<Book[]>(x, { a: true })",
        "x!",
        "let t: string\n`v`",  # a semicolon only tree-sitter misses
        "type T = { a?: number }",
    ],
)
def test_typescript_complete(code):
    assert classify(code).status == "complete"


@pytest.mark.parametrize(("code", "indent"), [("interface A {", "  "), ("function f(a: number,", ""), ("type T = string |", ""), ("const y = x as", "")])
def test_typescript_incomplete(code, indent):
    assert (classify(code).status, classify(code).indent) == ("incomplete", indent)


def test_typescript_that_cannot_run_is_invalid():
    assert classify("enum E { A }").status == "invalid"  # running it says why
