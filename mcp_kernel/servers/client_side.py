"""What a connection does as the client side of MCP: answer the server's requests (elicitation,
``roots/list``, and at 2026-07-28 the input requests of :mod:`.mrtr`), tell it of roots that
changed, set its log level, run task tools and hold resource subscriptions (:mod:`.listen`). A
mixin of :class:`~.connection.ServerConnection`, kept apart so the connection's life cycle and
transports stay readable on their own.

Elicitation and roots are advertised only when this side can answer them: the SDK claims a
capability exactly when a callback is given, and the claim is fixed at ``initialize``. Roots are
offered only when the server's config lists folders: a server told the kernel's working folder
would take it as its scope (server-filesystem replaces the folders it was started with by the
client's roots), so a server configured for ``data/`` could read the whole project.
"""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from .. import compat
from . import elicitation, mrtr, tasks_ext
from .elicitation import Person
from .era import HEADER_MISMATCH, is_modern
from .limits import default_call_timeout
from .listen import Subscriptions
from .spec import ServerSpec
from .tasks import TaskRunner, runs_as_task

if TYPE_CHECKING:
    from .connection import Events

__all__ = ["ClientSide", "Person"]
# Logging, roots and resource subscriptions are deprecated in 2026-07-28 but still what 2025-11-25
# servers use: the SDK's warnings about them would only reach kernel logs (or cells) as noise.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

#: One elicitation dialog at a time, across servers: two forms must not interleave their questions.
_DIALOG = asyncio.Lock()


class ClientSide:
    """Client features of one connection; the connection supplies the attributes named below."""

    name: str
    spec: ServerSpec
    events: Events
    session: ClientSession | None
    capabilities: types.ServerCapabilities | None

    if TYPE_CHECKING:  # the connection's (a stub here would win over ToolListing's in the MRO)

        async def wait_ready(self) -> None: ...

        async def refresh_tools(self) -> None: ...

        def tool_named(self, name: str) -> types.Tool | None: ...

    def _init_client_side(self, spec: ServerSpec) -> None:
        #: the folders offered as the client's roots, the config's (None: no roots capability); api.setRoots changes them
        self.roots: list[str] | None = list(spec.roots) if spec.roots else None
        self.log_level: str | None = spec.log_level  # sent again after a reconnect
        self._tasks = TaskRunner()
        self.subscriptions = Subscriptions(relisten=self._refresh_after_lost_stream)

    def _callbacks(self) -> dict[str, Any]:
        """The ClientSession callbacks for what this side can answer (each one is a capability claim)."""
        return {
            "elicitation_callback": self._on_elicit if self.spec.elicitation != "decline" else None,
            "list_roots_callback": self._on_list_roots if self.roots is not None else None,
        }

    async def _after_initialize(self, session: ClientSession, capabilities: types.ServerCapabilities) -> None:
        # at 2026-07-28 the level already rides every request (ClientSession(log_level=...))
        if self.log_level is not None and capabilities.logging is not None and not is_modern(session):
            await _set_level(session, self.log_level)

    async def _call_tool(self, session: ClientSession, tool: str, args: dict[str, Any], limit: float | None, progress: Any) -> Any:
        """A tool call; tools that run as MCP tasks go through :class:`~.tasks.TaskRunner`."""
        stdio = self.spec.transport == "stdio"
        if is_modern(session):
            result = await self._modern_call(session, tool, args, limit, progress, stdio)
            if isinstance(result, tasks_ext.CreateTaskResult):  # the tasks extension: followed to its end
                return await tasks_ext.follow(session, result, limit, progress)
            return result
        if runs_as_task(self.tool_named(tool)):  # 2025-11-25 tasks (execution.taskSupport)
            return await self._tasks.call(session, tool, args, limit, progress)
        return await compat.call_tool(session, tool, args, limit, progress, stdio=stdio)

    async def _modern_call(self, session: ClientSession, tool: str, args: dict[str, Any], limit: float | None, progress: Any, stdio: bool) -> Any:
        """A 2026-07-28 call: the server may answer "input required" (asked, answered, retried) or a task."""
        try:
            return await mrtr.call_tool(session, tool, args, limit, progress, stdio)
        except MCPError as exc:  # headers built from a stale tool list: list again, resend once (as the SDK's Client)
            if exc.error.code != HEADER_MISMATCH:
                raise
        await self.refresh_tools()
        return await mrtr.call_tool(session, tool, args, limit, progress, stdio)

    async def _on_protocol_message(self, message: Any) -> None:
        if isinstance(message, types.ProgressNotification):  # a task's progress outlives its tools/call request
            await self._tasks.on_progress(message.params)
        elif isinstance(message, types.ResourceUpdatedNotification):
            self.events.resource_updated(self, str(message.params.uri))  # type: ignore[arg-type]

    # ---- requests from the server -------------------------------------------------------------

    async def _on_elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return await elicitation.answer(self.name, params, self.events.person(), self.spec.elicitation, self.events.notice, _DIALOG)

    async def _on_list_roots(self, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=Path(p).as_uri(), name=Path(p).name or p) for p in self.roots or []])

    # ---- controls from cells ------------------------------------------------------------------

    async def subscribe(self, uri: str) -> None:
        """Hear of changes to ``uri`` from now on, also after a reconnect (see :mod:`.listen`)."""
        await self.wait_ready()
        await self.subscriptions.add(self._session(), uri, self.spec.timeout or default_call_timeout())

    async def unsubscribe(self, uri: str) -> None:
        await self.subscriptions.remove(self.session, uri, self.spec.timeout or default_call_timeout())

    def _session(self) -> ClientSession:
        if self.session is None:
            raise ValueError(f'MCP server "{self.name}" disconnected')
        return self.session

    async def _refresh_after_lost_stream(self) -> None:
        """The listen stream was lost and is back: the server may have restarted, its tools with it."""
        await self.refresh_tools()

    async def set_roots(self, paths: list[str]) -> None:
        """Offer other folders as roots and tell the server (``notifications/roots/list_changed``)."""
        if self.roots is None:
            raise ValueError(
                f'server "{self.name}" was started without roots (its config lists none), so it was told this client has no roots; '
                f'to offer folders, list them in its "roots" in the config'
            )
        self.roots = list(paths)
        if self.session is not None and not is_modern(self.session):  # 2026-07-28: servers ask for roots when they need them
            await self.session.send_roots_list_changed()

    async def set_log_level(self, level: str) -> None:
        """``logging/setLevel`` (2025-11-25) or the level in each request's ``_meta`` (2026-07-28); remembered across reconnects."""
        await self.wait_ready()
        modern = is_modern(self.session)  # 2026-07-28 has no logging capability: any request may ask for log lines
        if not modern and self.capabilities is not None and self.capabilities.logging is None:
            raise ValueError(f'server "{self.name}" does not offer logging (no "logging" capability), so it has no level to set')
        assert self.session is not None
        if modern:  # no request: the level rides each request's _meta from now on
            compat.set_modern_log_level(self.session, level)
        else:
            async with asyncio.timeout(self.spec.timeout or default_call_timeout()):
                await _set_level(self.session, level)
        self.log_level = level


async def _set_level(session: ClientSession, level: str) -> None:
    await session.set_logging_level(level)  # type: ignore[arg-type]
