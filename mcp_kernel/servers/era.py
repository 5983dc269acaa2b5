"""Which MCP revision a connection speaks, and what the newest one's errors mean to a user.

The kernel speaks 2026-07-28 (the stateless core: no ``initialize``, every request carries its
``_meta``) to servers that know it, and 2025-11-25 or older to the rest. The SDK's ``auto``
policy settles it per connection: ``server/discover`` first, ``initialize`` when the server does
not know the probe. The legacy HTTP+SSE transport predates 2026 and skips the probe.
"""

from __future__ import annotations

from typing import Any

from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from .. import compat

#: the revision without the handshake (2026-07-28 and later use ``server/discover``)
MODERN = "2026-07-28"
HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION = -32020, -32021, -32022
#: the ``_meta`` key a 2026-07-28 server stamps on every result: who it is (already in api.servers())
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
#: the level a 2026-07-28 request asks for when the config sets none: such a server sends no log
#: lines at all without one, and api.serverLog (and a cell's note of its first error) should see
#: what an older server of the same code would send
MODERN_LOG_LEVEL = "info"


async def negotiate(session: ClientSession, transport: str) -> str:
    """Settle the revision and return it (the session then stamps every request for it)."""
    if transport == "sse":
        await session.initialize()
    else:
        await compat.negotiate(session)
    return session.protocol_version or "unknown"


def is_modern(session: ClientSession | None) -> bool:
    """Does this session speak a revision without the handshake (2026-07-28 or later)?"""
    return session is not None and session.discover_result is not None


def unstamped(result: Any) -> Any:
    """``result`` without the server's identity in its ``_meta``: display-only, the same on every
    result, and bytes an agent would pay for in each raw result it reads."""
    meta = getattr(result, "meta", None)
    if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
        rest = {k: v for k, v in meta.items() if k != SERVER_INFO_KEY}
        result.meta = rest or None
        if not rest:
            result.model_fields_set.discard("meta")
    return result


def worded(exc: MCPError, server: str) -> MCPError:
    """``exc``, or for a code 2026-07-28 added, the same error in words a user can act on."""
    text = describe_error(server, exc.error.code, exc.error.message, exc.error.data)
    return exc if text is None else MCPError(exc.error.code, text, exc.error.data)


#: why mcp2repl did not offer a client capability a server needs
NOT_OFFERED = {
    "elicitation": 'elicitation (its config says "elicitation": "decline"; "ask" or "defaults" offer it)',
    "roots": 'roots (its config lists no "roots")',
    "sampling": "sampling (mcp2repl does not offer it)",
}


def describe_error(server: str, code: int, message: str, data: Any = None) -> str | None:
    """The error codes 2026-07-28 added, in words a user can act on (None: not one of them)."""
    if code == HEADER_MISMATCH:  # mcp2repl re-lists the tools and resends once before this reaches anyone
        return f'MCP server "{server}" says the request\'s MCP headers do not match its body, even after its tools were listed again ({message})'
    if code == MISSING_CAPABILITY:
        needed = data.get("requiredCapabilities") if isinstance(data, dict) else None
        names = sorted(needed) if isinstance(needed, dict) and needed else []
        what = ", ".join(NOT_OFFERED.get(n, n) for n in names) or "a client capability"
        return f'MCP server "{server}" needs {what}, which mcp2repl did not offer it'
    if code == UNSUPPORTED_VERSION:
        supported = data.get("supported") if isinstance(data, dict) else None
        theirs = ", ".join(str(v) for v in supported) if isinstance(supported, list) and supported else "other revisions"
        return f'MCP server "{server}" speaks MCP {theirs}; mcp2repl speaks 2026-07-28 and 2025-11-25 (and older)'
    return None


def invalid_answer(exc: Exception, version: str | None) -> str | None:
    """A result the SDK refused as invalid for the revision (2026-07-28 requires ``resultType`` on
    every result, cache hints on lists), said in one line instead of pydantic's dump."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return None
    errors = exc.errors()
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    what = f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "invalid"))
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"the server's answer is not valid MCP {version or '(unknown revision)'}: {what}{more}"
