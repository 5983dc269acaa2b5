"""OAuth for remote servers: the SDK's providers, fed by the config's ``auth`` block, and the login.

All of OAuth proper (discovery, registration, PKCE, scopes and step-up, refresh, resource checks)
is the SDK's (``OAuthClientProvider``, ``ClientCredentialsOAuthProvider``,
``PrivateKeyJWTOAuthProvider``), passed as ``auth=`` to the HTTP client of the transport. What is
ours is what a kernel needs around it:

- **when a person is needed.** Servers connect when the kernel starts, with no cell running and
  so nobody to show a link to: the redirect handler then raises :class:`LoginRequired` and the
  connection waits in state ``needs_login``. In a cell (``api.login``, or the first call to that
  server) ``show`` puts the link in front of the person, and the start deadline is paused while
  they log in. With ``open_with`` the kernel runs that command with the URL instead (unattended
  runs, tests).
- **the loopback callback**, where the browser comes back with the code.
- **a guard** (:class:`_Watched`) that remembers what went wrong inside the flow (the transport only
  logs it) and keeps the implicit login of a plain URL from starting on a 401 that carries no
  Bearer challenge: that server wants a token the config must supply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import warnings
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

from .authspec import IMPLICIT, AuthSpec, login_advice
from .tokens import FileTokenStorage, token_dir

_PAGE = (
    "<!doctype html><meta charset=utf-8><title>mcp2repl</title>"
    "<p style='font-family:sans-serif'>Logged in. You can close this tab and go back to the notebook.</p>"
)


def login_timeout() -> float:
    """Seconds a login may wait for the browser to come back (MCP2REPL_LOGIN_TIMEOUT, default 600)."""
    return float(os.environ.get("MCP2REPL_LOGIN_TIMEOUT", "600"))


class LoginRequired(Exception):
    """The server needs an interactive login and nobody is there to do it; the message says how."""


class _QuietLoginRequired(logging.Filter):
    """The SDK logs every failure of the flow with a traceback (twice: the provider and the
    transport); a server waiting for its login is a state, already in the banner, not an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        while isinstance(error, BaseExceptionGroup) and error.exceptions:
            error = error.exceptions[0]
        return not isinstance(error, LoginRequired)


for _name in ("mcp.client.auth.oauth2", "mcp.client.streamable_http", "mcp.client.sse"):
    logging.getLogger(_name).addFilter(_QuietLoginRequired())


@dataclass
class LoginHooks:
    """What the flow asks of the rest of the kernel; every callback is optional."""

    #: show the authorization URL to a person who can act on it; False when there is none
    show: Callable[[str, str], bool] = lambda server, url: False
    #: a person (or open_with) is logging in: True pauses the start deadline, False restarts it
    waiting: Callable[[bool], None] = lambda on: None
    #: values to mask from now on (tokens, client secrets)
    secret: Callable[[Iterable[str]], None] = lambda values: None


@dataclass
class AuthState:
    """What happened in the auth flow of one connection attempt."""

    error: BaseException | None = None
    needs_login: bool = False
    challenged: bool = False  # a 401 came back with a Bearer challenge
    storage: FileTokenStorage | None = field(default=None, repr=False)


def build(name: str, url: str, spec: AuthSpec | None, hooks: LoginHooks) -> tuple[httpx2.Auth, AuthState]:
    """The ``auth=`` for the transport's HTTP client, and the state it reports into."""
    auth = spec or IMPLICIT
    state = AuthState()
    storage = state.storage = FileTokenStorage(name, url, hooks.secret)
    hooks.secret([v for v in (auth.client_secret, auth.private_key) if v])
    with warnings.catch_warnings():  # "omitting issuer is deprecated": the config has no issuer key
        warnings.simplefilter("ignore")
        provider = _provider(name, url, auth, hooks, state, storage)
    _restore(provider, storage)
    return _Watched(provider, auth, state), state


