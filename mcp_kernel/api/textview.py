"""Plain-text views for api.print that a terminal (and an agent) reads well, made with rich.

Tables are the one shape worth more than Node-style inspect: a list of records printed as rows
and columns is far easier to scan in `jupyter console` and costs an agent fewer tokens.
"""

from __future__ import annotations

import io
import json
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

MAX_ROWS = 50
MAX_COLS = 12
WIDTH = 120


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= 60 else text[:59] + "…"


def records_table(rows: list[dict[str, Any]], total: int | None = None) -> str:
    """A boxed text table of the first rows, with a note of what was left out."""
    columns: list[str] = []
    for row in rows[:MAX_ROWS]:
        for key in row:
            if key not in columns and len(columns) < MAX_COLS:
                columns.append(key)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for col in columns:
        table.add_column(col, overflow="ellipsis", max_width=40)
    for row in rows[:MAX_ROWS]:
        table.add_row(*(_cell(row.get(col)) for col in columns))
    out = io.StringIO()
    Console(file=out, width=WIDTH, color_system=None, force_terminal=False, legacy_windows=False).print(table)
    text = out.getvalue().rstrip()
    total = len(rows) if total is None else total
    if total > min(len(rows), MAX_ROWS):
        text += f"\n… {total - min(len(rows), MAX_ROWS)} more rows"
    return text
