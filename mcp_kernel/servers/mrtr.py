"""Multi round-trip requests (2026-07-28): a server that needs input answers ``InputRequiredResult``
instead of asking mid-call, and the client retries the same request with the answers.

The answers come from exactly where a 2025-11-25 server's ``elicitation/create`` is answered: the
session's callbacks (the person through Jupyter stdin, an MCP client through ``serve``, else the
server's ``elicitation`` policy; ``roots`` from the config). So a cell sees one behaviour whichever
revision its server speaks. ``tools/call``, ``resources/read`` and ``prompts/get`` can ask.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError

from .. import compat
from .era import unstamped

#: rounds of questions one request may ask before it is given up (the SDK's ``Client`` default)
MAX_ROUNDS = 10

Retry = Callable[[Any, str | None], Awaitable[Any]]


async def call_tool(session: ClientSession, tool: str, args: dict[str, Any], limit: float | None, progress: Any, stdio: bool) -> Any:
    """A ``tools/call`` whose input requests are answered; each round has the call's limit."""

    async def send(responses: Any = None, state: str | None = None) -> Any:
        return await compat.call_tool(
            session, tool, args, limit, progress, stdio=stdio, input_responses=responses, request_state=state, allow_input_required=True, allow_claimed=True
        )

    return unstamped(await settle(session, await send(), send, tool))


async def request(session: ClientSession, method: str, args: tuple[Any, ...]) -> Any:
    """``read_resource`` / ``get_prompt`` with their input requests answered (other requests as they are)."""
    if method not in ("read_resource", "get_prompt"):
        return await getattr(session, method)(*args)
    call = getattr(session, method)

    async def send(responses: Any = None, state: str | None = None) -> Any:
        return await call(*args, input_responses=responses, request_state=state, allow_input_required=True)

    return unstamped(await settle(session, await send(), send, method))


async def settle(session: ClientSession, first: Any, retry: Retry, what: str) -> Any:
    """``first`` itself, or, for an ``InputRequiredResult``, the result after its questions are answered."""
    if not isinstance(first, types.InputRequiredResult):
        return first

    async def dispatch(key: str, asked: types.InputRequest) -> Any:
        return await session.dispatch_input_request(ClientRequestContext(session=session, request_id=key), asked)

    try:
        return await compat.drive_input_required(first, dispatch, retry, MAX_ROUNDS)
    except compat.rounds_exceeded():
        raise MCPError(types.INTERNAL_ERROR, f"{what}: the server asked for input {MAX_ROUNDS} times without answering; given up") from None
    except BaseExceptionGroup as group:  # an answer failed inside the driver's task group: the first cause
        first_error = group.exceptions[0]
        while isinstance(first_error, BaseExceptionGroup) and first_error.exceptions:
            first_error = first_error.exceptions[0]
        raise first_error from None
