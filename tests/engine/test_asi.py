"""insert_semicolons: the automatic semicolons tree-sitter-javascript misses, and nothing else."""

from __future__ import annotations

import pytest

from mcp_kernel.engine.asi import insert_semicolons


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("let t\n`value`", "let t;\n`value`"),
        ("let t        \n(f)()", "let t;        \n(f)()"),
        ("var t\n/re/.test(1)", "var t;\n/re/.test(1)"),
        ("let t /* a ` and a ( */\n(f)()", "let t; /* a ` and a ( */\n(f)()"),
        ("let s = 'a // b'\nlet t\n[1].length", "let s = 'a // b'\nlet t;\n[1].length"),
        ("class C {\n  x\n  ['y'] = 2\n}", "class C {\n  x;\n  ['y'] = 2\n}"),
        ("let a\n`x`\nlet b\n`y`", "let a;\n`x`\nlet b;\n`y`"),
        ("let é\r\n`x`", "let é;\r\n`x`"),
    ],
)
def test_the_missing_semicolon_goes_after_the_last_token(source: str, expected: str) -> None:
    assert insert_semicolons(source) == expected


@pytest.mark.parametrize("source", ["let x = 1\n(f)()", "a\n(b)", "const ok = 1", "let t // a line comment ends it\n`v`"])
def test_code_that_parses_is_left_alone(source: str) -> None:
    assert insert_semicolons(source) is None


@pytest.mark.parametrize("source", ["foo(", "let = 1", "a b c", "}"])
def test_code_no_semicolon_can_fix_gives_none(source: str) -> None:
    assert insert_semicolons(source) is None
