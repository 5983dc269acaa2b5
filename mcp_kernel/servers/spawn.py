"""A stdio server's process, apart from the MCP layer: started under the supervisor, stopped for sure.

On Linux every server of a kernel runs under one supervisor process (supervised.py); elsewhere
each runs under a guard of its own (guard.py). Both end a server's whole tree, and do so when the
kernel dies.

The MCP SDK takes most of a second to import, and a Python MCP server about as long to start. So a
session starts its configured stdio servers before it imports the SDK (:class:`EarlyStarts`), and
each connection adopts its process once the SDK is ready: the two start-ups overlap instead of
adding up. That is why this module imports no MCP code (``tests/test_layout.py`` holds it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import guard, supervisor
from .spec import ServerSpec

if TYPE_CHECKING:
    import anyio.abc

log = logging.getLogger(__name__)

GUARD = str(Path(guard.__file__))
#: Seconds a server gets to exit by itself once its stdin is closed, before the supervisor's SIGTERM (the
#: SDK's own stdio client waits as long: a server may be saving state, on a busy machine too).
EOF_GRACE = 2.0
#: Seconds from a terminate() to the tree's end: the grace before SIGKILL, and time for the kill.
STOP_WAIT = max(guard.GRACE, supervisor.GRACE) + 1.5
#: What a server inherits of the kernel's environment besides its configured ``env``: the MCP SDK's
#: ``DEFAULT_INHERITED_ENV_VARS`` (a test keeps the two equal), so secrets in the kernel's own
#: environment do not leak into servers someone else wrote.
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
#: Set by ``mcp2repl serve`` and passed on to the servers it starts: an ``mcp2repl serve`` among them
#: (a client's config that lists mcp2repl itself, read back as mcp2repl's own) refuses to start.
SERVE_MARK = "MCP2REPL_SERVE_PID"


def server_environment(configured: Mapping[str, str]) -> dict[str, str]:
    """The environment a stdio server starts with: the inherited variables, then its own."""
    inherited = {k: v for k in (*INHERITED, SERVE_MARK) if (v := os.environ.get(k)) is not None and not v.startswith("()")}
    return {**inherited, **configured}


def log_file(log_dir: Path, name: str) -> Path:
    """Where the stderr of the server called ``name`` goes (appended across restarts)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "server"
    return log_dir / f"{safe}.log"


@dataclass(frozen=True)
class Launch:
    """Everything that decides how a server's process starts: an early process is adopted only if this matches."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str | None
    log_path: Path | None

    @classmethod
    def of(cls, spec: ServerSpec, log_path: Path | None) -> Launch:
        assert spec.command
        return cls(spec.command, tuple(spec.args), tuple(server_environment(spec.env).items()), spec.cwd, log_path)


@dataclass
class Spawned:
    """A started server process, and where its stderr of this run begins in the log."""

    launch: Launch
    process: anyio.abc.Process
    stderr_start: int


async def spawn(launch: Launch) -> Spawned:
    """Start the server under the supervisor (or its guard), with stdin and stdout as pipes and stderr appended to its log.

    anyio is imported here, not at the top: a session with no stdio server to start (``-e '1+1'``) never needs it.
    """
    import anyio

    from . import supervised  # (anyio too)

    argv = [launch.command, *launch.args]
    env = dict(launch.env)
    if launch.log_path is not None:
        launch.log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(launch.log_path or os.devnull, "ab") as errlog:  # noqa: ASYNC230 - a local file, opened once
        start = errlog.seek(0, os.SEEK_END)
        process: anyio.abc.Process
        if supervised.available():
            process = await supervised.shared().start(argv, env, launch.cwd, errlog.fileno())
        else:
            if os.name == "posix":
                env[guard.ARGV_VAR] = guard.encode_argv(argv)
                argv = [sys.executable, "-S", GUARD, str(os.getpid())]
            process = await anyio.open_process(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog, env=env, cwd=launch.cwd, start_new_session=True
            )
    return Spawned(launch, process, start)


async def wait_exit(process: anyio.abc.Process, timeout: float) -> bool:
    """Did the process end within ``timeout``? Polls returncode: ``wait()`` would also wait for pipes."""
    import anyio

    with anyio.move_on_after(timeout):
        while process.returncode is None:  # noqa: ASYNC110 - nothing signals an exit but the returncode
            await anyio.sleep(0.01)
    return process.returncode is not None


async def stop(process: anyio.abc.Process, wait: bool = True) -> None:
    """Close stdin, give the server :data:`EOF_GRACE`, then the supervisor's tree kill; SIGKILL as a last resort.

    ``wait=False`` (the kernel is leaving) only closes the pipes: the server sees its stdin end now,
    and the supervisor (or guard), which outlives us, gives it the same grace once we are gone and
    then ends its tree. A Python server takes seconds to exit on a loaded machine; a kernel's
    shutdown has ~1.4 s, and the server's exit is no business of the person leaving.
    """
    import anyio

    assert process.stdin is not None and process.stdout is not None
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not wait:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdout.aclose()
        return
    if not await wait_exit(process, EOF_GRACE):
        with contextlib.suppress(ProcessLookupError):
            process.terminate()  # the supervisor or guard: SIGTERM to the tree, SIGKILL after its grace
        if not await wait_exit(process, STOP_WAIT):
            # the supervisor or guard is stuck: end the server's processes from here
            from .supervised import SupervisedProcess

            if isinstance(process, SupervisedProcess):
                await process.force_end()  # every process with its mark (the pid alone may be reused)
            else:
                for pid in guard.descendants(process.pid):
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await wait_exit(process, 2.0)
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdout.aclose()


class EarlyStarts:
    """Stdio servers started before the MCP layer is loaded, waiting for their connections to adopt them."""

    def __init__(self) -> None:
        self.log_dir: Path | None = None  # where the servers' logs go: the connections that adopt them write there too
        self._waiting: dict[str, Spawned] = {}
        self._stopping: set[asyncio.Task[None]] = set()

    async def start(self, specs: Iterable[ServerSpec], log_dir: Callable[[], Path]) -> None:
        """Spawn every usable stdio server of ``specs``; one that cannot start is left to its connection to report.

        ``log_dir`` makes the logs' folder here, in the task, so a failure to make it reaches whoever awaits this.
        """
        self.log_dir = log_dir()
        for spec in specs:
            if spec.transport != "stdio" or spec.error or not spec.command:
                continue
            try:
                self._waiting[spec.name] = await spawn(Launch.of(spec, log_file(self.log_dir, spec.name)))
            except Exception:
                log.debug("could not start %s early", spec.name, exc_info=True)

    @property
    def waiting(self) -> dict[str, int]:
        """Process ids of the servers started and not yet adopted, by name."""
        return {name: spawned.process.pid for name, spawned in self._waiting.items()}

    def take(self, name: str, launch: Launch) -> Spawned | None:
        """The early process of ``name`` if it was started exactly as ``launch`` says and still runs."""
        spawned = self._waiting.pop(name, None)
        if spawned is None:
            return None
        if spawned.launch == launch and spawned.process.returncode is None:
            return spawned
        self.discard(spawned)  # started differently (or already gone): the connection starts its own
        return None

    def discard(self, spawned: Spawned) -> None:
        """Stop a process nobody will use, in the background."""
        task = asyncio.ensure_future(stop(spawned.process))
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    def discard_rest(self) -> None:
        """Stop every process no connection took (the MCP layer failed, or a server left the config)."""
        for spawned in self._waiting.values():
            self.discard(spawned)
        self._waiting.clear()
