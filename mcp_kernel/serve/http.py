"""Streamable HTTP at ``/mcp``: the SDK's session manager behind a bearer token and Origin/Host checks.

Every request must carry ``Authorization: Bearer <token>`` (``MCP2REPL_SERVE_TOKEN``, else a token
generated once and kept owner-only in ``.mcp2repl/serve-token``); without it the SDK's bearer
middleware answers 401 before the request reaches any session. The SDK's DNS-rebinding protection
checks Host and Origin against this machine's names. A client that ends its MCP session (DELETE)
takes its in-process session with it.
"""

from __future__ import annotations

import hmac
import os
import secrets
import socket
from pathlib import Path
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..client.trust import is_loopback
from .app import ServeApp
from .options import TOKEN_FILE

PATH = "/mcp"


class StaticToken:
    """The SDK's TokenVerifier for one shared secret (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self.token.encode()):
            return AccessToken(token=token, client_id="mcp2repl-serve", scopes=[])
        return None


def token_for(given: str | None, cwd: Path) -> tuple[str, Path | None]:
    """The bearer token, and the file it was written to (None when it came from the environment).

    A token already in ``.mcp2repl/serve-token`` is used again, so client configs keep working
    across restarts; delete the file for a new one.
    """
    if given:
        return given, None
    path = cwd / TOKEN_FILE
    try:
        if path.stat().st_mode & 0o077 == 0 and (kept := path.read_text(encoding="utf-8").strip()):
            return kept, path
    except OSError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    os.chmod(path, 0o600)  # an older file with wider permissions is narrowed
    return token, path


def security(host: str) -> TransportSecuritySettings:
    """Host and Origin values that name this server: loopback always, and the bound address."""
    names = ["127.0.0.1", "localhost", "[::1]"]
    if not is_loopback(host):
        wildcard = host in ("0.0.0.0", "::", "")
        names += [socket.gethostname(), socket.getfqdn()] if wildcard else [f"[{host}]" if ":" in host else host]
    hosts = [f"{n}:*" for n in dict.fromkeys(names)]
    origins = [f"{scheme}://{n}:*" for n in dict.fromkeys(names) for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def asgi_app(app: ServeApp, host: str, port: int, token: str) -> ASGIApp:
    """The server's ASGI application (its lifespan runs the SDK's session manager)."""
    where = f"http://{'localhost' if is_loopback(host) else host}:{port}{PATH}"
    starlette = app.server.streamable_http_app(
        streamable_http_path=PATH,
        transport_security=security(host),
        host=host,
        session_idle_timeout=app.options.idle_timeout,
        auth=AuthSettings(issuer_url=where, resource_server_url=None),  # no OAuth: a static bearer token
        token_verifier=StaticToken(token),
    )
    return _EndsSessions(starlette, app)


class _EndsSessions:
    """Closes a client's in-process session when it ends its MCP session (a DELETE that succeeded)."""

    def __init__(self, inner: ASGIApp, app: ServeApp) -> None:
        self.inner = inner
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "DELETE":
            await self.inner(scope, receive, send)
            return
        session_id = next((v.decode() for k, v in scope.get("headers", []) if k == b"mcp-session-id"), None)
        status: dict[str, Any] = {}

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        await self.inner(scope, receive, watch)
        if session_id and status.get("code", 500) < 300:
            await self.app.sessions.drop(session_id)
