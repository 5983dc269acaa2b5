"""A connection's tool list: fetched whole (every page), indexed by name, refreshed when the server
says it changed, and compared after a refresh or reconnect so the user hears what was added or
removed. A mixin of :class:`~.connection.ServerConnection`, apart from its life cycle because the
list has its own rules: paging limits, and under 2026-07-28 the server's cache hint ``ttlMs`` (a
reconnect within it keeps the list; a list_changed event always fetches it again).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import mcp_types as types
from mcp.client.session import ClientSession

from .. import compat
from .era import is_modern
from .limits import default_call_timeout
from .spec import ServerSpec

if TYPE_CHECKING:
    from .connection import Events


class ToolListing:
    """The tools of one connection; the connection supplies the attributes named below."""

    name: str
    spec: ServerSpec
    events: Events
    session: ClientSession | None

    def _init_listing(self) -> None:
        self.tools: list[types.Tool] = []
        self._indexed: list[types.Tool] | None = None
        self._by_name: dict[str, types.Tool] = {}
        self._fresh_until = 0.0  # loop time until which the server said its list stays valid (ttlMs)

    def tool_named(self, name: str) -> types.Tool | None:
        """Asked on every call (does the tool run as a task?): an index, rebuilt when the list is replaced."""
        if self._indexed is not self.tools:
            self._indexed, self._by_name = self.tools, {t.name: t for t in self.tools}
        return self._by_name.get(name)

    async def _fetch_tools(self, session: ClientSession) -> None:
        """The whole list, at start-up (under the start-up limit). A 2026-07-28 server's list that
        is still fresh (its ``ttlMs`` not yet over, no list_changed since) is kept, not fetched
        again: the new session learns it as if it had listed it."""
        if is_modern(session) and self.tools and asyncio.get_running_loop().time() < self._fresh_until:
            compat.absorb_listing(session, self.tools)
            return
        await self._list(session)

    async def refresh_tools(self) -> None:
        """Fetch the list again (the server said it changed, or may have restarted) and say what changed."""
        if self.session is None:
            return
        old = {t.name for t in self.tools}
        async with asyncio.timeout(self.spec.timeout or default_call_timeout()):
            await self._list(self.session)
        self._report_tool_changes(old)

    async def _list(self, session: ClientSession) -> None:
        started = asyncio.get_running_loop().time()
        self.tools, ttl_ms = await list_all_tools(session)
        self._fresh_until = started + ttl_ms / 1000 if is_modern(session) else 0.0

    def _report_tool_changes(self, old: set[str]) -> None:
        new = {t.name for t in self.tools}
        if new != old:
            parts = []
            if new - old:
                parts.append("added " + ", ".join(sorted(new - old)))
            if old - new:
                parts.append("removed " + ", ".join(sorted(old - new)))
            self.events.notice(f'[mcp2repl] tools of "{self.name}" changed: ' + "; ".join(parts))
        self.events.tools_changed(self)


async def list_all_tools(session: ClientSession) -> tuple[list[types.Tool], int]:
    """Every page, and how long (ms) the whole list stays valid: the shortest ``ttlMs`` of its pages."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    ttl_ms: int | None = None
    for _ in range(1000):  # a server that keeps returning cursors must not hang us
        result = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(result.tools)
        ttl_ms = result.ttl_ms if ttl_ms is None else min(ttl_ms, result.ttl_ms)
        cursor = result.next_cursor
        if not cursor:
            break
    return tools, ttl_ms or 0
