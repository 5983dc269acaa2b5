"""Per-cell budgets for what a cell prints and displays.

Console output: past its budget, output is cut and the whole log kept as an artifact.

An agent that logs a tool result (``console.log(result)``) would otherwise flood its own context,
the very thing this kernel exists to prevent. The budget defaults to the cell result's limit
(``MCP2REPL_MAX_OUTPUT_CHARS``) and is set apart with ``MCP2REPL_MAX_CONSOLE_CHARS``. stdout and
stderr share it. Up to the budget, output passes untouched; the rest is held (up to ``KEEP_CHARS``)
and saved with what was shown as one text artifact when the cell ends; its handle is printed.

Displays (``api.display``, ``api.html``, images…): each MIME bundle counts its size, and past the
cell's budget (``MCP2REPL_MAX_DISPLAY_MB``) displays are dropped, with one note on stderr. Big
content belongs in an artifact; a notebook of 20 MB outputs is one nobody can open.
"""

from __future__ import annotations

import json
from typing import Any

#: Characters of one cell's console log kept for the artifact (beyond it, only counted).
KEEP_CHARS = 64 << 20


class ConsoleBudget:
    """One cell's console output so far."""

    def __init__(self, budget: int, keep: int = KEEP_CHARS) -> None:
        self.budget = budget
        self.keep = keep
        self.shown = 0
        self.cut = False
        self.total = 0
        self.lines = 0
        self.ended = False  # the cell ended: what passes the budget now is only counted
        self._log: list[str] = []
        self._kept = 0

    @property
    def over(self) -> bool:
        return self.total > self.budget

    def take(self, text: str) -> str:
        """What of ``text`` to show now (with a one-time marker where the budget runs out)."""
        self.total += len(text)
        self.lines += text.count("\n")
        if not self.ended and self._kept < self.keep:
            self._log.append(text[: self.keep - self._kept])
            self._kept += len(self._log[-1])
        if self.cut:
            return ""
        room = self.budget - self.shown
        if len(text) <= room:
            self.shown += len(text)
            return text
        self.cut = True
        newline = text.rfind("\n", 0, room)
        shown = text[: newline + 1 if newline >= 0 else room]  # a whole last line when there is one
        self.shown += len(shown)
        sep = "" if not shown or shown.endswith("\n") else "\n"
        when = "output after the cell ended is not saved" if self.ended else "the whole log is saved when the cell ends"
        return f"{shown}{sep}[mcp2repl] console output cut at {self.budget:,} characters (MCP2REPL_MAX_CONSOLE_CHARS); {when}\n"

    def log(self) -> str:
        """The whole log (up to ``keep`` characters), as written."""
        text = "".join(self._log)
        if self.total > self._kept:
            text += f"\n[mcp2repl] … {self.total - self._kept:,} more characters were not kept\n"
        return text

    def end(self) -> bool:
        """The cell ended: stop keeping the log; True if it passed the budget (the log is to be saved)."""
        self.ended = True
        if not self.over:
            self._log = []
        return self.over

    def saved_line(self, read_with: str) -> str:
        """The line that tells where the whole log went."""
        self._log = []
        lines = f"{self.lines:,} line{'s' if self.lines != 1 else ''}"
        return f"[mcp2repl] whole console log ({self.total:,} characters, {lines}): {read_with}\n"


class DisplayBudget:
    """One cell's displays so far, against a budget in characters (what a bundle's values take as text)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.shown = 0
        self.dropped = 0

    def take(self, data: dict[str, Any]) -> tuple[bool, str]:
        """May this bundle be shown? And the note to print (once, with the first bundle dropped)."""
        if self.dropped:
            self.dropped += 1
            return False, ""
        size = sum(len(v) if isinstance(v, str) else len(json.dumps(v, ensure_ascii=False, default=str)) for v in data.values())
        if self.shown + size <= self.budget:
            self.shown += size
            return True, ""
        self.dropped = 1
        return False, (
            f"[mcp2repl] display output of this cell passed its budget of {self.budget / (1 << 20):g} MB (MCP2REPL_MAX_DISPLAY_MB): "
            "this display and later ones are dropped; save big content with api.saveArtifact\n"
        )
