"""The transfer budget: how many bytes of server answers one cell may pull into JavaScript.

An agent's loop that fetches page after page would otherwise pull a server's whole database into
V8 (and, printed, into its own context). Every answer that reaches JS counts: tool results,
resources and prompts (``mcp.<server>.resources.read``, ``prompts.get``), and the answers to calls
a cell's timers and callbacks make after the cell ended, which count against that cell (the one
that set them up): a ``setInterval`` cannot pull more than its cell could. An answer that would
pass the budget is refused whole and counts for nothing. The budget is per cell
(``MCP2REPL_TRANSFER_BUDGET_MB``); the last :data:`KEPT_CELLS` cells' counts are kept.
"""

from __future__ import annotations

from collections import OrderedDict

#: Cells whose counts are kept (a timer of a cell older than that starts a fresh count).
KEPT_CELLS = 500
MIB = 1 << 20


class TransferBudget:
    """Bytes of answers each cell has received, against one limit per cell."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._used: OrderedDict[str, int] = OrderedDict()

    def used(self, cell: str) -> int:
        return self._used.get(cell, 0)

    def charge(self, cell: str, size: int, ended: bool = False) -> str:
        """Count ``size`` bytes against ``cell``; "" if they fit, else why not (and nothing is counted).

        ``ended``: the cell is over (a timer's or a callback's call), which the reason then says.
        """
        total = self.used(cell) + size
        if total > self.limit:
            late = " (calls made later by a cell's timers and callbacks count against that cell)" if ended else ""
            return (
                f"this result ({size / MIB:.1f} MiB) takes the cell's tool results to {total / MIB:.1f} MiB, past the transfer "
                f"budget of {self.limit / MIB:g} MiB per cell{late}. Ask the tool for less (paging, filters, fewer fields), "
                "or raise the budget with MCP2REPL_TRANSFER_BUDGET_MB."
            )
        self._used[cell] = total
        self._used.move_to_end(cell)
        while len(self._used) > KEPT_CELLS:
            self._used.popitem(last=False)
        return ""
