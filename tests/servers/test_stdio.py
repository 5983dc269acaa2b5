"""Our stdio transport and the guard under it: linear-time lines, exit statuses, and no process left behind.

The transport is driven with the SDK's ``ClientSession`` exactly as connection.py does; the guard
is also run bare, as ``python -S guard.py PID`` with the command in its environment variable.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import psutil
import pytest
from conftest import ECHO, ROOT, SERVERS, marked, wait_unmarked
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from mcp_kernel.servers import guard
from mcp_kernel.servers.stdio import StdioStatus, _Lines, stdio_transport

HOSTILE = str(SERVERS / "hostile_server.py")
PY = sys.executable

pytestmark = pytest.mark.timeout(120)



# ---- the line splitter -------------------------------------------------------------------------


def test_lines_are_split_wherever_chunks_end() -> None:
    payload = b'{"a":1}\n\n{"b":"x\\ny"}\r\nlast-without-newline'
    for cut in range(len(payload) + 1):
        for step in (1, 3, len(payload)):
            lines = _Lines(1 << 20)
            got: list[bytes] = []
            chunks = [payload[:cut]] + [payload[i : i + step] for i in range(cut, len(payload), step)]
            for chunk in chunks:
                got += [bytes(line) for line in lines.feed(chunk)]
            assert got == [b'{"a":1}', b"", b'{"b":"x\\ny"}\r'], (cut, step)
            assert bytes(lines.partial) == b"last-without-newline"


def test_a_line_over_the_limit_overflows() -> None:
    lines = _Lines(100)
    assert lines.feed(b"x" * 60) == []
    with pytest.raises(OverflowError):
        lines.feed(b"x" * 60)


def test_lines_cost_linear_time() -> None:
    """A chunk costs as much at the end of a 64 MB line as at its start (``(buffer + chunk).split``: ~1,000x).

    Per-chunk medians, not totals: totals of two sizes swung between 10x and 50x apart for a linear
    splitter, as the allocator sometimes reuses memory a previous run freed and sometimes faults
    in fresh pages; a median per chunk is immune to both, and to a growing buffer's reallocations.
    """
    chunk = b"x" * 65536
    lines = _Lines(1 << 30)
    costs = []
    for _ in range(1024):  # 64 MB
        started = time.perf_counter()
        lines.feed(chunk)
        costs.append(time.perf_counter() - started)
    (line,) = lines.feed(b"\n")
    assert len(line) == 1024 * len(chunk)
    first, last = statistics.median(costs[:64]), statistics.median(costs[-64:])
    assert last / first < 10, (first, last)


# ---- the transport with a real server ----------------------------------------------------------


def test_calls_junk_and_a_30_mb_result(tmp_path: Path) -> None:
    async def main() -> tuple[str, int, StdioStatus]:
        status = StdioStatus()
        log = tmp_path / "junk.log"
        async with stdio_transport(PY, [HOSTILE, "junk"], log_path=log, status=status) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            text = (await s.call_tool("call", {})).content[0].text
        async with stdio_transport(PY, [HOSTILE, "huge", "--mb", "30"]) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            size = len((await s.call_tool("call", {})).content[0].text)
        return text, size, status

    text, size, status = asyncio.run(main())
    assert (text, size) == ("after junk", 30 * 1024 * 1024)
    assert (status.junk_lines, status.last_junk, status.returncode) == (3, "junk line 2: debug output on stdout", 0)
    assert status.stdout_text() == 'it wrote 3 lines to stdout that are not MCP messages, the last: "junk line 2: debug output on stdout"'
    logged = [line for line in (tmp_path / "junk.log").read_text().splitlines() if line.startswith("[mcp2repl]")]
    assert logged == [f"[mcp2repl] not an MCP message on stdout: junk line {n}: debug output on stdout" for n in range(3)]


def test_big_junk_lines_are_counted_and_logged_by_their_start(tmp_path: Path) -> None:
    async def main() -> tuple[str, StdioStatus]:
        status = StdioStatus()
        async with stdio_transport(PY, [HOSTILE, "big-junk"], log_path=tmp_path / "junk.log", status=status) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return (await s.call_tool("call", {})).content[0].text, status

    text, status = asyncio.run(main())
    assert (text, status.junk_lines, status.last_junk) == ("after big junk", 2, "\ufffd" * 300)
    logged = [line for line in (tmp_path / "junk.log").read_text().splitlines() if line.startswith("[mcp2repl]")]
    assert len(logged) == 2 and logged[0].startswith("[mcp2repl] not an MCP message on stdout: big junk: yyyy")


def test_a_big_answer_is_not_kept_once_its_caller_has_it() -> None:
    """The SDK's read loop holds the last message it read; after a big one, the transport empties it."""
    import gc

    def held(size: int) -> list[str]:
        found = []
        for o in gc.get_objects():
            for r in gc.get_referents(o):
                for v in r.values() if isinstance(r, dict) else [r]:
                    if isinstance(v, str) and len(v) == size:
                        found.append(type(o).__name__)
        return found

    async def main() -> tuple[int, list[str]]:
        async with stdio_transport(PY, [HOSTILE, "huge", "--mb", "3"]) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            size = len((await s.call_tool("call", {})).content[0].text)  # the result is dropped at once
            await asyncio.sleep(0.2)
            return size, held(size)

    size, holders = asyncio.run(main())
    assert (size, holders) == (3 * 1024 * 1024, [])


