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
