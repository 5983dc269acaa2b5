"""Finding the name under the cursor, in-process: the same answers as before, and in linear time."""

from __future__ import annotations

import time

import pytest

from mcp_kernel.api import completion as tool_completion
from mcp_kernel.engine.introspection import _chain_before, _name_at
from mcp_kernel.servers.catalog import Catalog


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("Math.ma", (["Math"], "ma", 5)),
        ("a.b?.c.", (["a", "b", "c"], "", 7)),
        ("x = foo . bar", (["foo"], "bar", 10)),
        ("fo", ([], "fo", 0)),
        ("1.", None),  # a decimal point, not a member
        ("'a.b", None),  # inside a string
        ("x // a.", None),  # inside a comment
        ("caf\u00e9.x", (["caf\u00e9"], "x", 5)),
    ],
)
def test_chain_before(code: str, expected: object) -> None:
    assert _chain_before(code, len(code)) == expected


def test_name_at_the_cursor_or_the_callee() -> None:
    assert _name_at("Math.max(1, 2)", 6) == ["Math", "max"]
    assert _name_at("console.log(1, ", 15) == ["console", "log"]
    assert _name_at("(1 + 2)", 7) is None


@pytest.mark.parametrize("tail", ["", " ", "(", "!"])
def test_a_long_chain_answers_at_once(tail: str) -> None:
    code = "a." * 100_000 + "a" + tail
    started = time.monotonic()
    _chain_before(code, len(code))
    _name_at(code, len(code))
    tool_completion.complete(code, len(code), Catalog())
    tool_completion.inspect(code, len(code), Catalog())
    assert time.monotonic() - started < 10  # was 51 s (completion) and 119 s (inspect) on 2 cores


def test_typescript_reads_as_the_javascript_it_runs_as() -> None:
    assert _chain_before("book!.ti", 8) == (["book"], "ti", 6)  # a non-null assertion
    assert _chain_before("a.b!.c!.", 8) == (["a", "b", "c"], "", 8)
    assert _chain_before("const r: Foo = mcp.demo.", 24) == (["mcp", "demo"], "", 24)
    # Shift-Tab inside a generic call inspects the callee
    assert _name_at("api.project<Book[]>(res, ", 25) == ["api", "project"]
    assert _name_at("f<Map<string, number>>(", 23) == ["f"]
    assert _name_at("(a < b) > (c, ", 14) is None
