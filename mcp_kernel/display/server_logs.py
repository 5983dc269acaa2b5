"""What a cell shows of its servers' log notifications: the first lines, then one count.

A server may send thousands of log messages during one call; each shown as a line would bury the
cell's output (and an agent's context). Every message still goes to the server's log file
(``api.serverLog`` reads it); a cell shows :data:`SHOWN` per server and, when it ends, how many
more there were and how to read them.
"""

from __future__ import annotations

from collections.abc import Callable

#: Log lines of one server shown on one cell.
SHOWN = 20


class ServerLogLines:
    """Counts per (cell, server); ``show`` puts a line on the running cell."""

    def __init__(self, show: Callable[[str], None]) -> None:
        self._show = show
        self._counts: dict[tuple[str, str], int] = {}

    def add(self, cell: str, server: str, level: str, text: str) -> None:
        count = self._counts.get((cell, server), 0) + 1
        self._counts[(cell, server)] = count
        if count <= SHOWN:
            self._show(f"[{server}] {level}: {text}\n")

    def summary(self, cell: str) -> str:
        """The cell ended: one line per server whose messages were not all shown ("" if none)."""
        lines = []
        for key in [k for k in self._counts if k[0] == cell]:
            count = self._counts.pop(key)
            if count > SHOWN:
                server = key[1]
                lines.append(f"[mcp2repl] … {count - SHOWN:,} more log lines from {server}: await api.serverLog({server!r})\n")
        return "".join(lines)
