"""``mcp2repl --session NAME``: persistent kernels stepped from the shell, attached to, serialised, interrupted.

Listing, stopping, the idle timeout and dead sessions are in test_agent_session_lifecycle.py (two
files, so the two test workers share them).
"""

from __future__ import annotations

import json
import signal
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_cli import Run, alive, clean_env, cli, session_pid, start, stop_all


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
