"""The Python side of the client's protocol controls: ``api.setLogLevel``, ``api.setRoots`` and
resource subscriptions (``mcp.<server>.resources.subscribe``), see mcp.js.

A subscription's callback lives in JS; Python keeps which cell subscribed, so when the server
sends ``notifications/resources/updated`` the event goes to that cell (its output lands there,
as a timer's does) and JS runs the callback as soon as the engine is free, also between cells.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine import BridgeError, CallContext, Engine
from .tools import Servers, _server_named

#: MCP log levels (syslog's), lowest first.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass
class Subscription:
    server: str
    uri: str
    cell: str


def _absolute(base: Path, path: str) -> str:
    """``path`` against the session's folder, ``~`` expanded (no file system access)."""
    return os.path.normpath(base / os.path.expanduser(path))


class ProtocolApi:
    """Handlers for log levels, roots and resource subscriptions."""

    def __init__(self, servers: Servers, base_dir: Path) -> None:
        self.servers = servers
        self.base_dir = base_dir
        self.engine: Engine | None = None
        self.subscriptions: dict[int, Subscription] = {}
        self._ids = itertools.count(1)

    def register(self, engine: Engine) -> ProtocolApi:
        self.engine = engine
        engine.register("api.setLogLevel", self.set_log_level)
        engine.register("api.setRoots", self.set_roots)
        engine.register("mcp.subscribe", self.subscribe)
        engine.register("mcp.unsubscribe", self.unsubscribe)
        return self

    async def set_log_level(self, params: dict[str, Any], ctx: CallContext) -> Any:
        conn = _server_named(await self.servers.get(), params["server"])
        level = params.get("level")
        if level not in LEVELS:
            raise BridgeError("TypeError", f"api.setLogLevel: the level must be one of {', '.join(LEVELS)}, got {level!r}")
        await self._run(conn.name, conn.set_log_level(level))
        return {"server": conn.name, "level": level}

    async def set_roots(self, params: dict[str, Any], ctx: CallContext) -> Any:
        conn = _server_named(await self.servers.get(), params["server"])
        paths = params.get("paths")
        if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
            raise BridgeError("TypeError", "api.setRoots: paths must be a list of folder paths, e.g. api.setRoots('fs', ['data'])")
        absolute = [_absolute(self.base_dir, p) for p in paths]
        await self._run(conn.name, conn.set_roots(absolute))
        return {"server": conn.name, "roots": absolute}

    async def subscribe(self, params: dict[str, Any], ctx: CallContext) -> Any:
        conn = _server_named(await self.servers.get(), params["server"])
        uri = str(params["uri"])
        await self._run(conn.name, conn.wait_ready())
        caps = conn.capabilities.resources if conn.capabilities is not None else None
        if caps is None or not caps.subscribe:
            raise BridgeError("ToolError", f'"{conn.name}" does not offer resource subscriptions (its resources capability has no "subscribe")')
        await self._run(conn.name, conn.subscribe(uri))
        sub_id = next(self._ids)
        self.subscriptions[sub_id] = Subscription(conn.name, uri, ctx.cell)
        return {"id": sub_id}

    async def unsubscribe(self, params: dict[str, Any], ctx: CallContext) -> Any:
        sub = self.subscriptions.pop(int(params["id"]), None)
        if sub is None:
            return False
        manager = await self.servers.get()
        conn = manager.find_server(sub.server)
        if conn is not None:  # a disconnected server only forgets it (it is not told again after a reconnect)
            await self._run(conn.name, conn.unsubscribe(sub.uri))
        return True

    def updated(self, server: str, uri: str) -> None:
        """notifications/resources/updated: each matching subscription's callback runs in its cell."""
        if self.engine is None:
            return
        for sub_id, sub in list(self.subscriptions.items()):
            if sub.server == server and sub.uri == uri:
                self.engine.post(sub.cell, "mcp.resourceUpdated", {"id": sub_id, "server": server, "uri": uri})

    async def _run(self, server: str, work: Any) -> Any:
        """Await ``work``; the server's refusals and outages become errors the cell can read."""
        from .tools import _sdk

        mcp_error, unavailable, _, _ = _sdk()
        try:
            return await work
        except (unavailable, ValueError) as exc:
            raise BridgeError("ToolError", str(exc), server=server) from None
        except mcp_error as exc:
            raise BridgeError("ToolError", f"{server}: {exc.error.message}", server=server, code=str(exc.error.code)) from None  # type: ignore[attr-defined]
