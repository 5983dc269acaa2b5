"""The HTTP side of a remote server's connection: its transport (Streamable HTTP or SSE) with OAuth
as the client's ``auth``, and the words for what went wrong over HTTP.

The SDK turns any non-JSON 4xx/5xx into "Server returned an error response", and an OAuth flow
makes requests of its own (metadata, registration, token), so the status is remembered together
with the URL that answered it: a failing metadata lookup must not be blamed on the MCP URL.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .spec import ServerSpec

if TYPE_CHECKING:  # httpx2 and the OAuth flow (jwt, cryptography): ~10 MB a kernel of stdio servers never needs
    import httpx2

    from .auth import AuthState, LoginHooks


@dataclass
class HttpTrace:
    """The last HTTP error of one connection attempt, and its auth flow's state."""

    status: str | None = None  # "HTTP 404 Not Found from https://…"
    code: int | None = None
    auth: AuthState | None = None


def uses_oauth(spec: ServerSpec) -> bool:
    """A remote server gets an OAuth provider unless its headers already carry credentials."""
    has_header = any(k.lower() == "authorization" for k in spec.headers)
    return spec.auth is not None or not has_header


async def open_remote(spec: ServerSpec, stack: contextlib.AsyncExitStack, trace: HttpTrace, hooks: LoginHooks) -> tuple[Any, Any]:
    import httpx2

    from .auth import build

    assert spec.url
    auth: httpx2.Auth | None = None
    if uses_oauth(spec):
        auth, trace.auth = build(spec.name, spec.url, spec.auth, hooks)

    async def remember(response: httpx2.Response) -> None:
        # the last answer decides: an OAuth flow tries several metadata URLs, and a 404 on one it
        # then found elsewhere must not be blamed for a later failure
        if response.status_code < 400:
            trace.code = trace.status = None
            return
        url = str(response.request.url).split("?")[0]  # a query may carry codes or keys
        trace.code = response.status_code
        trace.status = f"HTTP {response.status_code} {response.reason_phrase}".strip() + f" from {url}"

    if spec.transport == "sse":
        from mcp.client.sse import sse_client

        def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, event_hooks={"response": [remember]})

        return await stack.enter_async_context(sse_client(spec.url, headers=spec.headers or None, auth=auth, httpx_client_factory=factory))
    from mcp.client.streamable_http import streamable_http_client

    client = await stack.enter_async_context(
        httpx2.AsyncClient(
            headers=spec.headers or None, timeout=httpx2.Timeout(30.0, read=300.0), auth=auth, event_hooks={"response": [remember]}
        )
    )
    streams = await stack.enter_async_context(streamable_http_client(spec.url, http_client=client))
    return streams[0], streams[1]


def _login_required(error: BaseException) -> bool:
    from .auth import LoginRequired  # loaded already: a trace has an auth state only once auth.build ran

    return isinstance(error, LoginRequired)


def describe_remote(spec: ServerSpec, text: str, trace: HttpTrace) -> str:
    """``text`` (the failure) completed with the HTTP status, the URL that answered it, and for a
    401 what to configure."""
    state = trace.auth
    if state is not None and state.error is not None and not _login_required(state.error):
        text = f"OAuth login failed: {state.error}"
        if spec.auth is None:  # the implicit login of a plain URL, started by a Bearer challenge
            text += '; if the server expects a token rather than a login, pass "headers": {"Authorization": "Bearer ${TOKEN}"}'
    said = trace.status is not None and (trace.status in text or (trace.status.split(" from ")[-1] in text and str(trace.code) in text))
    if trace.status and not said:
        text += f" ({trace.status})"
    elif spec.url not in text:
        text = f"{spec.url}: {text}"
    if trace.code == 401 and (state is None or not state.challenged) and not (state and state.error):
        if state is None:
            text += "; the server refused the configured Authorization header"
        else:
            text += (
                "; the server needs authorization but offers no OAuth login (no Bearer challenge). Pass a token: "
                '"headers": {"Authorization": "Bearer ${TOKEN}"}, or configure OAuth with an "auth" block '
                '({"type": "oauth"}, or "client_credentials" with client_id and client_secret)'
            )
    return text
