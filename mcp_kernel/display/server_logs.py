"""What a cell shows of its servers' log notifications: at most one short line per server, for errors.

A server's log messages are its own business: `[everything] info: Roots updated…` in a step's
stderr costs an agent context and tells it nothing it asked for, and a server may send thousands
during one call. Every message goes to the server's log file (``api.serverLog`` reads it); a cell
shows none of the ones below ``error``, and of the error-level ones (error, critical, alert,
emergency) only the first per server, cut to :data:`SHOWN_CHARS`, with where the rest are.
"""

from __future__ import annotations

from collections.abc import Callable

#: MCP log levels (RFC 5424 severities) a cell is told about: the server says something failed.
SHOWN_LEVELS = frozenset({"error", "critical", "alert", "emergency"})
#: Characters of an error message shown on the cell.
SHOWN_CHARS = 200


class ServerLogLines:
    """Error messages per (cell, server); ``show`` puts the first one's line on the running cell."""

    def __init__(self, show: Callable[[str], None]) -> None:
        self._show = show
        self._said: set[tuple[str, str]] = set()  # (cell, server): its first error was shown

    def add(self, cell: str, server: str, level: str, text: str) -> None:
        if level not in SHOWN_LEVELS or (cell, server) in self._said:
            return
        self._said.add((cell, server))
        line = " ".join(text.split())
        line = line if len(line) <= SHOWN_CHARS else line[:SHOWN_CHARS] + "…"
        self._show(f"[{server}] {level}: {line} (its log: await api.serverLog({server!r}))\n")

    def summary(self, cell: str) -> str:
        """The cell ended: forget whom it heard from; nothing more to say (the first error said where the rest are)."""
        self._said = {key for key in self._said if key[0] != cell}
        return ""
