"""One MCP server connection, held for the kernel's whole life and reopened after a crash.

The SDK's transports and ``ClientSession`` are anyio context managers that must be entered and
left in the same task, so each connection owns a runner task that opens everything, publishes
the session, and then waits for ``close()``. Calls come from other tasks (one per JS call) and
use the published session concurrently. When the server dies, the runner records why; the next
call starts a fresh runner (a reconnect) and reports what changed in the tool list.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from mcp_kernel import __version__

from ..compat import session_closed
from . import mrtr, tasks_ext
from .authspec import login_advice
from .client_side import ClientSide, Person
from .era import MODERN_LOG_LEVEL, invalid_answer, negotiate, worded
from .limits import ERROR_LIMIT, capped, capped_result, default_call_timeout, shorten, start_timeout, tidy, timeout_hint
from .listing import ToolListing
from .remote import HttpTrace, describe_remote, open_remote
from .shown import neutral
from .spawn import Launch, Spawned, log_file, stop
from .spec import ServerSpec
from .stdio import StdioStatus, stdio_transport

log = logging.getLogger(__name__)

#: Who we say we are in ``initialize`` and each 2026-07-28 request's ``_meta`` (the SDK's default is ``mcp 0.1.0``).
CLIENT_INFO = types.Implementation(name="mcp2repl", version=__version__)

Notice = Callable[[str], None]
Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class ServerUnavailable(Exception):
    """The server is not running and could not be (re)started; the message says why."""


class _Closed(ConnectionError):
    """The session's reader saw the end of the connection."""


@dataclass
class Events:
    """What a connection tells the rest of the kernel, all optional."""

    notice: Notice = lambda text: None  # a line for the user (stderr of the running cell)
    tools_changed: Callable[[ServerConnection], None] = lambda conn: None
    log_message: Callable[[ServerConnection, str, str], None] = lambda conn, level, text: None
    show_login: Callable[[str, str], bool] = lambda server, url: False
    secret: Callable[[Any], None] = lambda values: None  # OAuth: show a login link to a person (False: none), mask tokens
    person: Callable[[], Person] = lambda: Person(None, in_cell=False)  # who can answer an elicitation now
    resource_updated: Callable[[ServerConnection, str], None] = lambda conn, uri: None  # notifications/resources/updated


