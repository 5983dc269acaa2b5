"""What a connection does as the client side of MCP: answer the server's requests (elicitation,
``roots/list``), tell it of roots that changed, set its log level, run task tools and hear of
updated resources. A mixin of :class:`~.connection.ServerConnection`, kept apart so the
connection's life cycle and transports stay readable on their own.

Elicitation and roots are advertised only when this side can answer them: the SDK claims a
capability exactly when a callback is given, and the claim is fixed at ``initialize``.
"""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import ClientSession
from mcp.shared.exceptions import MCPDeprecationWarning

from .. import compat
from . import elicitation
from .elicitation import Person
from .limits import default_call_timeout
from .spec import ServerSpec
from .tasks import TaskRunner, runs_as_task

if TYPE_CHECKING:
    from .connection import Events

__all__ = ["ClientSide", "Person"]
# This client speaks 2025-11-25 on purpose (servers do): the SDK's warnings that logging, roots and
# resource subscriptions are deprecated in 2026-07-28 would only reach kernel logs as noise.
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

    async def wait_ready(self) -> None: ...

    def tool_named(self, name: str) -> types.Tool | None: ...

    def _init_client_side(self, spec: ServerSpec, root_dir: Path) -> None:
        #: the folders offered as the client's roots (None: no roots capability); api.setRoots changes them
        self.roots: list[str] | None = None if spec.roots is False else list(spec.roots or [str(root_dir)])
        self.log_level: str | None = spec.log_level  # sent again after a reconnect
        self._tasks = TaskRunner()

    def _callbacks(self) -> dict[str, Any]:
        """The ClientSession callbacks for what this side can answer (each one is a capability claim)."""
        return {
            "elicitation_callback": self._on_elicit if self.spec.elicitation != "decline" else None,
            "list_roots_callback": self._on_list_roots if self.roots is not None else None,
        }

    async def _after_initialize(self, session: ClientSession, capabilities: types.ServerCapabilities) -> None:
        if self.log_level is not None and capabilities.logging is not None:
            await _set_level(session, self.log_level)

    async def _call_tool(self, session: ClientSession, tool: str, args: dict[str, Any], limit: float | None, progress: Any) -> Any:
        """A tool call; tools that run as MCP tasks go through :class:`~.tasks.TaskRunner`."""
        if runs_as_task(self.tool_named(tool)):
            return await self._tasks.call(session, tool, args, limit, progress)
        return await compat.call_tool(session, tool, args, limit, progress, stdio=self.spec.transport == "stdio")

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

    async def set_roots(self, paths: list[str]) -> None:
        """Offer other folders as roots and tell the server (``notifications/roots/list_changed``)."""
        if self.roots is None:
            raise ValueError(f'server "{self.name}" was started with "roots": false, so it was told this client has no roots')
        self.roots = list(paths)
        if self.session is not None:
            await self.session.send_roots_list_changed()

    async def set_log_level(self, level: str) -> None:
        """``logging/setLevel``; remembered, so a reconnect sends it again."""
        await self.wait_ready()
        if self.capabilities is not None and self.capabilities.logging is None:
            raise ValueError(f'server "{self.name}" does not offer logging (no "logging" capability), so it has no level to set')
        assert self.session is not None
        async with asyncio.timeout(self.spec.timeout or default_call_timeout()):
            await _set_level(self.session, level)
        self.log_level = level


async def _set_level(session: ClientSession, level: str) -> None:
    await session.set_logging_level(level)  # type: ignore[arg-type]