def _provider(name: str, url: str, auth: AuthSpec, hooks: LoginHooks, state: AuthState, storage: FileTokenStorage) -> OAuthClientProvider:
    provider: OAuthClientProvider
    scope = auth.scopes
    if auth.type == "client_credentials":
        assert auth.client_id and auth.client_secret
        method = auth.token_endpoint_auth_method if auth.token_endpoint_auth_method in ("client_secret_basic", "client_secret_post") else None
        provider = ClientCredentialsOAuthProvider(
            url, storage, auth.client_id, auth.client_secret, token_endpoint_auth_method=method or "client_secret_basic", scope=scope
        )
    elif auth.type == "private_key_jwt":
        assert auth.client_id and auth.private_key
        signer = SignedJWTParameters(
            issuer=auth.client_id, subject=auth.client_id, signing_key=auth.private_key, signing_algorithm=auth.signing_algorithm
        )
        provider = PrivateKeyJWTOAuthProvider(url, storage, auth.client_id, signer.create_assertion_provider(), scope=scope)
    else:
        port = auth.redirect_port or (None if auth.client_id else storage.redirect_port()) or _free_port()
        redirect = f"http://127.0.0.1:{port}/callback"
        callback = _Callback(port)
        method = auth.token_endpoint_auth_method or ("client_secret_basic" if auth.client_secret else None)
        # a client_id that is an https URL names a client ID metadata document (CIMD), used where
        # the authorization server supports those; elsewhere the SDK registers dynamically
        document = auth.client_id if auth.client_id and auth.client_id.startswith("https://") and not auth.client_secret else None
        if auth.client_id and not document:  # a pre-registered client: no dynamic registration
            storage.fixed_client = OAuthClientInformationFull(
                client_id=auth.client_id,
                client_secret=auth.client_secret,
                redirect_uris=[redirect],  # type: ignore[list-item]
                token_endpoint_auth_method=method or "none",
            )
        metadata = OAuthClientMetadata(
            client_name="mcp2repl",
            redirect_uris=[redirect],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=scope,
            token_endpoint_auth_method=method,  # type: ignore[arg-type]
        )
        flow = _Login(name, auth, hooks, state, callback)
        provider = OAuthClientProvider(url, metadata, storage, flow.redirect, flow.callback, client_metadata_url=document)
    return provider


