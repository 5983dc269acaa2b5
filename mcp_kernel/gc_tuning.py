"""Python's cyclic garbage collector, and the memory given back between cells, for a process that hosts one long-lived session.

With CPython's defaults a young collection runs every 700 allocations, and every tenth of them
also walks the older generation. Many tool calls in flight keep thousands of young objects alive
(tasks, futures, requests, results), so those walks were measured at ~40% of the kernel's time
for 1,000 concurrent calls (125 µs of ~310 µs per call), and the full collections walk the
~110,000 objects start-up leaves behind (the MCP SDK's and pydantic's models, the kernel's
modules), none of which ever becomes garbage. Frozen, those are never walked again; with young
collections every 10,000 allocations the same 1,000 calls took ~170 µs each, their collector's
share ~10 µs. Objects without reference cycles are freed at once either way, so this delays only
cyclic garbage, by at most a few MB.

Between cells (:data:`IDLE` seconds after one ends, the next not begun) the session gives memory
back: V8 collects and releases its empty pages (a heap with at most :data:`SMALL_HEAP` bytes
alive: the collection costs about what is alive), the cyclic garbage the raised thresholds left is
collected, and the C allocator returns its free pages to the system (``malloc_trim``: freed memory
otherwise stays with the process). Measured on the bench's memory figure: a kernel idle after one
tool call went from 92 to 87 MB, and after 1,000 calls from 101 to 92 MB.

Only a face that owns its process (the kernel, the one-shot command line) applies this: a
library user's process keeps its own settings.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from typing import Protocol

#: allocations between young collections (CPython's default is 700), and the default ratios above
THRESHOLDS = (10_000, 10, 10)


def tune() -> None:
    """Collect the young generation less often, and never walk what was imported so far."""
    gc.set_threshold(*THRESHOLDS)
    freeze()


def freeze() -> None:
    """Move everything alive now out of the collector's sight: start-up's objects live as long as the process.

    No collection first: after start-up it finds ~100 objects in ~55 ms, and that time would be the
    first cell's. Called again after a later stage of start-up (the MCP layer's import), it freezes
    what that stage added; what comes later (connections, cells' values) is collected as usual.
    """
    gc.freeze()


#: seconds of quiet after a cell before the session gives memory back
IDLE = 1.0
#: the most V8 heap alive (bytes) that is collected between cells (~20 ms per 10 MB here)
SMALL_HEAP = 64 * 1024 * 1024
#: seconds :meth:`Quiet.close` waits for a give-back under way (its thread is inside mini-racer)
CLOSING = 2.0


class Engine(Protocol):
    """What :class:`Quiet` needs of the engine (this module stays below the engine: tests/test_layout.py)."""

    @property
    def current_cell(self) -> str | None: ...

    async def give_back_memory(self, largest: int, quiet: Callable[[], bool]) -> bool: ...


class Quiet:
    """Gives memory back :data:`IDLE` seconds after a cell ends, unless the next one began: in a task and its
    threads (the loop itself only runs :func:`collect`, ~1 ms)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._timer: asyncio.TimerHandle | None = None
        self._giving: asyncio.Future[None] | None = None  # held: the loop keeps only weak references to tasks
        self._running = False  # a cell: from the start of Session.execute (binding, preparing) to its end
        self._closed = False

    def cell_started(self) -> None:
        self._running = True
        self._cancel()

    def cell_ended(self) -> None:
        self._running = False
        self._cancel()
        if not self._closed:  # a cell the closing engine ended still ends here
            self._timer = asyncio.get_running_loop().call_later(IDLE, self._start)

    def quiet(self) -> bool:
        """No cell runs and the session is not closing (asked from the give-back's thread too)."""
        return not self._running and not self._closed

    async def close(self) -> None:
        """No give-back after this; one under way ends first (V8 must not be freed under its thread)."""
        self._closed = True
        self._cancel()
        if self._giving is not None and not self._giving.done():
            await asyncio.wait({self._giving}, timeout=CLOSING)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _start(self) -> None:
        self._timer = None
        if not self.quiet() or (self._giving is not None and not self._giving.done()):  # one at a time
            return
        self._giving = asyncio.ensure_future(self._give_back())
        self._giving.add_done_callback(lambda t: t.cancelled() or t.exception())  # a failure only costs memory

    async def _give_back(self) -> None:
        await self._engine.give_back_memory(SMALL_HEAP, self.quiet)
        if self.quiet():  # no cell began meanwhile
            collect()
            await asyncio.to_thread(trim_malloc)


def collect() -> None:
    """The cyclic garbage the raised thresholds let pile up (on the loop: finalizers may touch it); ~1 ms here."""
    gc.collect()


def trim_malloc() -> None:
    """Hand the C allocator's free pages back to the system (glibc; elsewhere nothing). Safe in a thread."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
