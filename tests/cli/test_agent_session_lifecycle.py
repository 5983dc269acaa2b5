"""``mcp2repl --session NAME`` over a session's life: listed, stopped, ended by its idle timeout, found dead.

(Steps, attaching, serialising and interrupting: test_agent_sessions.py.)
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_cli import Run, cli, session_pid, stop_all, wait_gone


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    stop_all(tmp_path)


def test_sessions_lists_and_stop_ends_kernel_and_servers(here: Path) -> None:
    assert cli("sessions", cwd=here) == Run(0, "no sessions in .mcp2repl/sessions/ (start one with: mcp2repl --session NAME -e CODE)\n", "")
    assert cli("--session", "a", "-e", "await mcp.demo.get_book({ book_id: 'b01' }).then((b) => b.id)", cwd=here) == Run(0, "'b01'\n", "")
    pid = session_pid(here, "a")
    [row] = json.loads(cli("sessions", "--json", cwd=here).out)
    assert (row["name"], row["state"], row["pid"], row["servers"]) == ("a", "running", pid, "demo (stdio) ready, 8 tools")
    assert (row["steps"], row["lastClient"], row["notebook"]) == (1, "cli", ".mcp2repl/sessions/a.ipynb")
    assert row["lastUsed"] >= row["started"]
    table = cli("sessions", cwd=here).out.splitlines()
    assert table[0].split() == ["NAME", "STATE", "PID", "STARTED", "LAST", "USED", "STEPS", "LAST", "BY", "NOTEBOOK", "SERVERS"]
    assert table[1].split()[:3] == ["a", "running", str(pid)] and table[1].endswith("  1      cli      .mcp2repl/sessions/a.ipynb  demo (stdio) ready, 8 tools")
    assert cli("--stop", "a", cwd=here) == Run(0, f"stopped session 'a' (pid {pid})\n", "")
    assert wait_gone(pid)
    assert sorted(p.name for p in (here / ".mcp2repl" / "sessions").iterdir()) == ["a.ipynb", "a.log", "kernels"]  # the record stays
    assert list((here / ".mcp2repl" / "sessions" / "kernels").iterdir()) == []
    assert cli("--stop", "a", cwd=here) == Run(2, "", f"mcp2repl: error: no session named 'a' in {here}/.mcp2repl/sessions\n")


def test_idle_timeout_ends_the_session_and_the_next_step_says_state_was_lost(here: Path) -> None:
    assert cli("--session", "idle", "--idle-timeout", "2", "-e", "globalThis.kept = 1", cwd=here).code == 0
    pid = session_pid(here, "idle")
    assert wait_gone(pid, 60)
    assert not (here / ".mcp2repl" / "sessions" / "kernels" / "idle.json").exists()
    assert "[mcp2repl] no cell for 2 s: the kernel ends (idle timeout)" in (here / ".mcp2repl" / "sessions" / "idle.log").read_text()
    [row] = json.loads(cli("sessions", "--json", cwd=here).out)
    assert (row["name"], row["state"]) == ("idle", "ended")
    assert cli("--session", "idle", "-e", "typeof kept", cwd=here) == Run(
        0,
        "'undefined'\n",
        "[mcp2repl] session 'idle' had ended (idle timeout, or a client shut it down) and was started again: its state was lost\n",
    )


def test_a_dead_session_is_reported_and_restarted_only_when_asked(here: Path) -> None:
    assert cli("--session", "d", "-e", "globalThis.x = 1", cwd=here).code == 0
    pid = session_pid(here, "d")
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid)
    run = cli("--session", "d", "-e", "typeof x", cwd=here)
    assert run.code == 2 and run.out == ""
    assert run.err.startswith(
        f"mcp2repl: error: session 'd' is dead: its kernel (pid {pid}) ended without shutting down, and its state is lost. "
        "Start a new one with --restart (KernelSession(..., restart=True)), or remove it with --stop.\n"
    )
    assert "killed by signal 9" in run.err or "SIGKILL" in run.err or "ended" in run.err
    assert cli("--session", "d", "--restart", "-e", "typeof x", cwd=here) == Run(
        0, "'undefined'\n", "[mcp2repl] session 'd' had died and was restarted: its state was lost\n"
    )
    assert cli("--session", "d", "--restart", "--quiet", "-e", "1", cwd=here) == Run(0, "1\n", "")


NOISE = ("To connect another client", "--existing", "without encryption", "NOTE: When using", "Ctrl-C will not work")


def test_a_dead_session_is_said_once_on_one_stream_without_the_kernels_banner(here: Path) -> None:
    """Issue 23, item 9: the message came on stdout and stderr, with IPython's banner and ipykernel's TCP warning as "last words"."""
    assert cli("--session", "d9", "-e", "1", cwd=here).code == 0
    pid = session_pid(here, "d9")
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid)
    run = cli("--session", "d9", "--json", "-e", "1", cwd=here)
    assert (run.code, run.err) == (2, "")  # --json: the envelope alone
    envelope = json.loads(run.out)
    message = envelope["error"]["message"]
    assert (envelope["ok"], envelope["error"]["name"]) == (False, "SessionError")
    assert message.startswith(f"session 'd9' is dead: its kernel (pid {pid}) ended without shutting down")
    assert "It left no last words: something outside it killed it" in message  # kill -9 said nothing
    assert not [n for n in NOISE if n in message], message
    again = cli("--session", "d9", "-e", "1", cwd=here)  # the run folder's words were reported: the log's tail
    assert again.code == 2 and again.out == "" and again.err.count("is dead") == 1
    assert not [n for n in NOISE if n in again.err], again.err
