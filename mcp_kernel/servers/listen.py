"""Resource subscriptions that outlive a connection: the URIs cells subscribed to are the
connection's, and every new session is told them again (today's reconnect used to lose them).

2025-11-25 servers get ``resources/subscribe`` per URI. 2026-07-28 servers have no such method:
one ``subscriptions/listen`` stream per connection carries the resource URIs and the list-changed
events the server offers (the only way a 2026 server says its tools changed). The stream's events
also reach the session's message handler, where the connection already handles them; this module
only keeps the stream open, reopens it when the set of URIs changes, and re-listens (backing off)
when it is lost while the connection lives, e.g. an HTTP server restarted behind the same URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.subscriptions import listen

from ..compat import session_closed
from .era import is_modern

log = logging.getLogger(__name__)

#: seconds between attempts to re-listen after the stream was lost, doubling up to the cap
BACKOFF, BACKOFF_CAP = 0.5, 30.0


class Subscriptions:
    """The subscribed URIs of one connection and, at 2026-07-28, the listen stream carrying them."""

    def __init__(self, relisten: Callable[[], Awaitable[None]]) -> None:
        self.uris: dict[str, int] = {}  # URI -> how many cell subscriptions hold it
        self._relisten = relisten  # after a lost stream: what may have changed meanwhile is fetched again
        self._task: asyncio.Task[None] | None = None
        self._change = asyncio.Event()
        self._ack: asyncio.Future[None] | None = None

    async def renew(self, session: ClientSession, limit: float) -> None:
        """A new session: tell it every URI (at 2026-07-28, open the stream and wait for its ack)."""
        await self.stop()
        if is_modern(session):
            if _wanted(session, self.uris):
                self._ack = asyncio.get_running_loop().create_future()
                self._task = asyncio.ensure_future(self._listen(session, limit))
                await self._acked(limit)
            return
        for uri in self.uris:
            await session.subscribe_resource(uri)

    async def add(self, session: ClientSession, uri: str, limit: float) -> None:
        fresh = uri not in self.uris
        self.uris[uri] = self.uris.get(uri, 0) + 1
        if not fresh:
            return
        try:
            await self._changed(session, limit, lambda: session.subscribe_resource(uri))
        except BaseException:
            self._drop(uri)
            raise

    async def remove(self, session: ClientSession | None, uri: str, limit: float) -> None:
        if uri not in self.uris or self._drop(uri) or session is None:
            return
        await self._changed(session, limit, lambda: session.unsubscribe_resource(uri))

    def _drop(self, uri: str) -> bool:
        """One subscription fewer; True if another still holds the URI."""
        left = self.uris.pop(uri) - 1
        if left > 0:
            self.uris[uri] = left
        return left > 0

    async def _changed(self, session: ClientSession, limit: float, legacy: Callable[[], Awaitable[Any]]) -> None:
        if not is_modern(session):
            async with asyncio.timeout(limit):
                await legacy()
            return
        self._ack = asyncio.get_running_loop().create_future()
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._listen(session, limit))
        else:
            self._change.set()
        await self._acked(limit)

    async def _acked(self, limit: float) -> None:
        assert self._ack is not None
        async with asyncio.timeout(limit):
            await asyncio.shield(self._ack)

    async def stop(self) -> None:
        """Leave the stream (before the session closes, or its end reads as a lost stream)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    def _settle(self, error: BaseException | None) -> None:
        ack = self._ack
        if ack is not None and not ack.done():
            ack.set_exception(error) if error is not None else ack.set_result(None)

    async def _listen(self, session: ClientSession, limit: float) -> None:
        delay = BACKOFF
        while not session_closed(session):
            self._change.clear()
            caps = session.server_capabilities or types.ServerCapabilities()
            try:
                async with contextlib.AsyncExitStack() as stack:
                    async with asyncio.timeout(limit):  # the SDK waits for the ack without a limit
                        stream = await stack.enter_async_context(
                            listen(
                                session,
                                tools_list_changed=bool(caps.tools and caps.tools.list_changed),
                                resource_subscriptions=sorted(self.uris),
                            )
                        )
                    self._settle(None)
                    delay = BACKOFF
                    if await _drain(stream, self._change):
                        continue  # the URIs changed: listen again with the new set
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - refused or lost: said to whoever waits, else retried
                self._settle(exc)
                log.debug("subscriptions/listen ended: %s", exc)
            if session_closed(session):
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_CAP)
            with contextlib.suppress(Exception):
                await self._relisten()


def _wanted(session: ClientSession, uris: dict[str, int]) -> bool:
    """Is there anything to listen for: subscribed URIs, or tool-list changes the server offers?"""
    caps = session.server_capabilities
    return bool(uris) or bool(caps and caps.tools and caps.tools.list_changed)


async def _drain(stream: Any, change: asyncio.Event) -> bool:
    """Read the stream until it ends (False) or the URIs change (True). Its events are handled
    where the session's message handler gets them; the SDK drops a stream nobody reads."""
    changed = asyncio.ensure_future(change.wait())
    event: asyncio.Future[Any] | None = None
    try:
        while True:
            event = asyncio.ensure_future(stream.__anext__())
            done, _ = await asyncio.wait({event, changed}, return_when=asyncio.FIRST_COMPLETED)
            if changed in done:
                return True
            try:
                event.result()
            except StopAsyncIteration:
                return False
    finally:
        changed.cancel()
        if event is not None:  # a read left behind (the URIs changed, or we were cancelled): its end is nobody's news
            event.cancel()
            event.add_done_callback(_forget)


def _forget(read: asyncio.Future[Any]) -> None:
    """Retrieve a left-behind read's outcome, so that asyncio does not print it at exit."""
    if not read.cancelled():
        read.exception()
