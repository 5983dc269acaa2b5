"""Persistent input history, so `jupyter console` up-arrow and history requests survive restarts.

One SQLite file per user, shared by every mcp2repl kernel; each kernel start is a new session
number, like IPython's history. SQLite handles concurrent kernels; a broken or unwritable file
only disables history, it never breaks the kernel.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import sqlite3
from pathlib import Path

log = logging.getLogger(__name__)

Entry = tuple[int, int, "str | tuple[str, str | None]"]


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
        self._db: sqlite3.Connection | None = None
        try:
            target = path or default_path()
            target.parent.mkdir(parents=True, exist_ok=True)
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
            self._db = db
        except (OSError, sqlite3.Error) as exc:
            log.warning("history disabled: %s", exc)

    def store(self, line: int, source: str, output: str | None = None) -> None:
        if self._db is None:
            return
        try:
            self._db.execute("INSERT OR REPLACE INTO history VALUES (?, ?, ?, ?)", (self.session, line, source, output))
        except sqlite3.Error as exc:
            log.warning("could not store history: %s", exc)

    def _rows(self, sql: str, args: tuple[object, ...], output: bool) -> list[Entry]:
        if self._db is None:
            return []
        rows = self._db.execute(sql, args).fetchall()
        return [(s, n, (src, out) if output else src) for s, n, src, out in rows]

    def tail(self, n: int, output: bool = False) -> list[Entry]:
        rows = self._rows("SELECT * FROM history ORDER BY session DESC, line DESC LIMIT ?", (n,), output)
        return rows[::-1]

    def range(self, session: int, start: int, stop: int | None, output: bool = False) -> list[Entry]:
        """``session`` 0 means this one, negative counts back, as in IPython."""
        if session <= 0:
            session = self.session + session
        sql = "SELECT * FROM history WHERE session = ? AND line >= ?"
        args: tuple[object, ...] = (session, start)
        if stop is not None:
            sql += " AND line < ?"
            args += (stop,)
        return self._rows(sql + " ORDER BY line", args, output)

    def search(self, pattern: str, n: int | None = None, unique: bool = False, output: bool = False) -> list[Entry]:
        """Glob ``pattern`` (``*``, ``?``), newest ``n`` matches, oldest first."""
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
