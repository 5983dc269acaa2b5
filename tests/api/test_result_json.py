"""api/result_json in-process: which strings travel apart, and the JSON text left behind."""

from __future__ import annotations

import json

import mcp.types as types

from mcp_kernel.api.result_json import APART_MIN_CHARS, result_json


def text_result(text: str, structured: dict | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def parts(body: str) -> dict:
    """The parts that matter here (the SDK adds isError, resultType…)."""
    data = json.loads(body)
    return {k: data[k] for k in ("content", "structuredContent") if k in data}


def test_small_results_are_one_json_text() -> None:
    result = text_result("hi", {"result": "hi"})
    body, apart = result_json(result, lean=False)
    assert apart == [] and parts(body) == {"content": [{"type": "text", "text": "hi"}], "structuredContent": {"result": "hi"}}
    assert parts(result_json(result, lean=True)[0]) == {"structuredContent": {"result": "hi"}}


def test_big_strings_leave_the_json_text() -> None:
    big = "x" * APART_MIN_CHARS
    body, apart = result_json(text_result(big, {"result": big, "n": 1}), lean=False)
    assert parts(body) == {"content": [{"type": "text", "text": None}], "structuredContent": {"result": None, "n": 1}}
    assert [(path, len(text)) for path, text in apart] == [(["content", 0, "text"], APART_MIN_CHARS), (["structuredContent", "result"], APART_MIN_CHARS)]
    body, apart = result_json(text_result(big, {"result": big}), lean=True)
    assert parts(body) == {"structuredContent": {"result": None}} and [p for p, _ in apart] == [["structuredContent", "result"]]


def test_a_string_just_below_the_threshold_stays_inside() -> None:
    body, apart = result_json(text_result("y" * (APART_MIN_CHARS - 1)), lean=False)
    assert apart == [] and len(json.loads(body)["content"][0]["text"]) == APART_MIN_CHARS - 1
