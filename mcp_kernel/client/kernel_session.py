"""``KernelSession``: one step at a time against a named session, from Python.

The same sessions as ``mcp2repl --session NAME``: attach when it runs, start it when it does not;
never send code to one whose files fail a check (trust.py). Each step holds the session's lock, so
a shell and a Python program stepping the same session never interleave; a step's timeout covers
the wait for it (steplock.py). With ``gateway=URL`` the kernel runs behind a Jupyter gateway instead.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from . import registry, steplock
from .registry import SessionError, SessionFiles, StartOptions
from .result import DEFAULT_OUTPUT_LIMIT, NO_DATA, StepError, StepResult
from .wire import KernelDied, OnOutput, StepOptions


class Channel(Protocol):
    """A kernel a step can run on: local (wire.KernelConnection) or behind a gateway."""

    client: str  # who the steps' metadata says sent them (the session's record shows it)

    def execute(
        self, code: str, timeout: float | None = None, on_output: OnOutput | None = None, data: Any = NO_DATA, options: StepOptions | None = None
    ) -> StepResult: ...

    def interrupt(self) -> None: ...

    def close(self) -> None: ...


class KernelSession:
    """A named persistent session: ``step(code)`` runs one step and returns a :class:`StepResult`.

    ``restart=True`` replaces a session whose kernel died, or whose files are untrusted (its state
    is lost); without it such a session raises :class:`SessionError` saying what is wrong. A
    session that ended by itself (idle timeout) is started again, and ``notices`` says that its
    state was lost. ``notify`` hears what a waiting client should say at once (a busy session;
    default: a line on stderr), ``client`` is how other clients name this one while it steps,
    ``kind`` how the session's notebook names who stepped it (``step-api``, ``cli``, ``serve``).
    ``channel``: the way to the session's running kernel, given by that kernel itself (its step
    socket's steps, cli/stepsocket.py): no connection is made, and no check of a kernel that is this process.
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
        notify: Callable[[str], None] | None = None,
        client: str = "the Python step API",
        kind: str = "step-api",
        pid: int | None = None,
        channel: Channel | None = None,
    ) -> None:
        self.files = SessionFiles(name, Path(cwd) if cwd else None)
        self.options = options or StartOptions()
        self.notices = self.files.notices
        self.notify = notify or _to_stderr
        self.client = client
        self.pid = pid  # who the lock says holds the session (default: this process)
        self._interrupted = threading.Event()  # interrupt() while a step waits for the busy session
        self._running = False  # this client's step is in the kernel
        self.channel: Channel
        self.files.secure(create=True)
        if channel is not None:  # the session's own kernel, stepped from inside it (kernel/direct.py): it runs
            self._same_options()
            self.channel = channel
        elif gateway:
            from .gateway import GatewaySession

            token = token if token is not None else os.environ.get("MCP2REPL_GATEWAY_TOKEN", "")
            self.channel = GatewaySession.named(gateway, token, self.files, restart=restart, notices=self.notices)
        elif (verdict := self.files.check()).state == "running" and not restart:  # attaching needs no lock: kernel_info is served while a step runs
            self._same_options()
            self.channel = registry.connect(self.files, verdict)
        else:
            with self._lock(None, "starting it"):
                self.channel = self._attach(restart)
        self.channel.client = kind

    @property
    def output_limit(self) -> int:
        """The session's --max-output-chars: what bounds a step's --json envelope (result.py)."""
        recorded = ((self.files.read_meta() or {}).get("options") or {}).get("max_output_chars")
        limit = recorded if isinstance(recorded, int) else self.options.max_output_chars
        return limit or DEFAULT_OUTPUT_LIMIT

    def _lock(self, timeout: float | None, doing: str) -> contextlib.AbstractContextManager[None]:
        files = self.files
        return steplock.hold(
            files.lock,
            files.rel(files.lock),
            files.name,
            what=self.client,
            doing=doing,
            timeout=timeout,
            notify=self.notify,
            interrupted=self._interrupted.is_set,
            pid=self.pid,
        )

    def _attach(self, restart: bool) -> Channel:
        verdict = self.files.check()
        state = verdict.state
        if state == "running" and restart:
            self.notices.append(f"session {self.files.name!r} restarted: its state was dropped")
            registry.stop(self.files)
            state = "missing"
        if state == "untrusted":
            if not restart:
                raise registry.untrusted(self.files, verdict.reason)
            registry.stop(self.files)  # removes the files; signals only a pid that is this session's kernel
            self.notices.append(f"session {self.files.name!r} was untrusted ({verdict.reason}); its files were replaced by a new session")
        if state == "dead":
            lines = _last_words(self.files)
            how = "\n".join(f"  {line}" for line in lines) or self.files.log_tail()
            if not restart:
                raise SessionError(
                    f"session {self.files.name!r} is dead: its kernel (pid {verdict.pid}) ended "
                    f"without shutting down, and its state is lost. Start a new one with --restart "
                    f"(KernelSession(..., restart=True)), or remove it with --stop.\n{how}".rstrip()
                )
            self.notices.append(f"session {self.files.name!r} had died and was restarted: its state was lost")
        if state == "ended":
            self.notices.append(
                f"session {self.files.name!r} had ended (idle timeout, or a client shut it down) and was started again: its state was lost"
            )
        if state == "running":
            self._same_options()
            return registry.connect(self.files, verdict)
        return registry.start(self.files, self.options)

    def _same_options(self) -> None:
        """A running session keeps the servers and artifact folder it started with: asking for others is an
        error that says so (and how to change them), never silently ignored; the same ones, or none, are fine."""
        if problem := registry.changed_options(self.files, self.options):
            raise SessionError(problem)

    # ---- steps ----------------------------------------------------------------------------------

    def step(
        self,
        code: str,
        timeout: float | None = None,
        *,
        data: Any = NO_DATA,
        on_output: OnOutput | None = None,
        max_output_chars: int | None = None,
        trace: bool = False,
    ) -> StepResult:
        """Run one step (serialised with every other client of this session); ``timeout`` in seconds.

        The timeout covers the wait for a busy session too: past it, the step is not run and its
        error is a TimeoutError saying who holds the session (as a step past its time limit is).
        ``data`` (any JSON) is the global ``data`` for this step only; ``on_output`` sees its output live;
        ``max_output_chars`` is this step's output limit (the session's otherwise); ``trace`` asks for
        the step's tool calls with their timings (``StepResult.calls``).
        """
        self._interrupted.clear()
        try:
            with self._lock(timeout, "running a step"):
                self._running = True
                try:
                    if self._interrupted.is_set():  # Ctrl-C as the wait ended: the step is not sent
                        raise steplock.WaitInterrupted("")
                    return self.channel.execute(code, timeout, on_output, data, StepOptions(timeout, max_output_chars, trace))
                except KernelDied:
                    lines = _last_words(self.files)
                    detail = "\n".join(lines) or self.files.log_tail()
                    raise SessionError(f"session {self.files.name!r} died during the step; its state is lost.\n{detail}".rstrip()) from None
                finally:
                    self._running = False
        except steplock.SessionBusy as busy:
            return StepResult(error=StepError("TimeoutError", str(busy), f"TimeoutError: {busy}"))
        except steplock.WaitInterrupted as busy:
            message = f"interrupted{f' while waiting ({busy})' if str(busy) else ''}: the step did not run"
            return StepResult(error=StepError("InterruptError", message, f"InterruptError: {message}"))

    async def astep(self, code: str, timeout: float | None = None, **step: Any) -> StepResult:
        """:meth:`step` (the same keyword options) without blocking the event loop; cancelling it interrupts the step."""
        import asyncio  # not at the top: the command line's warm path has no use for it

        task = asyncio.ensure_future(asyncio.to_thread(self.step, code, timeout, **step))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            self.interrupt()
            with contextlib.suppress(BaseException):
                await task
            raise

    def interrupt(self) -> None:
        """Stop the running step (InterruptError), or its wait for a busy session; globals and connections are kept. Thread-safe."""
        self._interrupted.set()
        if self._running:  # not while waiting: the kernel's step then is another client's
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



def _to_stderr(text: str) -> None:
    print(f"[mcp2repl] {text}", file=sys.stderr, flush=True)


def _last_words(files: SessionFiles) -> list[str]:
    """How the session's dead kernel ended, from its run folder (reported once; see rundir)."""
    from .. import rundir

    return rundir.previous_end(str(files.conn))
