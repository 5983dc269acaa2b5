"""Issue 23, items 1, 2, 4 and 5: what an agent reads from ``mcp2repl`` is one compact answer per step.

The real command, one-shot: the value once (``value`` when it is JSON, else ``text``), empty fields
left out, the call trace only when asked for, artifact handles once and without host paths, and
the human output by the same rules. Items 3, 6 and 7 (api.print as the answer, per-step options on
a named session, config errors said once) are in test_agent_envelope_options.py: two files, so
the two test workers share them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_cli import Run, clean_env, cli

ROWS = "Array.from({ length: 400 }, (_, i) => ({ id: i, name: 'item ' + i }))"
#: records that fit once their strings are shortened: the fitted view keeps every row (it had no JSON)
WIDE = "Array.from({ length: 30 }, (_, i) => ({ name: 'x' + i, d: 'y'.repeat(1000) }))"


@pytest.mark.timeout(900)
def test_a_trivial_step_is_its_value_and_nothing_else(tmp_path: Path) -> None:
    """Item 1: ``1+1`` printed 131 bytes (value and text, empty fields, elapsed_ms) for a 1-byte answer."""
    assert cli("--json", "-e", "1+1", cwd=tmp_path) == Run(0, '{"ok":true,"value":2}\n', "")
    assert len('{"ok":true,"value":2}') == 21
    assert cli("--json", "-e", "'abc'", cwd=tmp_path).out == '{"ok":true,"value":"abc"}\n'
    assert cli("--json", "-e", "null", cwd=tmp_path).out == '{"ok":true,"value":null}\n'
    assert cli("--json", "-e", "undefined", cwd=tmp_path).out == '{"ok":true}\n'
    assert cli("--json", "-e", "new Map([[1, 2]])", cwd=tmp_path).out == '{"ok":true,"text":"Map(1) { 1 => 2 }"}\n'
    assert cli("--json", "-e", "console.log('hi'); console.error('careful'); [1, 'x', null]", cwd=tmp_path).out == (
        '{"ok":true,"value":[1,"x",null],"stdout":"hi\\n","stderr":"careful\\n"}\n'
    )
    failed = cli("--json", "-e", "null.x", cwd=tmp_path)
    assert failed.code == 1
    assert failed.envelope == {  # the stack holds the frames only: name and message are said once
        "ok": False,
        "error": {"name": "TypeError", "message": "Cannot read properties of null (reading 'x')", "stack": "  at cell[1] line 1, col 6\n    null.x\n         ^"},
    }


@pytest.mark.timeout(900)
def test_a_fitted_result_is_its_view_once_and_the_artifact_once(tmp_path: Path) -> None:
    """Item 1: a fitted result was in both value and text (a 20,000-char limit gave a 42,507-byte envelope)."""
    run = cli("--max-output-chars", "300", "--artifact-dir", "out", "--json", "-e", ROWS, cwd=tmp_path)
    env = run.envelope
    assert run.code == 0 and set(env) == {"ok", "value", "notes", "artifacts"}
    assert env["value"][:2] == [{"id": 0, "name": "item 0"}, {"id": 1, "name": "item 1"}] and env["value"][-1] == "…389 more items"
    assert env["notes"] == ["view cut to 296 of max 300 chars: (root): 389 more items"]
    assert env["artifacts"] == [{"name": "result-cell1.json", "format": "json", "bytes": 18582, "path": "out/result-cell1.json"}]
    assert len(run.out) < 900
    big = cli("--json", "-e", "Array.from({ length: 5000 }, (_, i) => ({ id: i, name: 'item ' + i }))", cwd=tmp_path)
    assert big.code == 0 and len(big.out) < 21_000 and "text" not in big.envelope
    wide = cli("--json", "-e", WIDE, cwd=tmp_path).envelope  # every row kept, strings shortened: value was null
    assert len(wide["value"]) == 30 and wide["value"][0]["name"] == "x0" and "text" not in wide


@pytest.mark.timeout(900)  # seven runs of the command, each starting the demo server: minutes on a loaded machine
def test_the_call_trace_is_opt_in_and_a_failed_or_unfinished_call_is_one_line(tmp_path: Path) -> None:
    """Item 2: 97% of a loop's envelope was the trace, with timings that differ on every run."""
    loop = "let n = 0; for (let i = 0; i < 20; i++) n += (await mcp.demo.get_book({ book_id: 'b01' })).pages > 0; n"
    first, again = cli("--json", "-e", loop, cwd=tmp_path), cli("--json", "-e", loop, cwd=tmp_path)
    assert first == again == Run(0, '{"ok":true,"value":20}\n', "")
    traced = cli("--json", "--trace", "-e", loop, cwd=tmp_path).envelope
    assert len(traced["calls"]) == 20 and traced["calls"][0]["tool"] == "get_book" and traced["calls"][0]["ms"] > 0
    assert traced["elapsed_ms"] > 0
    via_env = cli("--json", "-e", loop, cwd=tmp_path, env=clean_env(MCP2REPL_TRACE="1")).envelope
    assert len(via_env["calls"]) == 20
    code = "try { await mcp.demo.get_book({ book_id: 'zzz' }) } catch (e) {}; mcp.demo.get_book({ book_id: 'b01' }); 1"
    noted = cli("--json", "-e", code, cwd=tmp_path)
    assert noted.envelope == {
        "ok": True,
        "value": 1,
        "notes": ["1 of 2 tool calls failed: demo.get_book (tool_error)", "1 tool call had not finished when the step ended (a missing await?): demo.get_book"],
    }
    human = cli("-e", code, cwd=tmp_path)
    assert human.out == "1\n" and human.err == "".join(f"[mcp2repl] {line}\n" for line in noted.envelope["notes"])


def test_an_artifact_handle_is_there_once_without_host_paths(tmp_path: Path) -> None:
    """Item 4: a handle was in value, text and artifacts[], each with an absolute path, relPath and readWith."""
    run = cli("--json", "-e", "await api.saveArtifact('rows', [1, 2])", cwd=tmp_path)
    assert run.out == '{"ok":true,"value":{"name":"rows.json","format":"json","bytes":12,"path":".mcp2repl/artifacts/rows.json"}}\n'
    both = cli("--json", "-e", "await api.saveArtifact('a.txt', 'hello'); await api.saveArtifact('b', {x: 1}); 1", cwd=tmp_path)
    assert both.envelope == {
        "ok": True,
        "value": 1,
        "artifacts": [
            {"name": "a.txt", "format": "text", "bytes": 5, "path": ".mcp2repl/artifacts/a.txt"},
            {"name": "b.json", "format": "json", "bytes": 12, "path": ".mcp2repl/artifacts/b.json"},
        ],
    }
    assert str(tmp_path) not in run.out + both.out


def test_human_output_says_each_thing_once(tmp_path: Path) -> None:
    """Item 5: the human output follows the same rules (the value once, artifacts once, notes on stderr)."""
    run = cli("-e", "await api.saveArtifact('rows', [1, 2])", cwd=tmp_path)
    assert run == Run(0, 'artifact rows.json (12 B, json); read it with await api.readArtifact("rows.json")\n', "")
    fitted = cli("--max-output-chars", "300", "-e", ROWS, cwd=tmp_path)
    assert fitted.code == 0 and fitted.err == ""
    assert fitted.out.count("result-cell1.json") == 2 and fitted.out.count("view cut to") == 1  # the footer's line, once
    assert fitted.out.endswith('\nfull value: artifact result-cell1.json (18582 bytes) — await api.readArtifact("result-cell1.json")\n')
