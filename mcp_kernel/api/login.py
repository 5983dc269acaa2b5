"""``api.login(name)``: the OAuth login of a remote server, and the link a person follows for it.

Servers connect when the kernel starts, when no cell runs and nobody could be shown a link, so
a server that needs a login waits in state ``needs_login``. A cell then logs in: here, or by
calling one of the server's tools (``tools.py``). Either way the SDK's flow asks the session to
show the authorization URL (:meth:`LoginApi.present`); it is shown only to a cell that someone
can answer (the approval gate's test: a Jupyter client that allows stdin), as a clickable link in
JupyterLab and as text in terminals. Where nobody can answer (papermill, nbclient, ``--json``)
the login fails at once and says how to log in once interactively, unless the server's
``auth.open_with`` runs a command with the URL instead of a person.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..engine import BridgeError, CallContext, Engine
from ..servers.authspec import login_advice
from ..servers.shown import neutral

if TYPE_CHECKING:
    from .tools import Ask, Servers

_closing: set[asyncio.Task[None]] = set()  # closes started by an interrupt, kept until done
Display = Callable[[str, dict[str, Any], dict[str, Any], "str | None", bool], None]


def link_bundle(server: str, url: str) -> dict[str, str]:
    """The login link as a display: clickable in JupyterLab, the URL itself for terminals and agents.

    The URL comes from the server's authorization metadata: shown with any control or bidi character
    escaped (a real URL has them percent-encoded), so it cannot drive the terminal showing it."""
    from html import escape  # here: only a login needs it, not every start

    url = neutral(url, one_line=True)
    href = escape(url, quote=True)
    return {
        "text/html": f'<p>MCP server <b>{escape(server)}</b> needs a login: <a href="{href}" target="_blank" rel="noopener">'
        "open the login page</a> (this cell continues when the browser comes back).</p>",
        "text/plain": f'MCP server "{server}" needs a login. Open this link to log in (this cell continues when the browser comes back):\n{url}',
    }


class LoginApi:
    """The ``api.login`` handler and the session's way to show a login link."""

    def __init__(self, servers: Servers, asker: Callable[[str], Ask | None], display: Display, current_cell: Callable[[], str | None]) -> None:
        self.servers = servers
        self.asker = asker
        self.display = display
        self.current_cell = current_cell

    def register(self, engine: Engine) -> None:
        engine.register("api.login", self.login)

    def present(self, server: str, url: str) -> bool:
        """Show the authorization URL on the running cell, if a person is there to follow it."""
        cell = self.current_cell()
        if cell is None or self.asker(cell) is None:
            return False
        self.display(cell, link_bundle(server, url), {}, None, False)
        return True

    async def login(self, params: dict[str, Any], ctx: CallContext) -> Any:
        manager = await self.servers.get()
        name = str(params.get("name"))
        conn = manager.find_server(name)
        if conn is None:
            raise BridgeError("TypeError", f'Unknown MCP server "{name}". Servers: {", ".join(manager.connections) or "none"}')
        spec = conn.spec
        if spec.transport == "stdio" or spec.error:
            raise BridgeError("TypeError", f'api.login("{conn.name}"): ' + (spec.error or "a local (stdio) server has no login"))
        auth = spec.auth
        if auth is not None and not auth.interactive:
            raise BridgeError("TypeError", f'api.login("{conn.name}"): this server logs in by itself ("type": "{auth.type}"), no person needed')
        unattended = auth is not None and bool(auth.open_with)
        if self.asker(ctx.cell) is None and not unattended:
            raise BridgeError("Error", login_advice(conn.name, headless=True), server=conn.name, code="needs_login")
        from ..servers.auth import forget_tokens
        from ..servers.connection import ServerUnavailable
        from ..servers.remote import uses_oauth

        if not uses_oauth(spec):
            raise BridgeError("TypeError", f'api.login("{conn.name}"): this server is sent the Authorization header of its config; it has no OAuth login')

        if params.get("force") and spec.url:
            forget_tokens(conn.name, spec.url)
        try:
            conn = await manager.connect(spec)
        except ServerUnavailable as exc:
            raise BridgeError("Error", f'api.login("{conn.name}"): {exc}', server=conn.name, code="login_failed") from None
        except asyncio.CancelledError:  # an interrupt: stop waiting for the browser
            fresh = manager.connections.get(conn.name)
            if fresh is not None and fresh.state == "starting":
                task = asyncio.ensure_future(fresh.close())
                _closing.add(task)
                task.add_done_callback(_closing.discard)
            raise
        return {"name": conn.name, "state": conn.state, "tools": len(manager.exposed(conn))}
