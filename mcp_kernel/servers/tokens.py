"""OAuth tokens kept between kernel runs: the SDK's ``TokenStorage``, one owner-only file per server.

A login happens once; later kernels, papermill runs included, reuse the tokens and refresh them
without a person. The file is keyed by the server's name *and* URL, so pointing a name at another
server never sends it the old server's tokens. Besides what the SDK stores (tokens and the client
registration) the file keeps when the access token expires and the metadata discovered at login:
the SDK's provider keeps both in memory only, so without them a new process would send an expired
token, get a 401 and start a whole new login instead of refreshing.

Every token and client secret read or written is handed to ``on_secret`` (the session's redactor):
they must never appear in output, errors or artifacts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken, ProtectedResourceMetadata


def token_dir() -> Path:
    """``$XDG_CONFIG_HOME/mcp2repl/oauth`` (default ``~/.config``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "mcp2repl" / "oauth"


def token_file(name: str, url: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "server"
    return token_dir() / f"{safe}-{hashlib.sha256(url.encode()).hexdigest()[:12]}.json"


class FileTokenStorage:
    """The SDK's ``TokenStorage`` over one JSON file (0600 in a 0700 folder), written atomically."""

    def __init__(self, name: str, url: str, on_secret: Callable[[Iterable[str]], None] = lambda values: None) -> None:
        self.path = token_file(name, url)
        self.name, self.url = name, url
        self.on_secret = on_secret
        #: a pre-registered client (``client_id`` in the config): used as is, never registered or stored
        self.fixed_client: OAuthClientInformationFull | None = None
        #: what the running provider discovered; saved with the tokens (see the module docstring)
        self.metadata: Callable[[], tuple[Any, Any]] = lambda: (None, None)

    # ---- the file -----------------------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)
        temp = folder / f".{self.path.name}.{os.getpid()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"server": self.name, "url": self.url, **data}, fh)
        os.replace(temp, self.path)

    def _update(self, **changes: Any) -> None:
        data = self._read()
        data.update(changes)
        self._write(data)

    # ---- TokenStorage -------------------------------------------------------------------------

    def _stored(self, key: str, model: Any) -> Any:
        """The model stored under ``key``; None when it is missing or no longer valid."""
        raw = self._read().get(key)
        if not isinstance(raw, dict):
            return None
        try:
            return model.model_validate(raw)
        except ValueError:
            return None

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self._stored("tokens", OAuthToken)
        if tokens is None:
            return None
        self.on_secret([v for v in (tokens.access_token, tokens.refresh_token) if v])
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.on_secret([v for v in (tokens.access_token, tokens.refresh_token) if v])
        expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        resource, server = self.metadata()
        more = {"resource_metadata": _dump(resource), "server_metadata": _dump(server)} if server is not None else {}
        self._update(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires_at, **more)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.fixed_client is not None:
            return self.fixed_client
        info = self._stored("client_info", OAuthClientInformationFull)
        if info is not None and info.client_secret:
            self.on_secret([info.client_secret])
        return info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if client_info.client_secret:
            self.on_secret([client_info.client_secret])
        if self.fixed_client is not None:
            return
        self._update(client_info=client_info.model_dump(mode="json", exclude_none=True))

    # ---- what the SDK does not keep ---------------------------------------------------------------

    def saved_state(self) -> tuple[float | None, ProtectedResourceMetadata | None, OAuthMetadata | None]:
        """When the stored access token expires (epoch seconds), and the metadata found at login."""
        data = self._read()
        expires = data.get("expires_at")
        resource = _load(ProtectedResourceMetadata, data.get("resource_metadata"))
        server = _load(OAuthMetadata, data.get("server_metadata"))
        return (float(expires) if isinstance(expires, int | float) else None), resource, server

    def redirect_port(self) -> int | None:
        """The loopback port of a dynamically registered client: its registration names that redirect URI."""
        info = self._read().get("client_info")
        uris = info.get("redirect_uris") if isinstance(info, dict) else None
        with contextlib.suppress(ValueError, TypeError, IndexError, AttributeError):
            from urllib.parse import urlsplit

            return urlsplit(uris[0]).port
        return None

    def forget(self, *, tokens: bool = True, client: bool = False) -> None:
        """Drop the tokens (a fresh login) and, if asked, the client registration."""
        data = self._read()
        if not data:
            return
        for key in (["tokens", "expires_at"] if tokens else []) + (["client_info"] if client else []):
            data.pop(key, None)
        self._write(data)


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", exclude_none=True) if model is not None else None


def _load(model: Any, raw: Any) -> Any:
    if not isinstance(raw, dict):
        return None
    try:
        return model.model_validate(raw)
    except ValueError:
        return None
