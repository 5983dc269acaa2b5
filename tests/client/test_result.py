"""The --json envelope (client/envelope.py): always valid UTF-8 JSON, only fields that say something, each bounded."""

from __future__ import annotations

import json

from mcp_kernel.client.result import DEFAULT_OUTPUT_LIMIT, Collector, StepError, StepResult, envelope_json


def test_the_default_limit_is_the_kernels() -> None:
    from mcp_kernel.session import SessionOptions

    assert DEFAULT_OUTPUT_LIMIT == SessionOptions().max_output_chars == 20000


def test_lone_surrogates_are_escaped_and_pairs_survive() -> None:
    line = envelope_json(StepResult(value="\ud800", text="'\\uD800'", stdout="a\udc00b 😀", displays=["\ud83d"], is_json=True), 200)
    line.encode("utf-8")  # no surrogate is left raw
    assert '"value":"\\ud800"' in line and '"stdout":"a\\udc00b 😀"' in line
    env = json.loads(line)
    assert (env["value"], env["stdout"], env["displays"]) == ("\ud800", "a\udc00b 😀", ["\ud83d"])
    assert json.loads(envelope_json(StepResult(error=StepError("Error", "\udfff", "Error: \udfff"))))["error"]["message"] == "\udfff"


def test_a_value_over_the_limit_becomes_its_cut_text_form_naming_the_artifact() -> None:
    saved = {"name": "result-cell1.json", "format": "json", "bytes": 12890, "path": ".mcp2repl/artifacts/result-cell1.json"}
    rows = [{"id": i} for i in range(1000)]
    env = StepResult(value=rows, is_json=True, text="[ { id: 0 }, … 999 more items ]", artifacts=[saved]).envelope(300)
    assert "value" not in env  # the answer once: as text when its JSON does not fit
    assert env["text"] == (
        "[ { id: 0 }, … 999 more items ]\n[mcp2repl: the value's JSON has 10,891 characters, more than the output limit of 300: "
        "this is its text form; the full value is in the step's artifact .mcp2repl/artifacts/result-cell1.json]"
    )
    cut = StepResult(value="x" * 5000, is_json=True, text="'" + "x" * 5000 + "'").envelope(300)
    assert cut == {"ok": True, "text": "'" + "x" * 799 + (
        "\n[mcp2repl: the value's JSON has 5,002 characters, more than the output limit of 300: this is its text form, "
        "4,202 more characters left out]"
    )}
    fitted = "[ { id: 0 }, … ]" + "." * 300 + "\nfull value: artifact result-cell1.json (12890 bytes) — await api.readArtifact(\"result-cell1.json\")"
    assert StepResult(text=fitted).envelope(300) == {"ok": True, "text": fitted}  # the kernel's footer under its view is kept
    assert StepResult(value=rows[:3], is_json=True, text="[ … ]").envelope(300) == {"ok": True, "value": rows[:3]}


def test_only_fields_that_say_something_and_the_answer_once() -> None:
    assert envelope_json(StepResult(value=2, is_json=True, text="2", elapsed_ms=12.5)) == '{"ok":true,"value":2}'
    assert envelope_json(StepResult(value=None, is_json=True, text="null")) == '{"ok":true,"value":null}'
    assert envelope_json(StepResult()) == '{"ok":true}'
    assert envelope_json(StepResult(text="Map(0) {}")) == '{"ok":true,"text":"Map(0) {}"}'
    error = StepError("TypeError", "x is not a function", "TypeError: x is not a function\n  at cell[1] line 1, col 1\n    x()\n    ^")
    assert StepResult(error=error).envelope() == {
        "ok": False,
        "error": {"name": "TypeError", "message": "x is not a function", "stack": "  at cell[1] line 1, col 1\n    x()\n    ^"},
    }
    busy = StepError("TimeoutError", "session 's' is busy", "TimeoutError: session 's' is busy")
    assert StepResult(error=busy).envelope()["error"]["stack"] == ""
    handle = {"name": "rows.json", "kind": "artifact", "bytes": 12, "format": "json", "readWith": "…", "path": "a/rows.json", "created": "now"}
    compact = {"name": "rows.json", "format": "json", "bytes": 12, "path": "a/rows.json"}
    answer = StepResult(value=handle, is_json=True, text="artifact rows.json …", artifacts=[compact])
    assert answer.envelope() == {"ok": True, "value": compact}  # the handle once, compact
    printed = StepResult(value=[1], is_json=True, displays=["x", "[ 1 ]"], display_data=[None, [1]], answered_by=1)
    assert printed.envelope() == {"ok": True, "value": [1], "displays": ["x"]}
    traced = StepResult(value=1, is_json=True, calls=[{"tool": "t"}], elapsed_ms=3.25, traced=True).envelope()
    assert traced == {"ok": True, "value": 1, "calls": [{"tool": "t"}], "elapsed_ms": 3.2}


def test_every_field_is_bounded() -> None:
    big = "z" * 100_000
    calls = [{"server": "s", "tool": "t", "ok": True, "ms": 1.0, "bytesIn": 1, "bytesOut": 1, "error": None}] * 1000
    result = StepResult(
        stdout=big, stderr=big, displays=[big, "tail"], calls=calls, artifacts=[{"name": f"a{i}.json"} for i in range(1000)],
        error=StepError("Error", big, "Error: " + big + "\n  at cell[1] line 1"), notes=[big], traced=True,
    )
    line = envelope_json(result, 1000)
    assert len(line) < 8 * 1000 + 3 * 20000  # notes, calls and artifacts have a floor of their own

    env = json.loads(line)
    note = "\n[mcp2repl: 99,000 more characters left out]"
    assert (env["stdout"], env["stderr"], env["error"]["message"]) == ("z" * 1000 + note, "z" * 1000 + note, "z" * 1000 + note)
    assert env["error"]["stack"] == "  at cell[1] line 1"
    assert env["displays"] == ["z" * 1000 + note, "[mcp2repl: 1 more display left out]"]
    assert env["notes"] == ["z" * 1000 + note]
    assert 100 < len(env["calls"]) < 1000 and env["calls"][-1] == {"omitted": 1000 - len(env["calls"]) + 1}
    assert env["artifacts"][-1] == {"omitted": 1000 - len(env["artifacts"]) + 1}
    failed = [{"server": "s", "tool": "t", "ok": False, "error": big}]
    assert StepResult(calls=failed).envelope(1000, trace=True)["calls"] == [{**failed[0], "error": "z" * 1000 + note}]
    shown = StepResult(displays=["a", "b"], display_data=[{"k": "v" * 2000}, None]).envelope(1000)["displays"]
    assert shown[0].startswith('{"k":"vvv') and shown[0].endswith(" more characters left out]")  # JSON that does not fit: its cut text


def test_a_tool_errors_code_survives_the_iopub_error_coming_after_the_reply() -> None:
    """The shell reply and IOPub's error travel on two sockets: on a loaded machine the reply can come first."""
    error = {"ename": "ToolError", "evalue": "not run", "traceback": ["ToolError: not run"]}
    for order in ("reply first", "iopub first"):
        got = Collector()
        if order == "iopub first":
            got.iopub("error", error)
        got.reply({"status": "error", **error}, {"mcp2repl": {"code": "declined", "artifacts": []}})
        if order == "reply first":
            got.iopub("error", error)
        assert json.loads(envelope_json(got.finish(1.0)))["error"] == {"name": "ToolError", "message": "not run", "code": "declined", "stack": ""}, order
