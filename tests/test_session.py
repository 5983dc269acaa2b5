"""The Session in-process, no Jupyter: a cell with a tool call, output routing, banner lines, introspection.

The last test proves the Session runs with ipykernel unimportable, which is what the command line
and the Python step API rely on.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ECHO, ROOT, SessionHarness


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    config = {"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}, "ghost": {"command": "/nonexistent/ghost"}}}
    harness = SessionHarness(tmp_path_factory.mktemp("session"), config)
    yield harness
    harness.close()


def test_a_cell_with_a_tool_call(s: SessionHarness) -> None:
    result, out = s.run("console.log('calling'); await mcp.echo.add({ a: 1, b: 2 })")
    assert result.error is None
    assert result.data == {"text/plain": "{ sum: 3 }", "application/json": {"sum": 3}}
    assert out.text() == "calling\n"
    [call] = result.calls
    assert (call["server"], call["tool"], call["ok"]) == ("echo", "add", True) and call["bytesIn"] > 0


def test_errors_come_back_typed_with_cell_frames(s: SessionHarness) -> None:
    result, _ = s.run("const f = () => { throw new RangeError('no') };\nf()", timeout=30)
    assert (result.error.name, result.error.message) == ("RangeError", "no")
    assert result.error.traceback[0] == "RangeError: no"
    assert result.error.traceback[1] == "  at cell[2] line 1, col 25, in f"


def test_cells_are_numbered_and_globals_persist(s: SessionHarness) -> None:
    s.run("const kept = 41")
    assert s.value("kept + 1") == "42"


def test_late_output_goes_to_the_cell_that_made_it(s: SessionHarness) -> None:
    _, first = s.run("setTimeout(() => console.log('late'), 100); 1")
    _, second = s.run("await sleep(400); 2")
    assert first.text() == "late\n" and second.text() == ""


def test_tool_errors_and_argument_checks(s: SessionHarness) -> None:
    result, _ = s.run("await mcp.echo.fail({ message: 'nope' })")
    assert (result.error.name, result.error.message) == ("ToolError", "nope")
    result, _ = s.run("await mcp.echo.add({ a: 'x', b: 1 })")
    assert result.error.name == "TypeError"
    assert result.error.message.startswith('mcp.echo.add: argument "a" must be number, got string "x"\n  Signature: add(args: {')
    assert result.calls == []  # refused before the call


def test_server_lines_name_every_server_and_its_state(s: SessionHarness) -> None:
    s.run("await api.servers({ wait: true })")
    lines = s.session.server_lines()
    assert lines[0] == f"MCP servers from {s.session.options.cwd / 'mcp.json'}:"
    assert lines[1].startswith("  echo (stdio) ready, ") and lines[1].endswith(" tools")
    assert lines[2].startswith("  ghost (stdio) error: ")


def test_completion_and_inspection(s: SessionHarness) -> None:
    found = s.call(s.session.complete("mcp.echo.ad", 11))
    assert found.matches == ["add"]
    assert s.call(s.session.complete("Math.ma", 7)).matches == ["max"]
    doc = s.call(s.session.inspect("mcp.echo.add", 12))
    assert doc is not None and "async function add(" in doc["text/plain"]
    assert s.session.is_complete("function f(").status == "incomplete"


def test_interrupt_stops_a_spinning_cell_and_keeps_globals(s: SessionHarness) -> None:
    s.run("const survivor = 'yes'")
    future = __import__("asyncio").run_coroutine_threadsafe(s.session.execute("await null; while (true) {}"), s.loop)
    time.sleep(0.3)
    s.session.interrupt()
    result = future.result(30)
    assert (result.error.name, result.error.message) == ("InterruptError", "Execution interrupted")
    assert s.value("survivor") == "'yes'"


def test_a_session_runs_without_ipykernel(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}}))
    script = textwrap.dedent(
        """
        import asyncio, sys
        from pathlib import Path

        class Refuse:
            def find_spec(self, name, path=None, target=None):
                if name == "ipykernel" or name.startswith("ipykernel."):
                    raise ImportError("ipykernel is blocked in this test")

        sys.meta_path.insert(0, Refuse())
        from mcp_kernel.session import Session, SessionOptions

        async def main():
            session = Session(SessionOptions(cwd=Path.cwd(), config=None, server=None, profile=None))
            await session.start()
            result = await session.execute("await mcp.echo.add({ a: 20, b: 22 })")
            await session.close()
            print(result.data["text/plain"], "ipykernel" in sys.modules)

        asyncio.run(main())
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{ sum: 42 } False"


