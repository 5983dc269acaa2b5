"""The Python step API: KernelSession against real session kernels, the same ones the command line uses."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_kernel.client import KernelSession, SessionError, StepError, StepResult
from mcp_kernel.client.wire import KernelConnection

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
        found = s.step("task.seen = await titles('dragon'); task.seen.length", trace=True)
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
    assert not (here / ".mcp2repl" / "sessions" / "kernels" / "agent.json").exists()


def test_a_steps_data_reaches_the_kernel_beside_the_code(here: Path) -> None:
    """``step(code, data=…)``: the execute request carries it in its metadata; the kernel binds it for that step."""
    s = KernelSession("data", cwd=here)
    seen: list[str] = []
    try:
        result = s.step("console.log('got', data.items.length); data.items.map((x) => x * 2)", data={"items": [1, 2, 3]}, on_output=lambda kind, content: seen.append(kind))
        assert (result.value, result.stdout) == ([2, 4, 6], "got 3\n")
        assert "stream" in seen and "execute_result" in seen
        assert s.step("typeof data").value == "undefined"
    finally:
        s.stop()


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


def test_a_busy_session_gives_up_at_the_step_timeout_and_says_who_holds_it(here: Path) -> None:
    import json
    import time

    holder = KernelSession("busy", cwd=here)
    waiter = KernelSession("busy", cwd=here)
    try:
        running = threading.Thread(target=holder.step, args=("while (true) await sleep(100)",))
        running.start()
        sys.path.insert(0, str(ROOT / "tests" / "cli"))
        from test_agent_sessions import held_lock

        since = time.strftime("%H:%M:%S", time.localtime(held_lock(here, "busy")["since"]))
        busy = f"session 'busy' is busy: pid {os.getpid()} (the Python step API) has been running a step since {since}"
        assert waiter.step("1", timeout=1).error == StepError("TimeoutError", busy, f"TimeoutError: {busy}")
        cli = [str(Path(sys.executable).with_name("mcp2repl")), "--session", "busy", "--json", "--timeout", "1", "-e", "1"]
        shell = subprocess.run(cli, cwd=here, capture_output=True, text=True, timeout=120)
        assert (shell.returncode, json.loads(shell.stdout)["error"]["message"]) == (3, busy)
        holder.interrupt()
        running.join(60)
        assert waiter.step("2", timeout=30).value == 2
    finally:
        holder.interrupt()
        holder.close()
        waiter.stop()


def test_example_agent_loop_runs(here: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "agent_loop.py")], cwd=here, capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "step 1: define helpers -> ok"
    assert lines[-1] == "stopped session 'example'"


def test_the_kernel_applies_a_steps_own_limits_and_sends_the_trace_only_when_asked(here: Path) -> None:
    """Issue 23, items 2 and 6: limits of one step travel in the request's metadata and the kernel applies
    them to that cell only; the reply carries the call trace only for a step that asked for it."""
    from mcp_kernel.client.wire import StepOptions, step_metadata, step_request

    s = KernelSession("limits", cwd=here)
    try:
        conn = s.channel
        assert isinstance(conn, KernelConnection)
        msg_id = conn.send(conn.shell, "execute_request", step_request("for (;;) {}"), step_metadata(options=StepOptions(timeout=0.5)))
        reply = _reply(conn, msg_id)  # no client-side deadline at all: the kernel's limit ended it
        assert (reply["content"]["ename"], reply["content"]["evalue"]) == ("TimeoutError", "Cell time limit reached")
        rows = "Array.from({ length: 400 }, (_, i) => ({ id: i }))"
        small = s.step(rows, max_output_chars=300)
        assert small.notes == ["view cut to 299 of max 300 chars: (root): 371 more items"] and len(small.artifacts) == 1
        assert len(s.step(rows).value) == 400  # the next step has the session's limit again
        printed = s.step("return await api.print([{ a: 1 }, { a: 2 }])")  # item 3: the print is the answer, through the kernel too
        assert (printed.envelope(), printed.displays) == ({"ok": True, "value": [{"a": 1}, {"a": 2}]}, ["a\n─\n1\n2"])
        loop = "for (let i = 0; i < 3; i++) await mcp.demo.get_book({ book_id: 'b01' }); 'done'"
        assert s.step(loop).calls == [] and s.step(loop).envelope() == {"ok": True, "value": "done"}
        traced = s.step(loop, trace=True)
        assert [c["tool"] for c in traced.calls] == ["get_book"] * 3 and set(traced.envelope()) == {"ok", "value", "calls", "elapsed_ms"}
        from jupyter_client import BlockingKernelClient  # a notebook's client: its replies keep the calls

        kc = BlockingKernelClient(connection_file=str(s.files.conn))
        kc.load_connection_file()
        kc.start_channels()
        try:
            reply = kc.execute_interactive(loop, timeout=60)
            assert [c["tool"] for c in reply["metadata"]["mcp2repl"]["calls"]] == ["get_book"] * 3
        finally:
            kc.stop_channels()
    finally:
        s.stop()


def _reply(conn: KernelConnection, msg_id: str, timeout: float = 60) -> dict:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if conn.shell.poll(50):
            msg = conn._recv(conn.shell)
            if msg and msg["parent_header"].get("msg_id") == msg_id:
                return msg
    raise AssertionError(f"no execute_reply within {timeout:g} s")
