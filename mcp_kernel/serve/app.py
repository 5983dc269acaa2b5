"""The MCP server: the SDK's low-level ``Server`` with four tools mapped to Session steps.

Requests are the SDK's business (JSON-RPC, the handshake of either protocol era, cancellation,
progress tokens, elicitation round trips, sealing a 2026-07-28 retry's requestState); this module only decides which session a request's step
runs in (sessions.py), runs it so that a client's cancel interrupts it like Ctrl-C while its state
is kept, and turns the result into MCP content (content.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

from .. import __version__
from ..client.result import NO_DATA
from .asking import ClientAsker, can_ask
from .backends import ApiError, InProcess
from .content import Images, data_result, describe_text, error_result, search_text, servers_text
from .options import ServeOptions
from .rounds import RoundAsker, Running, Suspended, asks_by_rounds
from .sessions import SHARED, STDIO, Backend, Sessions
from .tools import INSTRUCTIONS, TOOLS, problem

log = logging.getLogger(__name__)

#: How long list_servers waits for servers still starting (seconds).
SERVERS_WAIT = 20.0


class ServeApp:
    """One server: its SDK ``Server``, its sessions, and the handlers of its four tools."""

    def __init__(self, options: ServeOptions) -> None:
        self.options = options
        self.sessions = Sessions(options)
        self.server: Server[Any] = Server(
            "mcp2repl",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )
        # requestState sealed and checked by the SDK: encrypted, bound to the call, expiring a minute after its step stops waiting
        security = RequestStateSecurity.ephemeral(ttl=options.answer_wait + 60)
        self.server.middleware.append(RequestStateBoundary(security, default_audience="mcp2repl"))
        self.suspended = Suspended(options.answer_wait)

    async def list_tools(self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        if params.request_state is not None:  # a retry with the answer to a suspended step's question (rounds.py)
            return await self.suspended.resume(ctx, params)
        args = params.arguments or {}
        if (why := problem(params.name, args)) is not None:
            return error_result(why)
        try:
            backend = self.sessions.by_name(args["session"]) if args.get("session") else self.sessions.for_connection(self.key(ctx))
        except ValueError as exc:
            return error_result(f"run: {exc}")
        if params.name == "run":
            return await self.run(ctx, backend, args)
        return await self.discover(backend, params.name, args)

    def key(self, ctx: ServerRequestContext[Any]) -> str:
        """The connection a request belongs to: stdio's one, else its MCP session (none: the shared one)."""
        if self.options.http is None:
            return STDIO
        headers = getattr(ctx.request, "headers", None)
        return (headers.get("mcp-session-id") if headers is not None else None) or SHARED

    # ---- run --------------------------------------------------------------------------------------

    async def run(self, ctx: ServerRequestContext[Any], backend: Backend, args: dict[str, Any]) -> types.CallToolResult | types.InputRequiredResult:
        running = Running(backend, Images())
        ask: ClientAsker | None = None
        if isinstance(backend, InProcess) and can_ask(ctx.session):
            ask = ClientAsker(ctx.session, ctx.request_id, backend.redact)
        elif isinstance(backend, InProcess) and asks_by_rounds(ctx.session):
            ask = RoundAsker(ctx.session, running, backend.redact)
        data = args["data"] if "data" in args else NO_DATA
        running.step = asyncio.ensure_future(backend.step(args["code"], data, args.get("timeout_s"), ask, running.listen, running.ticket))
        return await self.suspended.follow(ctx, running)

    # ---- search_tools, describe_tool, list_servers ------------------------------------------------

    async def discover(self, backend: Backend, name: str, args: dict[str, Any]) -> types.CallToolResult:
        try:
            if name == "search_tools":
                found = await backend.api("tools.search", {k: args[k] for k in ("query", "server", "limit", "offset") if k in args})
                return data_result(found, search_text(found))
            if name == "describe_tool":
                found = await backend.api("tools.describe", {"path": args["path"]})
                return data_result(found, describe_text(found))
            rows = await backend.api("api.servers", {"wait": True, "timeout": SERVERS_WAIT})
            return data_result({"servers": rows}, servers_text(rows))
        except ApiError as exc:
            return error_result(f"{name}: {exc}")
