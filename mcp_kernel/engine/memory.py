"""Memory limits: what a cell stopped for memory is told, and the total of array buffers, bounded by the heap limit.

buffers.js refuses one allocation above the limit where it is made; this bounds what they add up
to. mini-racer's limit sees only the heap, and V8's count of the bytes outside it (ArrayBuffer and
typed-array backing stores, see :class:`~mcp_kernel.compat.ExternalMemory`) is an atomic load any
thread may make. A thread, not the event loop, looks every few milliseconds while JS may run.

Garbage is not the code's fault: a loop that allocates and drops 64 MB buffers passes any limit
before V8 collects, and collection asked from outside (``MemoryPressureNotification``) came too late
to tell churn from growth (an earlier attempt stopped such loops about one run in three). So over
the limit the watcher only *asks* (flag value :data:`LOOK`): the next injected check runs a full,
synchronous collection in V8 and waits for the verdict (buffers.js ``__mk$M``), and the watcher
reads the count while the code is held there, exact. Still over the limit, and above what was held
when the cell started (memory earlier cells keep is freed by setting it to null: a cell that does
so must not be stopped), the code is stopped like an interrupt (flag :data:`STOP`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..compat import ExternalMemory

#: Flag values (``__mk$f[0]``): please collect and wait for a verdict; stopped for memory.
LOOK, STOP = 3, 4
#: Seconds between looks while JS may run, while a look is asked for or waits for its verdict, and
#: while V8 is idle. The wrapper asks for a look itself after each limit's worth of allocations, so
#: the thread's own looks are a backstop (buffers V8 makes itself) and rare: each wakes a thread
#: that takes the GIL from the loop, which costs the loop on a loaded machine.
EVERY, FAST, IDLE = 0.05, 0.001, 0.25
#: Growth over the floor that counts (a few small buffers made since are not "more memory"); the
#: watcher asks again once the count grew by an eighth of the limit past the last exact count.
GROWTH = 1 << 20


def heap_message(limit: int, asked: int, names: list[str] | None) -> str:
    """What a cell stopped for running out of heap is told; ``names`` None: no cell was running."""
    msg = f"JavaScript heap out of memory: the cell needed more than the {limit >> 20} MB heap limit and was stopped"
    if limit < asked:
        msg += f" (the {asked >> 20} MB asked for is more than this V8 build can hold)"
    return msg if names is None else msg + _freed(names)


def buffers_message(limit: int, names: list[str] | None) -> str:
    """What code stopped for holding too much array buffer memory is told (like the heap's)."""
    msg = (
        f"Memory limit reached: the cell's ArrayBuffers and typed arrays held more than the {limit >> 20} MB limit "
        "(MCP2REPL_HEAP_LIMIT_MB bounds them as it bounds the heap) and it was stopped"
    )
    return msg if names is None else msg + _freed(names)


def _freed(names: list[str]) -> str:
    said = f". Its top-level names ({', '.join(names)}) were set to undefined to free the memory" if names else ""
    return said + "; if memory stays short, set large globals to null (or restart the kernel)"


class BufferWatch:
    """Watches one context's array buffer memory while ``busy()``; calls ``stop()`` (from its thread) to stop the code."""

    def __init__(self, memory: ExternalMemory, flag: memoryview, limit: int, busy: Callable[[], bool], stop: Callable[[], None]) -> None:
        self._memory = memory
        self._flag = flag
        self.limit = limit
        self._busy = busy
        self._stop = stop
        self._floor = 0  # held when the cell started, lowered by each exact count
        self._seen = 0  # the last exact count: the next look waits for growth past it
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mcp2repl-buffers", daemon=True)
        self._thread.start()

    def cell_started(self) -> None:
        """What is held now belongs to earlier cells: only growth above it is this cell's."""
        self._floor = self._seen = self._memory.bytes()

    def close(self) -> None:
        """Stop the thread, and wait for it: it must not read a context that is being freed."""
        self._closed.set()
        if self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        flag, memory = self._flag, self._memory
        while not self._closed.wait(FAST if flag[0] == LOOK or flag[4] else EVERY if self._busy() else IDLE):
            try:
                if flag[4] == 1:  # V8 collected and waits: the count is exact now
                    used = memory.bytes()
                    if used > self.limit and used > self._floor + GROWTH and flag[0] == 0:
                        flag[0] = STOP
                        self._stop()
                    self._floor, self._seen = min(self._floor, used), used
                    flag[4] = 0
                elif flag[4] == 0 and flag[0] == 0 and self._busy():
                    used = memory.bytes()
                    if used > self.limit and used > self._seen + (self.limit >> 3):
                        flag[0] = LOOK
            except (ValueError, RuntimeError):  # the context was closed under us
                return

