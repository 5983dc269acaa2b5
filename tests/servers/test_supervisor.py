"""One supervisor for all of a kernel's stdio servers (servers/supervisor.py, supervised.py), with real servers.

Each test runs in this pytest process, whose one supervisor is shared by every server it starts,
as a kernel's is; the tests of the transport (test_stdio.py) and of the kernel's shutdown and
death (test_rundir.py, api/test_tools_kernel.py) run over it too.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
from conftest import ECHO, SERVERS, marked, wait_unmarked
from mcp import ClientSession

from mcp_kernel.servers import supervised, supervisor
from mcp_kernel.servers.spawn import Launch, server_environment, spawn, stop, wait_exit
from mcp_kernel.servers.stdio import StdioStatus, stdio_transport

PY = sys.executable
HOSTILE = str(SERVERS / "hostile_server.py")

pytestmark = pytest.mark.skipif(not supervised.available(), reason="the supervisor is Linux's (elsewhere: a guard per server)")


def launch(*args: str, env: dict[str, str] | None = None, log: Path | None = None) -> Launch:
    return Launch(PY, args, tuple(server_environment(env or {}).items()), None, log)


def test_one_server_ends_with_its_whole_tree_while_the_others_go_on() -> None:
    """Two servers that ignore SIGTERM and stdin's end, each with a child and a setsid grandchild, under one supervisor."""
    first, second = (f"supervisor-{uuid.uuid4().hex[:8]}" for _ in range(2))

    async def main() -> None:
        seen = StdioStatus(), StdioStatus()
        async with stdio_transport(PY, [HOSTILE, "orphans", "--mark", second], status=seen[1]) as (r2, w2), ClientSession(r2, w2) as other:
            await other.initialize()
            async with stdio_transport(PY, [HOSTILE, "orphans", "--mark", first], status=seen[0]) as (r1, w1), ClientSession(r1, w1) as one:
                await one.initialize()
                assert len(marked(first)) == len(marked(second)) == 3  # each: the server, its child, its grandchild
                boss = supervised.shared().process.pid
                assert [psutil.Process(s.pid).ppid() for s in seen] == [boss, boss]  # one supervisor for both
            assert wait_unmarked(first, 1.0) == []  # gone when its context is left
            assert [p.is_running() for p in marked(second)] == [True] * 3
            assert (await other.call_tool("ok", {})).content[0].text == "ok"

    asyncio.run(main())
    assert wait_unmarked(second, 1.0) == []


def test_exit_statuses_and_a_command_that_cannot_start(tmp_path: Path) -> None:
    async def status(*args: str, log: Path | None = None) -> int | None:
        spawned = await spawn(launch(*args, log=log) if args[0] != "/nonexistent/x" else Launch(args[0], (), (), None, log))
        assert await wait_exit(spawned.process, 60), "the process did not end within 60 s"
        await stop(spawned.process)
        return spawned.process.returncode

    async def main() -> None:
        assert await status("-c", "raise SystemExit(7)") == 7
        assert await status("-c", "import os, signal; os.kill(os.getpid(), signal.SIGUSR1)") == -signal.SIGUSR1
        assert await status("/nonexistent/x", log=tmp_path / "x.log") == 127

    asyncio.run(main())
    assert (tmp_path / "x.log").read_text() == "cannot start '/nonexistent/x': No such file or directory\n"


def test_a_missing_working_folder_is_named(tmp_path: Path) -> None:
    async def main() -> int | None:
        spawned = await spawn(Launch(PY, ("-c", "pass"), (), str(tmp_path / "gone"), tmp_path / "s.log"))
        await wait_exit(spawned.process, 60)
        return spawned.process.returncode

    assert asyncio.run(main()) == 127
    assert (tmp_path / "s.log").read_text() == f"cannot start {PY!r}: No such file or directory (working folder {str(tmp_path / 'gone')!r})\n"


def test_the_supervisor_keeps_none_of_the_kernels_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server gets what it is configured with; the supervisor, which sees every server's, gets nothing but its graces."""

    async def main() -> None:
        spawned = await spawn(launch("-c", "import time; time.sleep(60)", env={"SERVER_ONLY": "s3cret"}))
        try:
            server = psutil.Process(spawned.process.pid)
            assert server.environ()["SERVER_ONLY"] == "s3cret"
            assert "KERNEL_SECRET" not in server.environ()
            assert set(psutil.Process(server.ppid()).environ()) <= set(supervised.KEPT)
        finally:
            await stop(spawned.process)

    monkeypatch.setenv("KERNEL_SECRET", "k3y")
    old = supervised._shared
    supervised._shared = None  # a supervisor started now, with the secret in our environment
    try:
        asyncio.run(main())
    finally:
        if supervised._shared is not None:
            supervised._shared.close()
        supervised._shared = old


def test_a_killed_supervisor_takes_its_servers_along_and_a_new_one_starts() -> None:
    async def main() -> None:
        first = await spawn(launch(ECHO))
        boss = psutil.Process(first.process.pid).ppid()
        os.kill(boss, signal.SIGKILL)
        assert await wait_exit(first.process, 60), "the process did not end within 60 s of its supervisor's SIGKILL"
        assert first.process.returncode == -signal.SIGKILL
        deadline = time.monotonic() + 30
        while psutil.pid_exists(first.process.pid) and psutil.Process(first.process.pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the server outlived its supervisor by 30 s"
            await asyncio.sleep(0.05)
        second = await spawn(launch("-c", "import sys; sys.stdout.write(sys.stdin.readline())"))
        assert psutil.Process(second.process.pid).ppid() not in (boss, os.getpid())
        await second.process.stdin.send(b"again\n")
        assert await second.process.stdout.receive(100) == b"again\n"
        await stop(second.process)
        assert second.process.returncode == 0

    asyncio.run(main())


def test_the_request_encoding_keeps_any_text() -> None:
    for items in (["", "1", "x"], ["/a b", "2", "cmd", "a:b\n", "K=V=W", "NL=\n"], ["ünï", "1", "\udcff"]):
        assert supervisor.decode(supervised.encode(items)) == items
    for bad in (b"x", b"3:ab", b":", b"1x:a"):
        assert supervisor.decode(bad) is None, bad
