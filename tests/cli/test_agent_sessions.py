"""``mcp2repl --session NAME``: persistent kernels stepped from the shell, attached to, listed, stopped."""

from __future__ import annotations

import json
import os
import signal
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_cli import Run, alive, clean_env, cli, session_pid, start, stop_all, wait_gone


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    stop_all(tmp_path)


def test_state_and_connections_persist_between_commands(here: Path) -> None:
    assert cli("--session", "s", "-e", "globalThis.task = { facts: [] }; task", cwd=here) == Run(0, "{ facts: [] }\n", "")
    env = clean_env(MCP2REPL_SESSION="s")
    step = "task.facts.push((await mcp.demo.get_book({ book_id: 'b01' })).title); task.facts.length"
    assert cli("-e", step, cwd=here, env=env) == Run(0, "1\n", "")
    assert cli("-e", "-", cwd=here, env=env, stdin="return task.facts") == Run(0, "[ 'The Lantern Cartographer' ]\n", "")
    calls = cli("--json", "--trace", "-e", "await mcp.demo.get_book({ book_id: 'b02' }).then((b) => b.id)", cwd=here, env=env).envelope
    assert (calls["value"], [(c["server"], c["tool"], c["ok"]) for c in calls["calls"]]) == ("b02", [("demo", "get_book", True)])
    failed = cli("-e", "task.missing.x", cwd=here, env=env)
    assert failed == Run(1, "", "TypeError: Cannot read properties of undefined (reading 'x')\n  at cell[5] line 1, col 14\n    task.missing.x\n                 ^\n")


def test_the_session_is_an_ordinary_kernel_jupyter_clients_attach_to(here: Path) -> None:
    from jupyter_client import BlockingKernelClient

    assert cli("--session", "s", "-e", "globalThis.shared = 41", cwd=here).code == 0
    conn = here / ".mcp2repl" / "sessions" / "kernels" / "s.json"
    info = json.loads(conn.read_text())
    assert (info["ip"], info["transport"], stat.S_IMODE(conn.stat().st_mode)) == ("127.0.0.1", "tcp", 0o600)
    assert (stat.S_IMODE(conn.parent.stat().st_mode) & 0o777, stat.S_IMODE(conn.parent.parent.stat().st_mode)) == (0o700, 0o700)
    kc = BlockingKernelClient(connection_file=str(conn))
    kc.load_connection_file()
    kc.start_channels()
    try:
        reply = kc.execute_interactive("shared += 1; shared", timeout=30)
        assert reply["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
    assert cli("--session", "s", "-e", "shared", cwd=here) == Run(0, "42\n", "")


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


def test_concurrent_steps_are_serialised(here: Path) -> None:
    assert cli("--session", "c", "-e", "globalThis.log = []", cwd=here).code == 0
    first = start("--session", "c", "-e", "log.push('a1'); await sleep(1500); log.push('a2'); 'first'", cwd=here)
    held_lock(here, "c")  # the first step holds the session
    second = start("--session", "c", "-e", "log.push('b'); 'second'", cwd=here)
    assert [p.communicate(timeout=60) for p in (first, second)] == [("'first'\n", ""), ("'second'\n", "")]
    assert cli("--session", "c", "-e", "log", cwd=here) == Run(0, "[ 'a1', 'a2', 'b' ]\n", "")


def test_ctrl_c_interrupts_the_step_not_the_session(here: Path) -> None:
    assert cli("--session", "i", "-e", "globalThis.n = 5", cwd=here).code == 0
    proc = start("--session", "i", "-e", "while (true) {}", cwd=here)
    held_lock(here, "i")  # the step runs (Ctrl-C before it is the command's own: "mcp2repl: interrupted")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    # the press lands in the loop, or (on a loaded machine) while the kernel still prepares the cell: no frame yet
    landed = ("InterruptError: Execution interrupted\n  at cell[2] line 1, col 15\n    while (true) {}\n                  ^\n", "InterruptError: Execution interrupted\n")
    assert (proc.returncode, out) == (3, "") and err in landed, err
    assert alive(session_pid(here, "i"))
    assert cli("--session", "i", "--timeout", "0.5", "-e", "for (;;) {}", cwd=here) == Run(
        3,
        "",
        "TimeoutError: the step ran past its time limit of 0.5 s and was interrupted (state is kept)\n  at cell[3] line 1, col 11\n    for (;;) {}\n              ^\n",
    )
    assert cli("--session", "i", "-e", "n + 1", cwd=here) == Run(0, "6\n", "")


def test_load_and_library_in_a_session(here: Path) -> None:
    (here / "helpers.js").write_text("function double(x) { return 2 * x; }\n")
    assert cli("--session", "l", "--load", "helpers.js", "-e", "double(21)", cwd=here) == Run(0, "42\n", "")
    assert cli("--session", "l", "-e", "(await api.load('helpers.js')).exports", cwd=here) == Run(0, "[ 'double' ]\n", "")
    docs = cli("--session", "l", "--library", "book by id", "--limit", "1", cwd=here)
    assert docs.code == 0 and docs.out.startswith("/**") and "get_book" in docs.out


def test_a_busy_session_says_who_holds_it_and_gives_up_at_the_timeout(here: Path) -> None:
    assert cli("--session", "b", "-e", "1", cwd=here).code == 0
    holder = start("--session", "b", "-e", "while (true) await sleep(100)", cwd=here)
    held = held_lock(here, "b")
    since = time.strftime("%H:%M:%S", time.localtime(held["since"]))
    busy = f"session 'b' is busy: pid {holder.pid} (mcp2repl --session b) has been running a step since {since}"
    assert cli("--session", "b", "--timeout", "1", "-e", "2", cwd=here) == Run(3, "", f"TimeoutError: {busy}\n")
    env = cli("--session", "b", "--timeout", "1", "--json", "-e", "2", cwd=here)
    assert (env.code, env.envelope["error"]) == (3, {"name": "TimeoutError", "message": busy, "stack": ""})
    waiter = start("--session", "b", "-e", "3", cwd=here)  # no timeout: it waits, and says so once
    assert read_line(waiter.stderr) == f"[mcp2repl] {busy}; waiting for it\n"
    impatient = start("--session", "b", "-e", "4", cwd=here)
    assert read_line(impatient.stderr) == f"[mcp2repl] {busy}; waiting for it\n"
    impatient.send_signal(signal.SIGINT)  # Ctrl-C ends the wait; the step never runs
    assert (impatient.communicate(timeout=60), impatient.returncode) == (
        ("", f"InterruptError: interrupted while waiting ({busy}): the step did not run\n"),
        3,
    )
    holder.send_signal(signal.SIGINT)
    assert holder.communicate(timeout=60)[1].startswith("InterruptError: Execution interrupted")
    assert waiter.communicate(timeout=60) == ("3\n", "")


def held_lock(cwd: Path, name: str) -> dict[str, object]:
    """What the step holding session ``name``'s lock wrote into it (its pid, what it runs, since when)."""
    lock = cwd / ".mcp2repl" / "sessions" / f"{name}.lock"
    deadline = time.monotonic() + 60
    while not (text := lock.read_text() if lock.exists() else ""):
        assert time.monotonic() < deadline, f"no step held {lock} within 60 s"
        time.sleep(0.05)
    return json.loads(text)


def read_line(stream: object, timeout: float = 60) -> str:
    """One line from a child's pipe, or fail after ``timeout`` seconds saying what was awaited."""
    import select

    ready, _, _ = select.select([stream], [], [], timeout)
    assert ready, f"no line on the child's stderr within {timeout:g} s"
    return stream.readline()  # type: ignore[attr-defined]
