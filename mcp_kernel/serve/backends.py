"""Where a client's steps run: a Session in this process, or a named session's kernel.

``mcp2repl serve`` gives each client connection an in-process :class:`~mcp_kernel.session.Session`
(no kernel, no ZMQ: a warm step is about a millisecond), and steps that name a session go to that
session's kernel through :class:`~mcp_kernel.client.KernelSession`, the very kernel ``mcp2repl
--session NAME`` and JupyterLab attach to. Both give the same :class:`StepResult`, and both report
their output live to a listener as IOPub-shaped messages (serve reads the call display from them for
progress, and images for image content). One step at a time per backend.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..client.inprocess import Collected, fold
from ..client.kernel_session import KernelSession
from ..client.registry import SessionError, StartOptions
from ..client.result import NO_DATA, Collector, StepError, StepResult
from ..session import Session, SessionOptions
from .options import ServeOptions

log = logging.getLogger(__name__)

Listener = Callable[[str, dict[str, Any]], None]
Ask = Callable[[str], Any]
#: The runtime API behind search_tools, describe_tool and list_servers, and the step that reaches it
#: in a kernel of another process (``data`` carries the arguments).
API_STEPS = {
    "tools.search": "return await tools.search(data)",
    "tools.describe": "return await tools.describe(data)",
    "api.servers": "return await api.servers()",
}


class ApiError(Exception):
    """A discovery request the runtime refused (an unknown tool path…): the message a cell would see."""


def session_options(o: ServeOptions, owns_process: bool) -> SessionOptions:
    """What ``mcp2repl -e`` would give its Session, from serve's options."""
    opts = SessionOptions(cwd=o.cwd, config=o.config, server=o.server, profile=o.profile, owns_process=owns_process)
    if o.timeout:
        opts.timeout = o.timeout
    if o.max_output_chars:
        opts.max_output_chars = o.max_output_chars
    if o.artifact_dir:
        opts.artifact_dir = (o.cwd / o.artifact_dir).absolute()
    return opts


def start_options(o: ServeOptions) -> StartOptions:
    """What ``mcp2repl --session`` would start a named session's kernel with."""
    return StartOptions(config=o.config, server=o.server, profile=o.profile, max_output_chars=o.max_output_chars, artifact_dir=o.artifact_dir)


class InProcess:
    """A Session of this process: a client connection's own globals, helpers and MCP connections."""

    def __init__(self, options: SessionOptions, label: str) -> None:
        self.label = label
        self.session = Session(options)
        self.last_used = time.monotonic()
        self._lock = asyncio.Lock()
        self._started: asyncio.Future[None] | None = None
        self.running: object | None = None  # the ticket of the step that runs now (see step)

    def start(self) -> None:
        """Start V8 and the servers now, in the background (a client's first step waits for it)."""
        if self._started is None:
            self._started = asyncio.ensure_future(self.session.start())

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    async def step(self, code: str, data: Any, timeout: float | None, ask: Ask | None, listener: Listener, ticket: object = None) -> StepResult:
        """Run one step; ``ticket`` is :attr:`running` while it does (a step still queued is cancelled, not interrupted)."""
        async with self._lock:
            self.start()
            assert self._started is not None
            await asyncio.shield(self._started)
            self.last_used = started = time.monotonic()
            collector = Collector()
            given = {} if data is NO_DATA else {"data": data}
            self.running = ticket
            try:
                result = await self.session.execute(code, Collected(collector, listener), progress="display", time_limit=timeout, ask=ask, **given)
            finally:
                self.running = None
            fold(collector, result)
            if result.data:
                listener("execute_result", {"data": result.data})
            self.last_used = time.monotonic()
            return collector.finish((self.last_used - started) * 1000)

    def interrupt(self) -> None:
        self.session.interrupt()

    async def api(self, name: str, params: dict[str, Any]) -> Any:
        self.start()
        assert self._started is not None
        await asyncio.shield(self._started)
        self.last_used = time.monotonic()
        try:
            return await self.session.call_api(name, params)
        except Exception as exc:  # noqa: BLE001 - the runtime's BridgeError (a bad path…), or why the server layer is missing
            raise ApiError(getattr(exc, "message", None) or str(exc)) from None

    def redact(self, text: str) -> str:
        return self.session.redactor.text(text)

    async def close(self) -> None:
        if self._started is not None:
            await asyncio.wait({self._started})
            await self.session.close()


class Named:
    """A named persistent session (``.mcp2repl/sessions/NAME``), attached on its first step, started if needed.

    Its kernel keeps running after the server ends, for ``mcp2repl --session NAME``, the step API and
    ``jupyter console --existing``. A question its kernel asks (the approval gate, a server's
    elicitation) cannot reach this server's client: the session's policy applies, as in ``--json`` steps.
    """

    def __init__(self, name: str, cwd: Path, options: StartOptions, timeout: float | None) -> None:
        self.label = f"session {name!r}"
        self.name = name
        self.cwd = cwd
        self.options = options
        self.timeout = timeout
        self.last_used = time.monotonic()
        self._kernel: KernelSession | None = None
        self._lock = asyncio.Lock()
        self.running: object | None = None

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    async def _attach(self) -> KernelSession:
        if self._kernel is None:
            kernel = await asyncio.to_thread(KernelSession, self.name, cwd=self.cwd, options=self.options, kind="serve")
            for line in kernel.notices:
                log.warning("%s", line)
            self._kernel = kernel
        return self._kernel

    async def step(self, code: str, data: Any, timeout: float | None, ask: Ask | None, listener: Listener, ticket: object = None) -> StepResult:
        async with self._lock:
            self.last_used = time.monotonic()
            loop = asyncio.get_running_loop()

            def relay(kind: str, content: dict[str, Any]) -> None:  # from the step's thread
                loop.call_soon_threadsafe(listener, kind, content)

            try:
                kernel = await self._attach()
                self.running = ticket
                return await asyncio.to_thread(kernel.step, code, timeout or self.timeout, data=data, on_output=relay)
            except SessionError as exc:  # dead (or unstartable): say so as the step's error, with what to do
                self._kernel = None
                return StepResult(error=StepError("SessionError", str(exc), f"SessionError: {exc}"))
            finally:
                self.running = None
                self.last_used = time.monotonic()

    def interrupt(self) -> None:
        if self._kernel is not None:
            self._kernel.interrupt()

    async def api(self, name: str, params: dict[str, Any]) -> Any:
        result = await self.step(API_STEPS[name], params, None, None, lambda kind, content: None)
        if result.error is not None:
            raise ApiError(result.error.message)
        return result.value

    def redact(self, text: str) -> str:
        return text  # the kernel masked what it sent

    async def close(self) -> None:
        """Let go of the kernel; it keeps running for its other clients."""
        if self._kernel is not None:
            await asyncio.to_thread(self._kernel.close)
            self._kernel = None
