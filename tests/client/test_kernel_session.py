"""The Python step API: KernelSession against real session kernels, the same ones the command line uses."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_kernel.client import KernelSession, SessionError, StepError, StepResult

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    sys.path.insert(0, str(ROOT / "tests" / "cli"))
    from agent_cli import stop_all

    stop_all(tmp_path)


def test_a_multi_step_task(here: Path) -> None:
    s = KernelSession("agent", cwd=here)
    try:
        first = s.step("globalThis.task = { seen: [] };\nasync function titles(q) {\n  const r = await mcp.demo.search_books({ query: q });\n  return r.results.map((b) => b.title);\n}")
        assert first == StepResult(elapsed_ms=first.elapsed_ms)
        found = s.step("task.seen = await titles('dragon'); task.seen.length")
        titles = s.step("task.seen").value
        assert titles[0] == "Hiccup the Dragon Goes to School"
        assert (found.value, found.text, found.error) == (len(titles), str(len(titles)), None)
        assert [(c["server"], c["tool"], c["ok"]) for c in found.calls] == [("demo", "search_books", True)]
        printed = s.step("console.log('n =', task.seen.length); console.error('warn'); api.display({ shown: true }); task.seen.slice(0, 1)")
        assert (printed.stdout, printed.stderr, printed.displays, printed.value) == (f"n = {len(titles)}\n", "warn\n", ["{ shown: true }"], titles[:1])
        saved = s.step("await api.saveArtifact('seen', task.seen); 'saved'")
        assert (saved.value, [a["name"] for a in saved.artifacts]) == ("saved", ["seen.json"])
        failed = s.step("task.nope.x")
        assert failed.error == StepError(
            "TypeError", "Cannot read properties of undefined (reading 'x')", "TypeError: Cannot read properties of undefined (reading 'x')\n  at cell[6] line 1, col 11\n    task.nope.x\n              ^"
        )
        assert (failed.value, failed.text, failed.ok) == (None, None, False)
        assert s.step("new Map([[1, 2]])").value is None and s.step("new Map([[1, 2]])").text == "Map(1) { 1 => 2 }"
    finally:
        s.close()
    again = KernelSession("agent", cwd=here)  # close() left it running: state is still there
    try:
        assert again.notices == [] and again.step("task.seen[0]").value == "Hiccup the Dragon Goes to School"
    finally:
        again.stop()
    assert not (here / ".mcp2repl" / "sessions" / "agent.json").exists()


def test_a_session_whose_port_is_taken_first_starts_on_other_ports(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ports are picked here and bound by the kernel: one taken in between makes it exit at
    once (not wait forever), and the session starts again on fresh ones."""
    import json
    import socket

    from jupyter_client import connect

    from mcp_kernel.client import registry
    from mcp_kernel.kernel import app

    assert registry.PORTS_TAKEN == app.PORTS_TAKEN
    taken: list[socket.socket] = []
    write = connect.write_connection_file

    def write_then_take_a_port(fname: str, **kw: object) -> object:
        out = write(fname, **kw)  # type: ignore[arg-type]
        if not taken:  # the first kernel's iopub port, bound before the kernel can
            sock = socket.socket()
            sock.bind(("127.0.0.1", json.loads(Path(fname).read_text())["iopub_port"]))
            sock.listen()
            taken.append(sock)
        return out

    monkeypatch.setattr(connect, "write_connection_file", write_then_take_a_port)
    try:
        s = KernelSession("ports", cwd=here)
        try:
            assert s.step("6 * 7").value == 42
        finally:
            s.stop()
    finally:
        for sock in taken:
            sock.close()
    log = (here / ".mcp2repl" / "sessions" / "ports.log").read_text()
    assert len(taken) == 1 and "another process took a port of this kernel's connection file" in log


def test_astep_timeout_and_interrupt_keep_the_session(here: Path) -> None:
    s = KernelSession("i", cwd=here)
    try:
        assert asyncio.run(s.astep("globalThis.k = 3; k * 2")).value == 6
        timed = s.step("while (true) {}", timeout=0.5)
        assert timed.error is not None and timed.error.name == "TimeoutError" and timed.stopped
        threading.Timer(1.0, s.interrupt).start()
        stopped = s.step("while (true) {}")
        assert (stopped.error.name, stopped.error.message) == ("InterruptError", "Execution interrupted")

        async def cancelled() -> str:
            task = asyncio.ensure_future(s.astep("while (true) {}"))
            await asyncio.sleep(1.0)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                return "cancelled"
            return "not cancelled"

        assert asyncio.run(cancelled()) == "cancelled"
        assert s.step("k").value == 3
    finally:
        s.stop()


def test_the_command_line_and_python_share_sessions(here: Path) -> None:
    cli = [str(Path(sys.executable).with_name("mcp2repl")), "--session", "shared", "-e"]
    subprocess.run([*cli, "globalThis.fromShell = 'shell'"], cwd=here, check=True, capture_output=True)
    s = KernelSession("shared", cwd=here)
    try:
        assert s.step("fromShell").value == "shell"
        s.step("globalThis.fromPython = 'python'")
    finally:
        s.close()
    out = subprocess.run([*cli, "fromPython"], cwd=here, check=True, capture_output=True, text=True).stdout
    assert out == "'python'\n"


def test_a_dead_session_raises_until_restarted(here: Path) -> None:
    import json
    import os
    import signal

    s = KernelSession("dead", cwd=here)
    s.step("globalThis.x = 1")
    pid = json.loads((here / ".mcp2repl" / "sessions" / "dead.meta.json").read_text())["pid"]
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(SessionError, match=r"^session 'dead' died during the step; its state is lost\."):
        s.step("while (true) { }", timeout=30)
    s.close()
    with pytest.raises(SessionError, match=r"^session 'dead' is dead: its kernel \(pid \d+\) ended without shutting down"):
        KernelSession("dead", cwd=here)
    fresh = KernelSession("dead", cwd=here, restart=True)
    try:
        assert fresh.notices == ["session 'dead' had died and was restarted: its state was lost"]
        assert fresh.step("typeof x").value == "undefined"
    finally:
        fresh.stop()


def test_example_agent_loop_runs(here: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "agent_loop.py")], cwd=here, capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "step 1: define helpers -> ok"
    assert lines[-1] == "stopped session 'example'"
