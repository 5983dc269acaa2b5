"""The bounds a connection keeps on servers it did not write, and the words it uses when one is hit.

Time: every request has a limit (the call's, the server's configured ``timeout``, else a generous
default), so a server that hangs or answers with the wrong id cannot hold a cell forever when no
one is there to interrupt it. Size: error messages a server sends (some send 100 KB) are cut
before users see them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from mcp.shared.exceptions import MCPError

if TYPE_CHECKING:
    import mcp_types as types

#: Characters of a server's error message shown to users; the rest is cut, with a note.
ERROR_LIMIT = 2000


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters cut)"


def start_timeout() -> float:
    """Seconds a server may take to start and list its tools (MCP2REPL_START_TIMEOUT, default 30)."""
    return float(os.environ.get("MCP2REPL_START_TIMEOUT", "30"))


def default_call_timeout() -> float:
    """Seconds a request waits for its answer unless the call or the config says otherwise (MCP2REPL_CALL_TIMEOUT, default 300)."""
    return tidy(float(os.environ.get("MCP2REPL_CALL_TIMEOUT", "300")))


def tidy(seconds: float) -> float:
    """Whole seconds as an int, so messages say "300 s", not "300.0 s"."""
    return int(seconds) if float(seconds).is_integer() else seconds


def timeout_hint(server: str, limit: float | None, *, per_call: bool, configured: bool, problems: str | None) -> str:
    """Where a call's limit came from and how to raise it; the api layer shows ``no answer within N s (hint)``."""
    if per_call:
        hint = f"set by this call's {{timeout: {limit:g}}}"
    elif configured:
        hint = f'set by "timeout" of server "{server}" in its config; pass {{timeout: seconds}} to a call to wait longer'
    else:
        hint = 'the default, MCP2REPL_CALL_TIMEOUT; to wait longer pass {timeout: seconds} to the call or set "timeout" for the server in its config'
    return f"{hint}; meanwhile {problems}" if problems else hint


def capped(exc: MCPError) -> MCPError:
    """The server's error with its message cut to :data:`ERROR_LIMIT` characters."""
    if len(exc.error.message) <= ERROR_LIMIT:
        return exc
    return MCPError(exc.error.code, shorten(exc.error.message, ERROR_LIMIT))


def capped_result(result: types.CallToolResult) -> types.CallToolResult:
    """An error result whose text (the message the user sees) is cut to :data:`ERROR_LIMIT` characters in all."""
    import mcp_types as types

    budget, content, changed = ERROR_LIMIT, [], False
    for item in result.content:
        if isinstance(item, types.TextContent):
            if budget <= 0:
                changed = True
                continue
            if len(item.text) > budget:
                item, changed = item.model_copy(update={"text": shorten(item.text, budget)}), True
            budget -= len(item.text)
        content.append(item)
    return result.model_copy(update={"content": content}) if changed else result
