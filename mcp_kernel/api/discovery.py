"""The Python side of ``api.searchTools``, ``api.library``, ``api.describeTool``, ``api.listTools``
and ``api.guide`` (see discovery.js). Ranking and docs are the servers part's; guidance is guide.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..engine import BridgeError, CallContext, Engine
from ..servers import discovery
from ..servers.catalog import ToolLookupError
from ..servers.search import QueryTooLong
from .tools import Servers

Handler = Callable[[Any, CallContext], Awaitable[Any]]


def bounded(name: str, handler: Handler) -> Handler:
    """A search handler whose over-long query is the cell's RangeError, quoting only the query's start."""

    async def run(params: Any, ctx: CallContext) -> Any:
        try:
            return await handler(params, ctx)
        except QueryTooLong as exc:
            raise BridgeError("RangeError", f"{name}: {exc}") from None

    return run


class DiscoveryApi:
    """Discovery answers about every server, so each handler waits briefly for servers still starting."""

    def __init__(self, servers: Servers, approval: Callable[[Any], str] = lambda entry: "", mask: Callable[[str], str] = str) -> None:
        self.servers = servers
        self.mask = mask  # configured secrets out of notes: an empty search repeats servers' errors (their stderr)
        self.approval = approval  # one line: does a call need a person's approval, and why (ToolsApi.approval_of)
        self.index = discovery.ToolIndex()  # rebuilt on the first search after a catalog change

    def register(self, engine: Engine) -> None:
        engine.register("api.searchTools", bounded("api.searchTools", self.search))
        engine.register("api.library", bounded("api.library", self.library))
        engine.register("api.describeTool", self.describe)
        engine.register("api.listTools", self.list_tools)
        engine.register("api.guide", bounded("api.guide", self.guide))

    async def search(self, params: dict[str, Any], ctx: CallContext) -> Any:
        manager = await self.servers.get()
        opts = params.get("options") or {}
        found = self.index.sync(await manager.settled_entries(), manager.rows()).search(
            str(params.get("query") or ""), limit=int(opts.get("limit", 8)), offset=int(opts.get("offset", 0)), server=opts.get("server")
        )
        if "note" in found:
            found["note"] = self.mask(found["note"])
        return found

    async def library(self, params: dict[str, Any], ctx: CallContext) -> Any:
        manager = await self.servers.get()
        opts = params.get("options") or {}
        index = self.index.sync(await manager.settled_entries(), manager.rows())
        docs, note = discovery.library(index, str(params.get("query") or ""), int(opts.get("limit", 6)), manager.observed)
        return {"docs": docs, "note": self.mask(note)}  # discovery.js writes the note on stderr and returns the docs

    async def describe(self, params: dict[str, Any], ctx: CallContext) -> Any:
        manager = await self.servers.get()
        await manager.settled_entries()
        target = {"server": params["server"], "tool": params["tool"]} if params.get("server") else {"name": params["tool"]}
        try:
            entry = manager.catalog.resolve(target)
        except ToolLookupError as exc:
            raise BridgeError("TypeError", str(exc)) from None
        key = (entry.server, entry.name)
        return {**discovery.describe(entry, manager.observed.get(key), manager.observed.source(key)), "approval": self.approval(entry)}

    async def list_tools(self, params: dict[str, Any], ctx: CallContext) -> Any:
        manager = await self.servers.get()
        opts = params.get("options") or {}
        return discovery.list_tools(await manager.settled_entries(), schemas=bool(opts.get("schemas", False)), server=opts.get("server"))

    async def guide(self, params: dict[str, Any], ctx: CallContext) -> Any:
        opts = params.get("options") or {}
        query = str(params.get("query") or "")
        from . import guide  # its index is built on import: only a session that asks pays for it

        entries = guide.guide(query, int(opts.get("limit", 6)))
        return {"entries": entries, "note": "" if entries else guide.no_match_note(query)}
