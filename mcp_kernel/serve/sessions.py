"""Which session a request's steps run in, and for how long it lives.

- Each client connection has its own in-process session: over stdio the one connection; over
  Streamable HTTP each MCP session (``Mcp-Session-Id``), so two clients never share state.
- A client without a connection of its own (protocol 2026-07-28 is stateless: no handshake, no
  session id) runs in the server's *shared* session, one per server (there is one token); a ``run``
  that names a ``session`` gets that persistent named session instead, for any client.
- ``mcp2repl serve --session NAME`` sends every step to that named session.

In-process sessions of HTTP clients are closed once unused for the idle timeout, or when their
client ends its MCP session (HTTP DELETE); a named session's kernel outlives the server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from ..client.registry import SessionError, check_name
from .backends import InProcess, Named, session_options, start_options
from .options import ServeOptions

log = logging.getLogger(__name__)

Backend = InProcess | Named
STDIO = "stdio"
#: The in-process session of clients that have no MCP session of their own (stateless HTTP).
SHARED = "shared"
#: How often idle sessions are looked for (seconds).
REAP_EVERY = 30.0


class Sessions:
    """The server's sessions: in-process ones per connection, named ones by name."""

    def __init__(self, options: ServeOptions) -> None:
        self.options = options
        self.connections: dict[str, InProcess] = {}
        self.named: dict[str, Named] = {}
        self._reaper: asyncio.Task[None] | None = None

    def for_connection(self, key: str) -> Backend:
        """The default backend of a connection (``key``: stdio, an MCP session id, or SHARED)."""
        if self.options.session:
            return self.by_name(self.options.session)
        backend = self.connections.get(key)
        if backend is None:
            label = "this connection's session" if key != SHARED else "the server's shared session"
            backend = self.connections[key] = InProcess(session_options(self.options, owns_process=key == STDIO), label)
            backend.start()
        return backend

    def by_name(self, name: str) -> Named:
        """The named persistent session ``name`` (raises ValueError with the rule for a bad name)."""
        try:
            check_name(name)
        except SessionError as exc:
            raise ValueError(str(exc)) from None
        found = self.named.get(name)
        if found is None:
            found = self.named[name] = Named(name, self.options.cwd, start_options(self.options), self.options.timeout)
        return found

    def start_reaping(self) -> None:
        if self._reaper is None:
            self._reaper = asyncio.ensure_future(self._reap())

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(min(REAP_EVERY, self.options.idle_timeout))
            await self.close_idle()

    async def close_idle(self, now: float | None = None) -> list[str]:
        """Close in-process sessions unused for the idle timeout; the keys closed."""
        now = time.monotonic() if now is None else now
        idle = [k for k, b in self.connections.items() if not b.busy and now - b.last_used >= self.options.idle_timeout]
        for key in idle:
            log.info("closing %s (%s), unused for %.0f s", self.connections[key].label, key, now - self.connections[key].last_used)
            await self.drop(key)
        return idle

    async def drop(self, key: str) -> None:
        """Close the in-process session of a connection that ended (its state is gone)."""
        backend = self.connections.pop(key, None)
        if backend is not None:
            await _closed(backend)

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        backends: list[Any] = [*self.connections.values(), *self.named.values()]
        self.connections.clear()
        self.named.clear()
        await asyncio.gather(*(_closed(b) for b in backends))


async def _closed(backend: Backend) -> None:
    try:
        await backend.close()
    except Exception:  # one session's trouble must not keep the others open
        log.exception("closing %s failed", backend.label)