def _as_library_and_owner(script: str, cwd: Path, how: str) -> str:
    """What ``script`` prints run in a fresh interpreter with ``how`` ("library" or "own") as its argument."""
    done = subprocess.run([sys.executable, "-c", script, how], cwd=cwd, capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_only_a_session_that_owns_its_process_sets_the_garbage_collector(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}}))
    script = textwrap.dedent(
        """
        import asyncio, gc, sys
        from pathlib import Path
        from mcp_kernel.session import Session, SessionOptions

        async def main(owns):
            session = Session(SessionOptions(cwd=Path.cwd(), config=None, server=None, profile=None, owns_process=owns))
            await session.start()
            started = gc.get_freeze_count()
            result = await session.execute("await mcp.echo.add({ a: 20, b: 22 })")  # the MCP layer is loaded by now
            await session.close()
            print(owns, gc.get_threshold(), started > 0, gc.get_freeze_count() > started, result.data["text/plain"])

        asyncio.run(main(sys.argv[1] == "own"))
        """
    )
    lines = [_as_library_and_owner(script, tmp_path, how) for how in ("library", "own")]
    assert lines == ["False (700, 10, 10) False False { sum: 42 }", "True (10000, 10, 10) True True { sum: 42 }"]


def test_a_failing_call_nobody_awaits_is_reported(s: SessionHarness) -> None:
    result, out = s.run("mcp.echo.fail({ message: 'unseen' }); 'sent'")
    assert result.data["text/plain"] == "'sent'"
    _, after = s.run("await sleep(300); 1")  # the rejection arrives after the cell ended
    text = out.text("stderr") + after.text("stderr")
    assert "Uncaught (in promise) ToolError: echo.fail: unseen" in text


def test_data_is_the_global_data_of_its_cell_only(s: SessionHarness) -> None:
    """``execute(data=…)`` (serve's run, a step client's data): bound before the cell, restored after,
    even when the cell times out; never pasted into the source (a quote in it is just data)."""
    given = {"q": 'a "quoted" \\ value', "n": [1, 2]}
    result = s.call(s.session.execute("data.q + data.n.length", data=given))
    assert (result.error, result.value) == (None, 'a "quoted" \\ value2')
    assert s.json("[typeof data]") == ["undefined"]
    s.run("globalThis.data = 'own'")
    assert s.call(s.session.execute("data", data=None)).value is None
    stopped = s.call(s.session.execute("while (true) { data; }", data=[1], time_limit=0.5))
    assert stopped.error.name == "TimeoutError"
    assert s.value("data") == "'own'"


def test_a_session_that_owns_its_process_gives_memory_back_when_quiet(tmp_path: Path) -> None:
    """gc_tuning.IDLE after a cell, V8's heap shrinks back; a library user's session keeps its heap."""
    script = textwrap.dedent(
        """
        import asyncio, sys
        from pathlib import Path
        from mcp_kernel import gc_tuning
        from mcp_kernel.session import Session, SessionOptions

        gc_tuning.IDLE = 0.2

        async def main(owns):
            session = Session(SessionOptions(cwd=Path.cwd(), config=None, server=None, profile=None, owns_process=owns))
            await session.start()
            held = lambda: session.engine._v8._racer.heap_stats()["total_heap_size"] >> 20
            await session.execute("globalThis.kept = 42; 1")
            start = held()
            junk = await session.execute("{ let junk = []; for (let i = 0; i < 400000; i++) junk.push({ i, s: 'x' + i }); junk.length }")
            grown = held()
            await asyncio.sleep(1.5)
            quiet = held()
            after = await session.execute("kept")
            await session.close()
            print(owns, junk.data["text/plain"], grown > start + 20, quiet < start + 4, after.data["text/plain"])

        asyncio.run(main(sys.argv[1] == "own"))
        """
    )
    lines = [_as_library_and_owner(script, tmp_path, how) for how in ("library", "own")]
    assert lines == ["False 400000 True False 42", "True 400000 True True 42"]