class ServerConnection(ClientSide, ToolListing):
    """A live MCP client session to one configured server."""

    def __init__(self, spec: ServerSpec, log_dir: Path, events: Events | None = None) -> None:
        #: the call timeout as configured (None: the default); ``spec.timeout`` is the effective one
        self.configured_timeout = spec.timeout
        limit = tidy(spec.timeout) if spec.timeout is not None else default_call_timeout()
        self.spec = spec if spec.timeout == limit and type(spec.timeout) is type(limit) else dataclasses.replace(spec, timeout=limit)
        self.name = spec.name
        self.events = events or Events()
        self.log_path = log_file(log_dir, spec.name)
        self.state = "error" if spec.error else "stopped"
        self.last_error: str | None = spec.error
        self.server_info: types.Implementation | None = None
        self.capabilities: types.ServerCapabilities | None = None
        self.protocol: str | None = None  # the revision negotiated by the last connect (era.negotiate)
        self.session: ClientSession | None = None
        self.connects = 0
        self._runner: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop the runner lives on
        self._ready: asyncio.Future[None] | None = None
        self._closing: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._refresh: asyncio.Future[None] | None = None
        self._http = HttpTrace()
        self._deadline: asyncio.Timeout | None = None  # the start-up limit, paused while a person logs in
        self.process: StdioStatus | None = None  # the current stdio process: exit status, stray output
        self.early: Spawned | None = None  # its process, started before the MCP layer loaded (spawn.EarlyStarts)
        self._init_listing()
        self._init_client_side(spec)

    # ---- life cycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Begin connecting in the background; :meth:`wait_ready` waits for the outcome."""
        if self.spec.error or (self._runner is not None and not self._runner.done()):
            return
        loop = self._loop = asyncio.get_running_loop()
        self.state = "starting"
        self._ready = loop.create_future()
        self._closing = asyncio.Event()
        self._runner = asyncio.ensure_future(self._run(self._ready, self._closing))

    async def wait_ready(self) -> None:
        """Wait until connected; start (or restart after a crash) if needed."""
        if self.spec.error:
            raise ServerUnavailable(self.spec.error)
        if self.state == "ready":  # every call asks: no lock, no wait
            return
        async with self._lock:
            if self.state in ("stopped", "disconnected", "error", "needs_login"):
                restarting = self.connects > 0
                old = {t.name for t in self.tools}
                self.start()
                if restarting:
                    self.events.notice(f'[mcp2repl] reconnecting to MCP server "{self.name}" ({self.last_error or "disconnected"})')
                assert self._ready is not None
                await asyncio.shield(self._ready)
                if restarting:
                    self._report_tool_changes(old)
            elif self._ready is not None:
                await asyncio.shield(self._ready)
        if self.state == "needs_login":
            raise ServerUnavailable(self.last_error)
        if self.state != "ready":
            raise ServerUnavailable(f'MCP server "{self.name}" is unavailable: {self.last_error}')

    async def wait_started(self) -> None:
        """Wait for the current start attempt to end (ready or failed), without restarting."""
        if self._ready is not None:
            await asyncio.shield(self._ready)

    async def close(self, leaving: bool = False) -> None:
        """Close the session and stop the server's process tree (bounded: a stuck server is killed;
        ``leaving``: we exit next, so stdin is closed and the supervisor finishes the stop, spawn.stop).
        Safe from another event loop: the kernel shuts down from ipykernel's control thread, while
        the runner lives on the main loop, so the work is sent there."""
        home = self._loop
        if home is not None and home is not asyncio.get_running_loop():
            if home.is_running():
                done = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._close(leaving), home))
                await asyncio.wait({done}, timeout=8.0)
            return
        await self._close(leaving)

    async def _close(self, leaving: bool = False) -> None:
        if self.process is not None:
            self.process.leaving = leaving  # read by the transport as it ends (stdio.py)
        if self.early is not None:  # adopted, never opened: nothing else would stop it
            spawned, self.early = self.early, None
            await stop(spawned.process, wait=not leaving)
        runner = self._runner
        if runner is None or runner.done():
            self.state = "stopped" if not self.spec.error else "error"
            return
        assert self._closing is not None
        self._closing.set()
        if self.state == "starting":
            self.state = "stopped"  # given up now, whatever the wind-down takes (the next cell may ask at once)
            runner.cancel()  # a start is not worth finishing (kernel shutdown has ~2 s); the transport still stops the server
        # the stdio transport's shutdown is bounded (~3.5 s for a server that ignores everything)
        if not (await asyncio.wait({runner}, timeout=5.0))[0]:
            runner.cancel()
            await asyncio.wait({runner}, timeout=2.0)
        self.state = "stopped"
        self.session = None

    async def _run(self, ready: asyncio.Future[None], closing: asyncio.Event) -> None:
        self.connects += 1
        self._http = HttpTrace()
        try:
            async with contextlib.AsyncExitStack() as stack:
                # asyncio.timeout, not wait_for: the transport's anyio scopes must be entered and
                # left in this very task, and wait_for would run the entry in another one.
                async with asyncio.timeout(start_timeout()) as self._deadline:
                    read, write = await self._open_transport(stack)
                    # no sampling callback: the client then does not advertise it; elicitation and
                    # roots only when configured to answer (the capability is fixed at initialize);
                    # no session-wide read timeout: start-up has its own limit, each request its own
                    session = await stack.enter_async_context(
                        ClientSession(
                            read,
                            write,
                            logging_callback=self._on_log,
                            message_handler=self._on_message,
                            **self._callbacks(),
                            client_info=CLIENT_INFO,
                            log_level=self.log_level or MODERN_LOG_LEVEL,  # 2026-07-28 only: rides every request's _meta
                            **tasks_ext.session_options(),  # 2026-07-28 task tools (an extension)
                        )
                    )
                    self.protocol = await negotiate(session, self.spec.transport)
                    self.server_info = session.server_info
                    self.capabilities = capabilities = session.server_capabilities or types.ServerCapabilities()
                    await self._fetch_tools(session)
                    await self._after_initialize(session, capabilities)
                    stack.push_async_callback(self.subscriptions.stop)  # LIFO: before the session closes
                    try:
                        await self.subscriptions.renew(session, start_timeout())
                    except Exception as exc:  # noqa: BLE001 - the server works without them: said, not fatal
                        self.events.notice(f'[mcp2repl] MCP server "{self.name}" did not take its subscriptions again: {shorten(str(exc), ERROR_LIMIT)}')
                self._deadline = None  # a login later on (a revoked token) has no start-up limit to pause
                self.session = session
                self.state = "ready"
                self.last_error = None
                self.events.tools_changed(self)  # in the same step: whoever sees "ready" finds its tools in the catalog
                ready.set_result(None)
                await self._hold(session, closing)
        except asyncio.CancelledError:
            self._fail(ready, "connection cancelled")
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure becomes the server's state
            self._fail(ready, self._describe(exc, started=ready.done()))
        else:
            self.state = "stopped"
        finally:
            self.session = None

    async def _hold(self, session: ClientSession, closing: asyncio.Event) -> None:
        """Keep the session open until close(), or until the server goes away.

        The SDK notices end-of-stream only on its dispatcher; without this check a crashed
        server would look alive until the next call failed.
        """
        while not closing.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(closing.wait(), 0.25)
            if session_closed(session):
                raise _Closed("the server closed the connection")

    def _waiting_for_login(self, on: bool) -> None:
        """A person (or open_with) is logging in: the start-up limit must not cut them short."""
        deadline, loop = self._deadline, asyncio.get_running_loop()
        if deadline is not None and not deadline.expired() and self.state == "starting":
            deadline.reschedule(None if on else loop.time() + start_timeout())

    def _fail(self, ready: asyncio.Future[None], reason: str) -> None:
        started = ready.done()
        login = self._http.auth is not None and self._http.auth.needs_login
        if not (self._closing and self._closing.is_set()):  # a close sets the state itself
            self.state = "needs_login" if login else "disconnected" if started else "error"
        self.last_error = reason = login_advice(self.name, headless=False) if login else reason
        if not ready.done():
            ready.set_result(None)
        elif not (self._closing and self._closing.is_set()):
            self.events.notice(f'[mcp2repl] MCP server "{self.name}" disconnected: {reason}')

    def launch(self) -> Launch:
        """How this stdio server's process starts (an early one is adopted only if it matches)."""
        return Launch.of(self.spec, self.log_path)

    async def _open_transport(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Any]:
        spec = self.spec
        self.process = None
        if spec.transport == "stdio":
            self.process = StdioStatus(who=f'MCP server "{self.name}"')
            launch, spawned, self.early = self.launch(), self.early, None  # Launch.of: a stdio spec has a command
            transport = stdio_transport(launch.command, launch.args, env=dict(launch.env), cwd=launch.cwd, log_path=launch.log_path, status=self.process, spawned=spawned)
            return await stack.enter_async_context(transport)
        from .auth import LoginHooks  # the OAuth flow and httpx2: loaded for a remote server only

        hooks = LoginHooks(show=self.events.show_login, waiting=self._waiting_for_login, secret=self.events.secret)
        return await open_remote(spec, stack, self._http, hooks)

    def _describe(self, exc: BaseException, started: bool = True) -> str:
        """One line naming the cause: exit status, bad output and the last stderr lines of a stdio server, the URL of a remote one."""
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        spec, process = self.spec, self.process
        ended = process.exit_text() if process is not None else None
        closed = isinstance(exc, _Closed) or (isinstance(exc, MCPError) and exc.error.code == types.CONNECTION_CLOSED)
        if isinstance(exc, asyncio.TimeoutError):
            text = f"no answer within {start_timeout():g} s during start-up (MCP2REPL_START_TIMEOUT)"
        elif (invalid := invalid_answer(exc, self.protocol)) is not None:
            text = invalid
        elif isinstance(exc, FileNotFoundError):
            text = f"command not found: {spec.command}"
        elif closed and process is not None and process.oversize is not None:
            text = "mcp2repl closed the connection"
        elif closed and ended and not started:
            text = f"the server {ended} during start-up"
        elif closed:
            text = "the server closed the connection" + (f" (its process {ended})" if ended else "")
        else:  # httpx adds a line pointing at MDN to its status errors
            text = shorten((str(exc) or type(exc).__name__).split("\nFor more information check:")[0], ERROR_LIMIT)
        if spec.url:
            text = describe_remote(spec, text, self._http)
        if process is not None:
            problems = process.stdout_text()
            if problems:
                text += f"; {problems}"
            tail = process.stderr_tail()
            if tail:
                text += f" (server stderr: {' | '.join(line.strip() for line in tail)})"
        return neutral(text, one_line=True)  # it quotes the server (its stderr, its error messages)

    # ---- requests -------------------------------------------------------------------------

    async def call_tool(
        self,
        tool: str,
        args: dict[str, Any],
        timeout: float | None = None,
        progress: Progress | None = None,
    ) -> types.CallToolResult:
        """Call ``tool``. Raises ServerUnavailable, or MCPError (a timeout: code REQUEST_TIMEOUT).

        Every call has a limit: ``timeout`` (from the cell), else the server's configured
        ``timeout``, else :func:`default_call_timeout`. Error messages and the text of error
        results are cut to :data:`ERROR_LIMIT` characters.
        """
        await self.wait_ready()
        session = self.session
        if session is None:
            raise ServerUnavailable(f'MCP server "{self.name}" is unavailable: {self.last_error}')
        per_call = timeout is not None and timeout > 0
        limit = timeout if per_call else self.spec.timeout
        try:
            result = await self._call_tool(session, tool, args, limit, progress)
        except MCPError as exc:
            if exc.error.code == types.REQUEST_TIMEOUT:
                raise MCPError(types.REQUEST_TIMEOUT, self._timeout_hint(limit, per_call)) from None
            if exc.error.code != types.CONNECTION_CLOSED:
                raise capped(worded(exc, self.name)) from None
            reason: BaseException = exc
        except (ConnectionError, EOFError, OSError, BaseExceptionGroup) as exc:
            reason = exc
        except ValueError as exc:  # pydantic's: a result the revision does not allow
            if (text := invalid_answer(exc, self.protocol)) is None:
                raise
            raise MCPError(types.INTERNAL_ERROR, text) from None
        else:
            return capped_result(result) if result.is_error else result
        if self._closing is not None and self._closing.is_set():
            raise ServerUnavailable(f'MCP server "{self.name}" was closed during {tool} (api.disconnect, a reconnect or shutdown)') from reason
        # give the runner a moment to notice, so the message and the next call agree
        runner = self._runner
        if runner is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(runner), 3.0)
        raise ServerUnavailable(
            f'MCP server "{self.name}" disconnected during {tool}: {self.last_error or self._describe(reason)}'
        ) from reason

    def _timeout_hint(self, limit: float | None, per_call: bool) -> str:
        problems = self.process.stdout_text() if self.process is not None else None
        return timeout_hint(self.name, limit, per_call=per_call, configured=self.configured_timeout is not None, problems=problems)

    async def request(self, method: str, *args: Any) -> Any:
        """resources/prompts requests (``list_resources``, ``read_resource``, ``list_prompts``, ``get_prompt``), with the server's call limit."""
        await self.wait_ready()
        assert self.session is not None
        limit = self.spec.timeout or default_call_timeout()
        try:
            async with asyncio.timeout(limit):
                return await mrtr.request(self.session, method, args)
        except TimeoutError:
            hint = self._timeout_hint(limit, False)
            raise MCPError(types.REQUEST_TIMEOUT, f"no answer to {method} within {limit:g} s ({hint})") from None
        except MCPError as exc:
            raise capped(worded(exc, self.name)) from None
        except ValueError as exc:
            if (text := invalid_answer(exc, self.protocol)) is None:
                raise
            raise MCPError(types.INTERNAL_ERROR, text) from None

    # ---- notifications ----------------------------------------------------------------------

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        data = params.data if isinstance(params.data, str) else repr(params.data)
        self.events.log_message(self, params.level, data)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._refresh = asyncio.ensure_future(self._refresh_quietly())
        elif isinstance(message, types.ProgressNotification | types.ResourceUpdatedNotification):
            await self._on_protocol_message(message)

    async def _refresh_quietly(self) -> None:
        try:
            await self.refresh_tools()
        except Exception as exc:  # noqa: BLE001 - a failed refresh keeps the old list
            log.debug("tool refresh of %s failed: %s", self.name, exc)

    def log_tail(self, lines: int = 50) -> str:
        """The last ``lines`` lines the server wrote to stderr."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(max(0, fh.seek(0, os.SEEK_END) - 64 * 1024))
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

