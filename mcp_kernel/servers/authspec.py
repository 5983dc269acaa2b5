"""The ``auth`` block of a remote server's config entry, read without loading the MCP SDK.

Config files are read before the SDK is imported (the banner lists servers while it loads), so the
block is checked here and turned into the SDK's providers later, by ``auth.py``. Keys are a closed
set: a misspelt key (``client_secert``) would otherwise silently fall back to an interactive login.

Claude Code writes ``"oauth": {"clientId": …, "callbackPort": …}`` for servers added with
``--client-id``/``--callback-port``; that block means the same as ``"auth": {"type": "oauth", …}``.
A remote server with neither block still gets an OAuth login when it answers 401 with a Bearer
challenge (what VS Code and Claude Code do), so plain URLs copied from their configs work.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

AuthType = Literal["oauth", "client_credentials", "private_key_jwt"]
TYPES: tuple[AuthType, ...] = ("oauth", "client_credentials", "private_key_jwt")
KEYS = (
    "type",
    "client_id",
    "client_secret",
    "private_key",
    "signing_algorithm",
    "token_endpoint_auth_method",
    "scopes",
    "redirect_port",
    "open_with",
)
#: Claude Code's ``oauth`` block: its camelCase keys and ours
CLAUDE_KEYS = {"clientId": "client_id", "clientSecret": "client_secret", "callbackPort": "redirect_port", "scopes": "scopes"}
METHODS = ("client_secret_basic", "client_secret_post", "none")


class AuthProblem(ValueError):
    """``(key, message)``: a bad value in the auth block; the spec parser names file and server."""


@dataclass(frozen=True)
class AuthSpec:
    """How mcp2repl gets tokens for one remote server. ``configured`` is False for the implicit login
    a plain URL gets, which only starts when the server's 401 carries a Bearer challenge."""

    type: AuthType = "oauth"
    client_id: str | None = None
    client_secret: str | None = None
    private_key: str | None = None
    signing_algorithm: str = "RS256"
    token_endpoint_auth_method: str | None = None
    scopes: str | None = None  # space-separated, as OAuth sends them
    redirect_port: int | None = None
    open_with: tuple[str, ...] = ()  # a command; the authorization URL is appended as its last argument
    configured: bool = True

    @property
    def interactive(self) -> bool:
        """Whether getting a token involves a browser (and so, a person or ``open_with``)."""
        return self.type == "oauth"


IMPLICIT = AuthSpec(configured=False)


def _text(value: object, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AuthProblem(f"auth.{key}", f"must be a non-empty string, got {_shown(value)}")
    return value


def _shown(value: object) -> str:
    return repr(value) if isinstance(value, bool | int | float) or value is None else type(value).__name__


def parse_auth(raw: object, claude: object = None) -> AuthSpec | None:
    """The entry's ``auth`` block (or Claude Code's ``oauth`` block); None when it has neither.

    Raises :class:`AuthProblem` naming the key at fault.
    """
    if raw is None and claude is None:
        return None
    if raw is None:
        if not isinstance(claude, Mapping):
            raise AuthProblem("oauth", f"must be an object, got {_shown(claude)}")
        unknown = [k for k in claude if k not in CLAUDE_KEYS]
        if unknown:
            raise AuthProblem("oauth", f'has unknown key "{unknown[0]}" (known: {", ".join(CLAUDE_KEYS)})')
        raw = {"type": "oauth", **{CLAUDE_KEYS[k]: v for k, v in claude.items()}}
    if not isinstance(raw, Mapping):
        raise AuthProblem("auth", f'must be an object such as {{"type": "oauth"}}, got {_shown(raw)}')
    for key in raw:
        if key not in KEYS:
            raise AuthProblem("auth", f'has unknown key "{key}" (known: {", ".join(KEYS)})')
    kind = raw.get("type", "oauth")
    if kind not in TYPES:
        raise AuthProblem("auth.type", f'must be one of "oauth", "client_credentials", "private_key_jwt", got {kind!r}')
    got = {k: _text(raw[k], k) for k in ("client_id", "client_secret", "private_key", "signing_algorithm") if raw.get(k) is not None}
    method = raw.get("token_endpoint_auth_method")
    if method is not None and method not in METHODS:
        raise AuthProblem("auth.token_endpoint_auth_method", f"must be one of {', '.join(METHODS)}, got {method!r}")
    scopes = raw.get("scopes")
    if isinstance(scopes, list) and all(isinstance(s, str) for s in scopes):
        scopes = " ".join(scopes)
    if scopes is not None and not isinstance(scopes, str):
        raise AuthProblem("auth.scopes", f"must be a string or a list of strings, got {_shown(scopes)}")
    port = raw.get("redirect_port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
        raise AuthProblem("auth.redirect_port", f"must be a port number (1-65535), got {_shown(port)}")
    open_with = raw.get("open_with")
    if isinstance(open_with, str):
        import shlex

        open_with = shlex.split(open_with)
    if open_with is not None and not (isinstance(open_with, list) and open_with and all(isinstance(w, str) for w in open_with)):
        raise AuthProblem("auth.open_with", f"must be a command (a string or a list of strings), got {_shown(open_with)}")
    if kind != "oauth" and "client_id" not in got:
        raise AuthProblem("auth.client_id", f'is required with "type": "{kind}"')
    if kind == "client_credentials" and "client_secret" not in got:
        raise AuthProblem("auth.client_secret", 'is required with "type": "client_credentials"')
    if kind == "private_key_jwt" and "private_key" not in got:
        raise AuthProblem("auth.private_key", 'is required with "type": "private_key_jwt" (PEM text, usually "{file:…}")')
    if kind == "oauth" and "client_secret" in got and "client_id" not in got:
        raise AuthProblem("auth.client_id", "is required when client_secret is given (a pre-registered client)")
    return AuthSpec(
        type=kind,
        scopes=scopes or None,
        redirect_port=port,
        open_with=tuple(open_with or ()),
        token_endpoint_auth_method=method,
        **got,
    )


def login_advice(name: str, headless: bool) -> str:
    where = (
        "nobody can log in here (no stdin: papermill, nbclient, --json). Log in once in an interactive session "
        f'(JupyterLab, jupyter console, mcp2repl) with await api.login("{name}"); the tokens are kept and refreshed'
        if headless
        else f'run await api.login("{name}") to open the login page (or call one of its tools)'
    )
    return (
        f'MCP server "{name}" needs an OAuth login: {where}. For unattended runs without a login, set "auth": '
        '{"type": "client_credentials", "client_id": …, "client_secret": "${SECRET}"} if the server supports it.'
    )
