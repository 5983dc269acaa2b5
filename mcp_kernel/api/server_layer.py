"""The server layer as the runtime API sees it: the server manager, once it (and the MCP SDK) loaded.

The MCP SDK takes most of a second to import, so the Session loads the manager in a thread while
V8 starts, and handlers wait for it here. A one-shot run whose code names no server skips the
import altogether, yet a cell of it may still need the layer (``api.connect`` of a disabled
server, ``api.library`` over a config with none): the layer is then loaded on that first need.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ..engine import BridgeError

if TYPE_CHECKING:
    from ..servers.manager import ServerManager


class ServerLayer:
    """The server manager, once its module (and the MCP SDK) finished loading in a thread."""

    def __init__(self) -> None:
        self.loaded: ServerManager | None = None
        self.done: asyncio.Future[None] | None = None
        self.reason = "the MCP server layer could not be loaded (see the kernel log)"
        #: how to load the layer when a cell first needs it (a one-shot run that started nothing)
        self.later: Callable[[], Awaitable[None]] | None = None
        self.loading: asyncio.Future[None] | None = None

    async def get(self) -> ServerManager:
        if self.done is not None and not self.done.done():  # asked on every tool call
            await asyncio.shield(self.done)
        if self.loaded is None and self.later is not None:
            if self.loading is None:
                self.loading = asyncio.ensure_future(self.later())
            await asyncio.shield(self.loading)
        if self.loaded is None:
            raise BridgeError("Error", self.reason)
        return self.loaded
