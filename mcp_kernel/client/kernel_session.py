"""``KernelSession``: one step at a time against a named session, from Python.

The same sessions as ``mcp2repl --session NAME``: attach when it runs, start it when it does not.
Each step holds the session's lock, so a shell and a Python program stepping the same session
never interleave. With ``gateway=URL`` the kernel runs behind a Jupyter gateway instead.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Protocol

from . import registry
from .registry import SessionError, SessionFiles, StartOptions
from .result import StepResult
from .wire import KernelDied


class Channel(Protocol):
    """A kernel a step can run on: local (wire.KernelConnection) or behind a gateway."""

    def execute(self, code: str, timeout: float | None = None) -> StepResult: ...

    def interrupt(self) -> None: ...

    def close(self) -> None: ...


class KernelSession:
    """A named persistent session: ``step(code)`` runs one step and returns a :class:`StepResult`.

    ``restart=True`` replaces a session whose kernel died (its state is lost); without it such a
    session raises :class:`SessionError` saying how it ended. A session that ended by itself (idle
    timeout) is started again, and ``notices`` says that its state was lost.
    """

    def __init__(
        self,
        name: str = "default",
        *,
        cwd: str | Path | None = None,
        gateway: str | None = None,
        token: str | None = None,
        options: StartOptions | None = None,
        restart: bool = False,
    ) -> None:
        self.files = SessionFiles(name, Path(cwd) if cwd else None)
        self.options = options or StartOptions()
        self.notices: list[str] = []
        self.channel: Channel
        if gateway:
            from .gateway import GatewaySession

            token = token if token is not None else os.environ.get("MCP2REPL_GATEWAY_TOKEN", "")
            self.channel = GatewaySession.named(gateway, token, self.files, restart=restart, notices=self.notices)
            return
        with self.files.step_lock():
            self.channel = self._attach(restart)

    def _attach(self, restart: bool) -> Channel:
        state = self.files.state()
        if state == "running" and restart:
            self.notices.append(f"session {self.files.name!r} restarted: its state was dropped")
            registry.stop(self.files)
            state = "missing"
        if state == "dead":
            lines = _last_words(self.files)
            how = "\n".join(f"  {line}" for line in lines) or self.files.log_tail()
            if not restart:
                raise SessionError(
                    f"session {self.files.name!r} is dead: its kernel (pid {(self.files.read_meta() or {}).get('pid')}) ended "
                    f"without shutting down, and its state is lost. Start a new one with --restart "
                    f"(KernelSession(..., restart=True)), or remove it with --stop.\n{how}".rstrip()
                )
            self.notices.append(f"session {self.files.name!r} had died and was restarted: its state was lost")
        if state == "ended":
            self.notices.append(
                f"session {self.files.name!r} had ended (idle timeout, or a client shut it down) and was started again: its state was lost"
            )
        if state == "running":
            return registry.connect(self.files)
        return registry.start(self.files, self.options)

    # ---- steps ----------------------------------------------------------------------------------

    def step(self, code: str, timeout: float | None = None) -> StepResult:
        """Run one step (serialised with every other client of this session); ``timeout`` in seconds."""
        with self.files.step_lock():
            try:
                return self.channel.execute(code, timeout)
            except KernelDied:
                lines = _last_words(self.files)
                detail = "\n".join(lines) or self.files.log_tail()
                raise SessionError(f"session {self.files.name!r} died during the step; its state is lost.\n{detail}".rstrip()) from None

    async def astep(self, code: str, timeout: float | None = None) -> StepResult:
        """:meth:`step` without blocking the event loop; cancelling it interrupts the step."""
        import asyncio  # not at the top: the command line's warm path has no use for it

        task = asyncio.ensure_future(asyncio.to_thread(self.step, code, timeout))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            self.interrupt()
            with contextlib.suppress(BaseException):
                await task
            raise

    def interrupt(self) -> None:
        """Stop the running step (InterruptError); globals and connections are kept. Thread-safe."""
        self.channel.interrupt()

    def close(self) -> None:
        """Let go of the session; it keeps running for later steps and other clients."""
        self.channel.close()

    def stop(self) -> None:
        """End the session: its kernel and servers stop, its state is gone."""
        stop = getattr(self.channel, "stop", None)
        self.channel.close()
        if stop is not None:
            stop()
        else:
            registry.stop(self.files)

    def __enter__(self) -> KernelSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()



def _last_words(files: SessionFiles) -> list[str]:
    """How the session's dead kernel ended, from its run folder (reported once; see rundir)."""
    from .. import rundir

    return rundir.previous_end(str(files.conn))