def _restore(provider: OAuthClientProvider, storage: FileTokenStorage) -> None:
    """Give a new provider what the SDK keeps in memory only: the stored token's expiry (so an
    expired token is refreshed, not sent) and the metadata found at login (the token endpoint to
    refresh at, the resource to ask for)."""
    expires, resource, server = storage.saved_state()
    context = provider.context
    context.token_expiry_time = expires
    if server is not None:
        context.oauth_metadata = server
        context.auth_server_url = str(resource.authorization_servers[0]) if resource and resource.authorization_servers else None
    if resource is not None:
        context.protected_resource_metadata = resource
    storage.metadata = lambda: (context.protected_resource_metadata, context.oauth_metadata)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Login:
    """The two handlers the SDK calls for the authorization-code grant."""

    def __init__(self, name: str, auth: AuthSpec, hooks: LoginHooks, state: AuthState, callback: _Callback) -> None:
        self.name, self.auth, self.hooks, self.state, self.listener = name, auth, hooks, state, callback
        self.opener: asyncio.subprocess.Process | None = None

    async def redirect(self, url: str) -> None:
        try:
            await self.listener.open()
        except OSError as exc:
            raise OAuthFlowError(f"cannot listen for the login callback on 127.0.0.1:{self.listener.port} ({exc.strerror or exc})") from None
        if self.auth.open_with:
            self.hooks.waiting(True)
            self.opener = await asyncio.create_subprocess_exec(
                *self.auth.open_with, url, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
            )
            return
        if not self.hooks.show(self.name, url):
            await self.listener.close()
            self.state.needs_login = True
            raise LoginRequired(login_advice(self.name, headless=False))
        self.hooks.waiting(True)

    async def callback(self) -> AuthorizationCodeResult:
        try:
            query = await self._wait()
        finally:
            await self.listener.close()
            self.hooks.waiting(False)
        if "error" in query:
            text = " ".join(filter(None, [query.get("error"), query.get("error_description")]))
            raise OAuthFlowError(f"the authorization server refused the login: {text}")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def _wait(self) -> dict[str, str]:
        came_back = asyncio.shield(self.listener.result())
        limit = login_timeout()
        if self.opener is not None:
            ended = asyncio.ensure_future(self.opener.wait())
            done, _ = await asyncio.wait({came_back, ended}, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
            if came_back not in done and ended in done and self.opener.returncode:
                command = self.auth.open_with[0]
                raise OAuthFlowError(f"the open_with command ({command}) exited with status {self.opener.returncode} before the login finished")
        try:
            return await asyncio.wait_for(came_back, limit)
        except TimeoutError:
            raise OAuthFlowError(f"the browser did not come back to the login callback within {limit:g} s (MCP2REPL_LOGIN_TIMEOUT)") from None


class _Callback:
    """A one-shot HTTP listener on the loopback interface for the authorization redirect."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None

    async def open(self) -> None:
        if self._server is not None:
            return
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def result(self) -> dict[str, str]:
        assert self._result is not None
        return await self._result

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass  # the headers
            words = line.decode("latin-1").split()
            target = urlsplit(words[1] if len(words) > 1 else "/")
            query = dict(parse_qsl(target.query))
            found = target.path == "/callback" and ("code" in query or "error" in query)
            if found and self._result is not None and not self._result.done():
                self._result.set_result(query)
            status, body = ("200 OK", _PAGE) if found else ("404 Not Found", "not found")
            data = body.encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
                + data
            )
            await writer.drain()
        except (OSError, TimeoutError, UnicodeError):
            pass
        finally:
            writer.close()


class _Watched(httpx2.Auth):
    """The SDK's provider, watched: its failures are remembered for the connection's message (the
    transport only logs them), and the implicit login of a plain URL starts only on a Bearer challenge."""

    requires_response_body = True

    def __init__(self, provider: OAuthClientProvider, auth: AuthSpec, state: AuthState) -> None:
        self.provider, self.auth, self.state = provider, auth, state

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        _refresh_early(self.provider)
        flow = self.provider.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is request and response.status_code == 401:
                    challenge = response.headers.get("www-authenticate", "")
                    self.state.challenged = challenge.lower().startswith("bearer")
                    if not self.auth.configured and not self.state.challenged:
                        return  # not an OAuth server: the 401 itself is the answer
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:
            if self.state.error is None:
                self.state.error = exc
            raise
        finally:
            await flow.aclose()


def _refresh_early(provider: OAuthClientProvider) -> None:
    """Count a token as expired a little before its end (a tenth of its life, at most a minute).

    The SDK refreshes only a token it believes expired, and answers a 401 with a whole new login,
    not a refresh; a server whose clock runs a little ahead (or that rounds expiry times down)
    would otherwise turn every expiry into a login, which in a notebook means a person.
    """
    context = provider.context
    tokens, expiry = context.current_tokens, context.token_expiry_time
    if tokens is None or expiry is None or not tokens.expires_in:
        return
    if expiry - time.time() < min(60.0, max(1.0, tokens.expires_in / 10)):
        context.token_expiry_time = time.time() - 1


def forget_tokens(name: str, url: str) -> None:
    """Drop a server's stored tokens (``api.login(name, {force: true})``); the client registration stays."""
    FileTokenStorage(name, url).forget()


__all__ = ["AuthState", "LoginHooks", "LoginRequired", "build", "forget_tokens", "login_advice", "token_dir"]
