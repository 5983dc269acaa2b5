"""The MCP server: the SDK's low-level ``Server`` with four tools mapped to Session steps.

Requests are the SDK's business (JSON-RPC, the handshake of either protocol era, cancellation,
progress tokens, elicitation round trips); this module only decides which session a request's step
runs in (sessions.py), runs it so that a client's cancel interrupts it like Ctrl-C while its state
is kept, and turns the result into MCP content (content.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from .. import __version__
from ..client.result import NO_DATA, StepError, StepResult
from .asking import ClientAsker, can_ask
from .backends import ApiError, InProcess
from .content import Images, data_result, describe_text, error_result, search_text, servers_text, step_result
from .options import ServeOptions
from .progress import StepProgress
from .sessions import SHARED, STDIO, Backend, Sessions
from .tools import INSTRUCTIONS, TOOLS, problem

log = logging.getLogger(__name__)

#: Seconds a cancelled step gets to stop after its interrupt before the request is let go anyway.
STOP_GRACE = 30.0
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

    async def list_tools(self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
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

    async def run(self, ctx: ServerRequestContext[Any], backend: Backend, args: dict[str, Any]) -> types.CallToolResult:
        images = Images()
        progress = StepProgress(lambda n, text: ctx.session.report_progress(n, None, text)) if _progress_token(ctx) is not None else None

        def listen(kind: str, content: dict[str, Any]) -> None:
            images.listen(kind, content)
            if progress is not None:
                progress.listen(kind, content)

        ask = ClientAsker(ctx.session, ctx.request_id, backend.redact) if isinstance(backend, InProcess) and can_ask(ctx.session) else None
        data = args["data"] if "data" in args else NO_DATA
        ticket = object()
        step = asyncio.ensure_future(backend.step(args["code"], data, args.get("timeout_s"), ask, listen, ticket))
        ticker = asyncio.ensure_future(_quietly(progress.run())) if progress is not None else None
        try:
            result = await asyncio.shield(step)
        except asyncio.CancelledError:  # notifications/cancelled, or the client went away: like Ctrl-C
            if backend.running is ticket:
                backend.interrupt()
            else:  # still waiting for an earlier step of its session: it never starts
                step.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.wait({step}, timeout=STOP_GRACE)
            raise
        except Exception as exc:  # a broken step must still answer, with what happened
            log.exception("a step failed inside mcp2repl")
            result = StepResult(error=StepError("InternalError", f"mcp2repl could not run the step: {type(exc).__name__}: {exc}", ""))
        finally:
            if ticker is not None:
                ticker.cancel()
        return step_result(result, images)

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


def _progress_token(ctx: ServerRequestContext[Any]) -> Any:
    meta: Any = ctx.meta or {}
    return meta.get("progressToken", meta.get("progress_token")) if isinstance(meta, dict) else getattr(meta, "progress_token", None)


async def _quietly(ticking: Any) -> None:
    """Progress is a courtesy: a client that cannot take it (gone, or a closed stream) must not end the step."""
    try:
        await ticking
    except asyncio.CancelledError:
        raise
    except Exception:
        log.debug("progress notification failed", exc_info=True)
