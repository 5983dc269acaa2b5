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


async def execed(pid: int) -> psutil.Process:
    """The server once it runs its own program: the supervisor answers as soon as it has forked."""
    process, deadline = psutil.Process(pid), time.monotonic() + 60
    while process.cmdline()[:1] != [PY] or "supervisor.py" in " ".join(process.cmdline()):
        assert time.monotonic() < deadline, "the server did not exec within 60 s"
        await asyncio.sleep(0.01)
    return process


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


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
            server = await execed(spawned.process.pid)
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
        while not gone(first.process.pid):
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


def test_a_stuck_supervisor_does_not_keep_a_stopped_server_alive() -> None:
    """stop()'s last resort: the server and every process with its mark, SIGKILLed from the kernel's side."""

    async def main() -> None:
        spawned = await spawn(launch(HOSTILE, "orphans", "--mark", mark))
        await execed(spawned.process.pid)
        deadline = time.monotonic() + 60
        while len(marked(mark)) < 3:
            assert time.monotonic() < deadline, "the hostile server did not start its children within 60 s"
            await asyncio.sleep(0.05)
        boss = psutil.Process(spawned.process.pid).ppid()
        os.kill(boss, signal.SIGSTOP)
        try:
            await stop(spawned.process)
            assert [p.pid for p in marked(mark) if not gone(p.pid)] == []
        finally:
            os.kill(boss, signal.SIGCONT)

    mark = f"supervisor-stuck-{uuid.uuid4().hex[:8]}"
    try:
        asyncio.run(main())
    finally:
        for p in marked(mark):
            p.kill()


def test_a_start_that_fails_inside_the_supervisor_fails_alone(tmp_path: Path) -> None:
    """Out of file descriptors: the new server's start says why, and the server already running goes on."""

    async def main() -> None:
        first = await spawn(launch("-u", "-c", "import sys\nfor line in sys.stdin: sys.stdout.write(line)"))
        boss = psutil.Process(supervised.shared().process.pid)
        limits = boss.rlimit(psutil.RLIMIT_NOFILE)
        await execed(first.process.pid)
        deadline = time.monotonic() + 60
        while True:  # until it has let go of the first server's fds: then its only /dev/null above 2 is the reserve
            fds = {int(n): os.readlink(f"/proc/{boss.pid}/fd/{n}") for n in os.listdir(f"/proc/{boss.pid}/fd")}
            if sum(n > 2 and fds[n] == os.devnull for n in fds) == supervisor.FDS or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.01)
        free = [n for n in range(1024) if n not in fds or (n > 2 and fds[n] == os.devnull)]
        boss.rlimit(psutil.RLIMIT_NOFILE, (free[3] + 1, limits[1]))  # room for the request's four fds, not for a pipe
        try:
            with pytest.raises(OSError, match=r"^cannot start '.*python.*': Too many open files$"):
                await spawn(launch("-c", "pass"))
        finally:
            boss.rlimit(psutil.RLIMIT_NOFILE, limits)
        await first.process.stdin.send(b"still\n")
        assert await first.process.stdout.receive(100) == b"still\n"
        again = await spawn(launch("-c", "import os; print(os.getcwd())"))
        assert await again.process.stdout.receive(1000) == f"{os.getcwd()}\n".encode()
        await stop(again.process)
        await stop(first.process)
        assert boss.is_running() and first.process.returncode == 0

    asyncio.run(main())


def test_a_server_starts_in_the_kernels_folder_of_the_moment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> bytes:
        spawned = await spawn(launch("-c", "import os; print(os.getcwd())"))
        out = await spawned.process.stdout.receive(1000)
        await stop(spawned.process)
        return out

    asyncio.run(main())  # the supervisor runs already, started elsewhere
    monkeypatch.chdir(tmp_path)
    assert asyncio.run(main()) == f"{tmp_path}\n".encode()
