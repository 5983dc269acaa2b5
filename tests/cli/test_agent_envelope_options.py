"""Issue 23, items 3, 6 and 7: ``api.print`` as the answer, per-step options on a named session's
kernel, and config errors said once before anything runs (items 1, 2, 4, 5: test_agent_envelope.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_cli import Run, clean_env, cli, config, fixture, stop_all
from test_agent_envelope import ROWS


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    stop_all(tmp_path)


@pytest.mark.timeout(900)
def test_api_print_and_list_tools_as_the_answer(tmp_path: Path) -> None:
    """Item 3: ``return await api.print(x)`` gave value null and the view only in displays, as text."""
    code = "return await api.print([{ a: 1 }, { a: 2 }])"
    assert cli("--json", "-e", code, cwd=tmp_path).out == '{"ok":true,"value":[{"a":1},{"a":2}]}\n'
    assert cli("--json", "-e", "await api.print({ a: 1, b: [1, 2] }, { projection: { a: true } })", cwd=tmp_path).out == '{"ok":true,"value":{"a":1}}\n'
    assert cli("-e", code, cwd=tmp_path) == Run(0, "a\n─\n1\n2\n", "")  # a person sees the table once
    cut = cli("--json", "-e", f"await api.print({ROWS}, {{ maxChars: 300 }})", cwd=tmp_path).envelope
    assert set(cut) == {"ok", "value", "notes", "artifacts"} and cut["value"][-1] == "…389 more items"
    shown = cli("--json", "-e", "await api.print([1, 2]); await api.print({ b: 2 }); 'done'", cwd=tmp_path).out
    assert shown == '{"ok":true,"value":"done","displays":[[1,2],{"b":2}]}\n'  # displays as JSON data, each once
    tools = cli("--json", "--max-output-chars", "2000", "-e", "await api.listTools()", cwd=tmp_path).envelope
    assert [t["name"] for t in tools["value"] if isinstance(t, dict)][:2] == ["book_stats_json", "get_author"] and "text" not in tools


@pytest.mark.timeout(900)
def test_per_step_options_apply_and_fixed_ones_say_how_to_change_them(here: Path) -> None:
    """Item 6: on an existing session --max-output-chars, MCP2REPL_MAX_OUTPUT_CHARS, --server and --config were ignored."""
    config(here, {"a": fixture("marked_server.py", MARK_FILE=str(here / "a.started")), "b": fixture("marked_server.py", MARK_FILE=str(here / "b.started"))})
    assert cli("--session", "s", "--server", "a", "-e", "Object.keys(mcp)", cwd=here) == Run(0, "[ 'a' ]\n", "")
    small = cli("--session", "s", "--server", "a", "--max-output-chars", "300", "--json", "-e", ROWS, cwd=here).envelope
    assert small["notes"] == ["view cut to 296 of max 300 chars: (root): 389 more items"]
    via_env = cli("--session", "s", "--json", "-e", ROWS, cwd=here, env=clean_env(MCP2REPL_MAX_OUTPUT_CHARS="300")).envelope
    assert via_env["notes"] == ["view cut to 296 of max 300 chars: (root): 389 more items"]
    whole = cli("--session", "s", "--json", "-e", ROWS + ".length", cwd=here)  # the next step has the session's limit again
    assert whole.out == '{"ok":true,"value":400}\n'
    assert len(cli("--session", "s", "--json", "-e", ROWS, cwd=here).envelope["value"]) == 400
    other = cli("--session", "s", "--server", "b", "-e", "1", cwd=here)
    assert other == Run(
        2, "", "mcp2repl: error: session 's' was started with --server a, not b: it keeps the options it started with; "
        "--restart starts it afresh with these (its state is dropped)\n"
    )
    (here / "other.json").write_text('{"mcpServers": {}}')
    changed = cli("--session", "s", "--config", "other.json", "-e", "1", cwd=here)
    assert changed.code == 2 and changed.err.startswith("mcp2repl: error: session 's' was started without --config, not other.json: ")
    assert cli("--session", "s", "--config", "other.json", "--restart", "-e", "Object.keys(mcp)", cwd=here).out == "[]\n"
    assert cli("--session", "s", "--config", "other.json", "-e", "1", cwd=here) == Run(0, "1\n", "")  # the same options: silent


def test_a_step_time_limit_applies_in_the_kernel(here: Path) -> None:
    """Item 6: --timeout of a step on an existing session is the kernel's limit for that cell only."""
    assert cli("--session", "t", "-e", "globalThis.n = 1", cwd=here).code == 0
    run = cli("--session", "t", "--timeout", "0.5", "-e", "for (;;) {}", cwd=here)
    message = "the step ran past its time limit of 0.5 s and was interrupted (state is kept)"
    assert run == Run(3, "", f"TimeoutError: {message}\n  at cell[2] line 1, col 11\n    for (;;) {{}}\n              ^\n")
    assert cli("--session", "t", "-e", "await sleep(1000); n", cwd=here) == Run(0, "1\n", "")


@pytest.mark.parametrize("session", [False, True])
def test_a_missing_config_file_is_a_usage_error_before_anything_starts(tmp_path: Path, session: bool) -> None:
    """Item 7: ``--config /nonexistent.json -e 1`` printed 1 and exited 0."""
    where = ["--session", "s"] if session else []
    message = "mcp2repl: error: --config /nonexistent.json: no such file\n"
    assert cli(*where, "--config", "/nonexistent.json", "-e", "1", cwd=tmp_path) == Run(2, "", message)
    via_env = cli(*where, "-e", "1", cwd=tmp_path, env=clean_env(MCP2REPL_CONFIG="/nonexistent.json"))
    assert via_env == Run(2, "", "mcp2repl: error: MCP2REPL_CONFIG /nonexistent.json: no such file\n")
    (tmp_path / "folder.json").mkdir()
    assert cli(*where, "--config", "folder.json", "-e", "1", cwd=tmp_path) == Run(2, "", "mcp2repl: error: --config folder.json: is a folder, not a file\n")
    assert not (tmp_path / ".mcp2repl" / "sessions" / "s.meta.json").exists()  # no kernel was started


def test_a_broken_config_in_a_one_shot_says_what_a_session_says(here: Path) -> None:
    """Item 7: a one-shot gave a bare TypeError where a session named the file, line and cause."""
    (here / "mcp.json").write_text('{"mcpServers": {"fs": {"command": "x"},\n}')
    code = "await mcp.fs.list_directory({ path: '.' })"
    once, step = cli("-e", code, cwd=here), cli("--session", "s", "-e", code, cwd=here)
    assert once.code == step.code == 1
    assert once.err == step.err
    assert "mcp.json: invalid JSON at line 2" in once.err and "TypeError: Cannot read properties of undefined" not in once.err
    servers = cli("--json", "-e", "(await api.servers()).map((s) => s.state)", cwd=here)
    assert servers.envelope["value"] == ["config problem"] and "RuntimeError" not in servers.out