def test_exit_status_and_the_stderr_of_this_run(tmp_path: Path) -> None:
    log = tmp_path / "crash.log"
    log.write_text("an older run\nwrote these\nlines\n")

    async def main() -> tuple[StdioStatus, StdioStatus]:
        crashed = StdioStatus()
        async with stdio_transport(PY, [HOSTILE, "crash"], log_path=log, status=crashed) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            with pytest.raises(MCPError, match="Connection closed"):
                await s.call_tool("call", {}, read_timeout_seconds=30)
        killed = StdioStatus()
        async with stdio_transport(PY, [ECHO], status=killed) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            (echo,) = [p for p in psutil.Process(os.getpid()).children(recursive=True) if ECHO in p.cmdline()]
            echo.send_signal(signal.SIGKILL)
            with pytest.raises(MCPError, match="Connection closed"):
                await s.call_tool("sleep", {"ms": 20_000}, read_timeout_seconds=30)
        return crashed, killed

    crashed, killed = asyncio.run(main())
    assert crashed.exit_text() == "exited with status 3"
    assert crashed.stderr_tail() == ["hostile_server: crashing in the middle of a call"]
    assert killed.exit_text() == "was killed by SIGKILL"


DEAF = textwrap.dedent("""
    import json, os, sys, time
    request = json.loads(sys.stdin.readline())
    result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "deaf", "version": "1"}}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
    sys.stdin.readline()  # notifications/initialized
    os.close(0)  # from now on nobody reads what the client writes
    time.sleep(60)
""")


def _wait_gone(path: Path) -> None:
    deadline = time.monotonic() + 30
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_server_that_stops_reading_ends_the_session_instead_of_hanging_it() -> None:
    async def main() -> tuple[list[str], float]:
        async with stdio_transport(PY, ["-c", DEAF]) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            (deaf,) = [p for p in psutil.Process(os.getpid()).children(recursive=True) if "nobody reads" in " ".join(p.cmdline())]
            await asyncio.to_thread(_wait_gone, Path(f"/proc/{deaf.pid}/fd/0"))  # until it has closed its stdin
            started = time.monotonic()
            outcomes = await asyncio.gather(*(s.call_tool("t", {}, read_timeout_seconds=60) for _ in range(3)), return_exceptions=True)
            return [str(o) for o in outcomes], time.monotonic() - started

    outcomes, seconds = asyncio.run(main())
    assert outcomes == ["Connection closed"] * 3
    assert seconds < 30  # the write failed: no call waited for its 60 s timeout


CHATTY = textwrap.dedent("""
    import json, sys
    request = json.loads(sys.stdin.readline())
    result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {}, "serverInfo": {"name": "chatty", "version": "1"}}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
    for line in sys.stdin:
        pass
    for n in range(2000):  # on stdin's end, 2 MB of goodbyes: more than a pipe holds
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "bye " + "x" * 1000}}), flush=True)
""")


def test_a_server_that_writes_as_it_stops_can_exit_by_itself() -> None:
    async def main() -> StdioStatus:
        status = StdioStatus()
        async with stdio_transport(PY, ["-c", CHATTY], status=status) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
        return status

    status = asyncio.run(main())
    assert (status.returncode, status.exit_text()) == (0, "exited with status 0")  # read to the end, not killed


def test_closing_leaves_no_process_of_a_server_that_ignores_everything() -> None:
    """SIGTERM and stdin's end ignored, a child that ignores SIGTERM, a setsid grandchild: all gone at close."""
    mark = f"stdio-close-{uuid.uuid4().hex[:8]}"

    async def main() -> float:
        async with stdio_transport(PY, [HOSTILE, "orphans", "--mark", mark]) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            assert (await s.call_tool("ok", {})).content[0].text == "ok"
            assert len(marked(mark)) == 3  # the server, its child and the setsid grandchild
            started = time.monotonic()
        return time.monotonic() - started

    closing = asyncio.run(main())
    assert wait_unmarked(mark, 1.0) == []  # already gone when the context is left
    assert closing < 10


