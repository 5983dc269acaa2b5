"""Persistent input history, so `jupyter console` up-arrow and history requests survive restarts.

One SQLite file per user, shared by every mcp2repl kernel; each kernel start is a new session
number, like IPython's history. SQLite handles concurrent kernels; a broken or unwritable file
only disables history, it never breaks the kernel. Cells and results can hold private data, so
the file is readable by its owner only, each entry is capped, and the oldest sessions are
dropped when the file grows past :data:`MAX_BYTES` (freed pages are reused, so it stops growing).

Nothing waits on the caller's thread (the kernel's event loop): a cell's entry is written at once
only when no other kernel holds the file's lock (SQLite told not to wait), else in one thread of
the history's own, where the reads run too, in the order asked. On the loop, a write waited for
another kernel's lock (up to 5 s, deaf to interrupts and shutdown) and a search matched a pattern
over every entry; a thread for every write cost a trivial cell ~0.15 ms. The thread's calls return
futures: the kernel awaits them, tests take their results.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import sqlite3
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

log = logging.getLogger(__name__)

Entry = tuple[int, int, "str | tuple[str, str | None]"]
T = TypeVar("T")
#: Longest source or output kept per entry (characters).
MAX_ENTRY = 100_000
#: Size of the history file past which the oldest sessions are dropped.
MAX_BYTES = 20 << 20
#: How many stores between two size checks.
CHECK_EVERY = 50
INSERT = "INSERT OR REPLACE INTO history VALUES (?, ?, ?, ?)"


def default_path() -> Path:
    """``MCP2REPL_HISTORY`` or ``<jupyter data dir>/mcp2repl/history.sqlite``."""
    env = os.environ.get("MCP2REPL_HISTORY")
    if env:
        return Path(env).expanduser()
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "mcp2repl" / "history.sqlite"


class History:
    """Append-only cell history with the three access types of the Jupyter protocol."""

    def __init__(self, path: Path | None = None) -> None:
        self.session = 0
        self._db: sqlite3.Connection | None = None  # the thread's
        self._now: sqlite3.Connection | None = None  # the caller's: never waits for a lock
        self._last: Future[None] | None = None  # the latest write given to the thread
        self._stores = 0
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="mcp2repl-history")  # made on its first task
        try:
            target = path or default_path()
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(target, os.O_RDWR | os.O_CREAT, 0o600)  # created owner-only, before SQLite opens it
            os.close(fd)
            os.chmod(target, 0o600)
            db = sqlite3.connect(str(target), timeout=5, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # no fsync per cell: history is not precious data
            db.execute(
                "CREATE TABLE IF NOT EXISTS history (session INTEGER, line INTEGER, source TEXT, output TEXT, PRIMARY KEY (session, line))"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS sessions (session INTEGER PRIMARY KEY AUTOINCREMENT, started TEXT DEFAULT CURRENT_TIMESTAMP)"
            )
            self.session = int(db.execute("INSERT INTO sessions DEFAULT VALUES").lastrowid or 0)
            self._now = sqlite3.connect(str(target), timeout=0, isolation_level=None, check_same_thread=False)
            self._now.execute("PRAGMA synchronous=NORMAL")  # per connection
            self._db = db
        except (OSError, sqlite3.Error) as exc:
            log.warning("history disabled: %s", exc)

    def _run(self, fn: Callable[..., T], *args: object) -> Future[T]:
        """``fn(*args)`` in the history's thread, after everything asked before it."""
        return self._worker.submit(fn, *args)

    def store(self, line: int, source: str, output: str | None = None) -> Future[None] | None:
        """Keep one entry: now if the file is free and no write waits before it (None), else in the thread (a
        future, done once written: a reply that waits for it is heard after the entry is there)."""
        if self._db is None:  # history is off (its file could not be opened)
            return None
        entry = (self.session, line, _cap(source), _cap(output) if output is not None else None)
        if self._now is not None and (self._last is None or self._last.done()):
            try:
                self._now.execute(INSERT, entry)
            except sqlite3.Error:  # locked by another kernel (or failing): the thread waits, and says why
                pass
            else:
                if self._counted():
                    self._last = self._run(self._trim)
                return None
        self._last = self._run(self._store, entry)
        return self._last

    def _store(self, entry: tuple[int, int, str, str | None]) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(INSERT, entry)
        except sqlite3.Error as exc:
            log.warning("could not store history: %s", exc)
            return
        if self._counted():
            self._trim()

    def _counted(self) -> bool:
        """One more entry stored (here or in the thread, never both at once: see :meth:`store`); is a size check due?"""
        self._stores += 1
        return (self._stores - 1) % CHECK_EVERY == 0

    def _trim(self) -> None:
        """Drop the oldest sessions while the file is larger than MAX_BYTES (this session is kept)."""
        try:
            self._trim_now()
        except sqlite3.Error as exc:
            log.warning("could not trim history: %s", exc)

    def _trim_now(self) -> None:
        assert self._db is not None
        for _ in range(1000):
            pages = self._db.execute("PRAGMA page_count").fetchone()[0] - self._db.execute("PRAGMA freelist_count").fetchone()[0]
            if pages * self._db.execute("PRAGMA page_size").fetchone()[0] <= MAX_BYTES:
                return
            oldest = self._db.execute("SELECT MIN(session) FROM history WHERE session < ?", (self.session,)).fetchone()[0]
            if oldest is None:
                return
            self._db.execute("DELETE FROM history WHERE session = ?", (oldest,))

    def _rows(self, sql: str, args: tuple[object, ...], output: bool) -> list[Entry]:
        if self._db is None:
            return []
        rows = self._db.execute(sql, args).fetchall()
        return [(s, n, (src, out) if output else src) for s, n, src, out in rows]

    def answer(self, kind: str, output: bool, session: int, start: int, stop: int | None, n: int | None, pattern: str, unique: bool) -> Future[list[Entry]]:
        """The rows a ``history_request`` of access type ``kind`` asks for (none for an unknown type)."""
        if kind == "tail":
            return self.tail(n or 10, output)
        if kind == "range":
            return self.range(session, start, stop, output)
        if kind == "search":
            return self.search(pattern, n, unique, output)
        return self._run(list)

    def tail(self, n: int, output: bool = False) -> Future[list[Entry]]:
        return self._run(self._tail, n, output)

    def _tail(self, n: int, output: bool) -> list[Entry]:
        rows = self._rows("SELECT * FROM history ORDER BY session DESC, line DESC LIMIT ?", (n,), output)
        return rows[::-1]

    def range(self, session: int, start: int, stop: int | None, output: bool = False) -> Future[list[Entry]]:
        """``session`` 0 means this one, negative counts back, as in IPython."""
        return self._run(self._range, session, start, stop, output)

    def _range(self, session: int, start: int, stop: int | None, output: bool) -> list[Entry]:
        if session <= 0:
            session = self.session + session
        sql = "SELECT * FROM history WHERE session = ? AND line >= ?"
        args: tuple[object, ...] = (session, start)
        if stop is not None:
            sql += " AND line < ?"
            args += (stop,)
        return self._rows(sql + " ORDER BY line", args, output)

    def search(self, pattern: str, n: int | None = None, unique: bool = False, output: bool = False) -> Future[list[Entry]]:
        """Glob ``pattern`` (``*``, ``?``), newest ``n`` matches, oldest first."""
        return self._run(self._search, pattern, n, unique, output)

    def _search(self, pattern: str, n: int | None, unique: bool, output: bool) -> list[Entry]:
        if self._db is None:
            return []
        regex = fnmatch.translate(pattern)
        rows = self._db.execute("SELECT * FROM history ORDER BY session DESC, line DESC").fetchall()
        import re

        compiled = re.compile(regex, re.S)
        found: list[Entry] = []
        seen: set[str] = set()
        for s, line, src, out in rows:
            if not compiled.match(src) or (unique and src in seen):
                continue
            seen.add(src)
            found.append((s, line, (src, out) if output else src))
            if n is not None and len(found) >= n:
                break
        return found[::-1]


def _cap(text: str) -> str:
    return text if len(text) <= MAX_ENTRY else text[:MAX_ENTRY] + f"\n… ({len(text) - MAX_ENTRY} more characters not kept)"
