"""Writing a session's record as it happens, off the kernel's event loop, valid at every moment.

The kernel's loop only queues what happened (a step began, an output, a step ended); a thread of
its own owns the :class:`~mcp_kernel.record.notebook.Notebook`, applies the queue and writes the
whole notebook to a temporary file beside it and renames it over the old one (``write_private``:
0600, never through a link, atomic). A kernel killed at any moment leaves the last complete write.

Writes are coalesced: a burst of output is one write, and a write comes at most every
:data:`PACE` times the last write's duration, so a big record costs a bounded share of a core. A
step's end is the exception: :meth:`Writer.end` returns a future done once a write includes it,
which the kernel awaits (briefly) before its reply, so the record holds every step a client has
seen finish.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..client.trust import write_private
from .notebook import Notebook

#: A write comes no sooner than this many times the previous write's duration after it.
PACE = 4.0
MIN_INTERVAL = 0.05
_STOP = object()


class Writer:
    """A session's record at ``path``: begun fresh (the previous record is kept as ``NAME.prev.ipynb``)."""

    def __init__(self, path: Path, notebook: Notebook) -> None:
        self.path = path
        self.notebook = notebook
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._failed = False
        with contextlib.suppress(OSError):  # a new kernel is a new record: the last one stays readable beside it
            if path.is_file() and not path.is_symlink():
                path.replace(path.with_name(path.stem + ".prev.ipynb"))
        self._write()
        self._thread = threading.Thread(target=self._run, name="mcp2repl-record", daemon=True)
        self._thread.start()

    # ---- from the kernel's loop (never blocks) --------------------------------------------------

    def begin(self, key: str, source: str, count: int | None, meta: dict[str, Any]) -> None:
        self._queue.put(("begin", key, source, count, meta))

    def output(self, key: str, msg_type: str, content: dict[str, Any]) -> None:
        self._queue.put(("output", key, msg_type, content))

    def end(self, key: str, count: int | None, meta: dict[str, Any]) -> concurrent.futures.Future[None]:
        """Record the step's end; the future is done once the file holds it."""
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._queue.put(("end", key, count, meta, done))
        return done

    def close(self, timeout: float = 2.0) -> None:
        """Write what is queued and stop the thread (a kernel ending on purpose)."""
        self._queue.put(_STOP)
        self._thread.join(timeout)

    # ---- the thread -----------------------------------------------------------------------------

    def _run(self) -> None:
        waiting: list[concurrent.futures.Future[None]] = []
        dirty = stop = False
        next_write = 0.0
        while not stop:
            timeout = max(0.0, next_write - time.monotonic()) if dirty else None
            try:
                item = self._queue.get(timeout=timeout)  # a due write: 0, which does not block
            except queue.Empty:
                item = None
            while item is not None:  # apply everything queued: a burst is one write
                if item is _STOP:
                    stop = True
                    break
                if item[0] == "end":
                    waiting.append(item[-1])
                    item = item[:-1]
                try:
                    getattr(self.notebook, item[0])(*item[1:])
                except Exception as exc:  # noqa: BLE001 - a record's bug must never end the kernel's steps
                    self._say(f"could not record a step's {item[0]}: {type(exc).__name__}: {exc}")
                dirty = True
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    item = None
            if dirty and (stop or waiting or time.monotonic() >= next_write):
                started = time.monotonic()
                self._write()
                dirty = False
                next_write = time.monotonic() + max(MIN_INTERVAL, PACE * (time.monotonic() - started))
                for done in waiting:
                    done.set_result(None)
                waiting.clear()

    def _write(self) -> None:
        try:
            write_private(self.path, self.notebook.text(), self.path.name)
            self._failed = False
        except Exception as exc:  # noqa: BLE001 - a full disk or a removed folder: the steps go on unrecorded
            if not self._failed:  # said once per failing stretch, in the session's log
                self._say(f"cannot write the session's record {self.path.name}: {exc}")
            self._failed = True

    @staticmethod
    def _say(text: str) -> None:
        print(f"[mcp2repl] {text}", file=sys.__stderr__, flush=True)