OWNER = """
import asyncio, sys, time
sys.path.insert(0, {root!r})
from mcp import ClientSession
from mcp_kernel.servers.stdio import stdio_transport

async def main():
    async with stdio_transport({py!r}, [{hostile!r}, "orphans", "--mark", {mark!r}]) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        print("ready", flush=True)
        await asyncio.sleep(600)

asyncio.run(main())
"""


def test_kill_9_of_the_owner_takes_the_whole_tree_down() -> None:
    mark = f"stdio-kill9-{uuid.uuid4().hex[:8]}"
    code = OWNER.format(root=str(ROOT), py=PY, hostile=HOSTILE, mark=mark)
    owner = subprocess.Popen([PY, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert owner.stdout is not None and owner.stdout.readline() == b"ready\n"
        assert len([p for p in marked(mark) if p.pid != owner.pid]) == 3  # the command line of the owner has the mark too
        owner.kill()
        owner.wait()
        assert wait_unmarked(mark) == []
    finally:
        owner.kill()
        for proc in marked(mark):
            proc.kill()


# ---- the guard alone ---------------------------------------------------------------------------


def run_guard(command: list[str], parent: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, guard.ARGV_VAR: guard.encode_argv(command)}
    return subprocess.run(
        [PY, "-S", guard.__file__, str(parent if parent is not None else os.getpid())], env=env, capture_output=True, text=True, timeout=30
    )


def test_guard_exits_like_its_server() -> None:
    assert run_guard([PY, "-c", "raise SystemExit(7)"]).returncode == 7
    assert run_guard([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGUSR1)"]).returncode == -signal.SIGUSR1
    missing = run_guard(["/nonexistent/mcp2repl-guard-test"])
    assert (missing.returncode, missing.stderr) == (127, "cannot start '/nonexistent/mcp2repl-guard-test': No such file or directory\n")


def test_guard_passes_stdio_through_and_hides_its_own_variable() -> None:
    code = "import os, sys; print(sys.stdin.read().upper(), os.environ.get('MCP2REPL_GUARD_ARGV'), sys.argv[1:])"
    env = {**os.environ, guard.ARGV_VAR: guard.encode_argv([PY, "-c", code, "a b"])}
    done = subprocess.run([PY, "-S", guard.__file__, str(os.getpid())], input="hello", env=env, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, "HELLO None ['a b']\n")


def test_guard_refuses_a_bad_command_line() -> None:
    done = subprocess.run([PY, "-S", guard.__file__, "--", "x"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr == textwrap.dedent("""\
        usage: MCP2REPL_GUARD_ARGV=LENGTH:COMMAND[LENGTH:ARG...] python -S guard.py PARENT_PID
    """)


def test_the_command_survives_its_encoding() -> None:
    for argv in (["sh"], ["a:b", "", "12:x", "é ü \n 3:", "9" * 20], [PY, "-c", "print(':')"]):
        assert guard.decode_argv(guard.encode_argv(argv)) == argv
    for bad in ("", "x", "3:ab", ":a", "-1:a", "2:ab3", "1:a:", "1\u00b2:a"):
        assert guard.decode_argv(bad) is None, bad


def test_guard_of_a_dead_parent_does_not_start_the_server() -> None:
    done = run_guard([PY, "-c", "print('started')"], parent=1)
    assert (done.returncode, done.stdout) == (1, "")


def test_stop_signals_in_a_row_still_end_the_whole_tree() -> None:
    """Signals that come after the first (or after the server's exit) are only recorded: one raised
    outside the guard's wait would have ended the guard with the server's child and setsid
    grandchild, which ignore SIGTERM, still alive (a fresh-clone run once left those two, parent 1)."""
    mark = f"guard-signals-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, guard.ARGV_VAR: guard.encode_argv([PY, HOSTILE, "orphans", "--mark", mark])}
    proc = subprocess.Popen([PY, "-S", guard.__file__, str(os.getpid())], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 60
        while len(marked(mark)) < 3:  # the server, its child, its grandchild
            assert time.monotonic() < deadline, "the hostile server did not start its children within 60 s"
            time.sleep(0.05)
        for _ in range(5):
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.05)
        proc.wait(60)
        left = wait_unmarked(mark, 30)
        assert left == [], f"alive after the guard ended: {[p.cmdline()[-3:] for p in left]}"
    finally:
        proc.kill()
        for p in marked(mark):
            p.kill()
