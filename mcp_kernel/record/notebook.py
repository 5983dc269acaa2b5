"""The notebook a session's steps make: cells built from what the kernel sent on IOPub, bounded.

Outputs are taken exactly as the kernel sent them (already masked and bounded by the Session), and
turned into nbformat 4.5 outputs the way nbclient does it: consecutive stream text of one name is
one output, ``update_display_data`` rewrites the outputs that carry its display id, and
``clear_output(wait=True)`` clears at the next output. Each cell's JSON text is made once per
change and kept, so writing a long record costs a join, not a serialisation of every cell.

A long session must not grow its record without end: past :data:`MAX_BYTES` the outputs of the
oldest steps are dropped first, then (and past :data:`MAX_CELLS`) the oldest steps themselves, and
a markdown cell at the top says how many. The top-level metadata is written on the first line, so
``mcp2repl sessions`` reads a record's summary without parsing the whole file (:func:`summary`).
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

MAX_BYTES = 20_000_000
MAX_CELLS = 1000
NOTE_ID = "mcp2repl-trimmed"
KERNELSPEC = {"name": "mcp2repl", "display_name": "JavaScript (mcp2repl)", "language": "javascript"}
LANGUAGE_INFO = {
    "name": "javascript",
    "mimetype": "text/javascript",
    "file_extension": ".js",
    "codemirror_mode": "typescript",
    "pygments_lexer": "typescript",
}
_HEAD = '{"metadata": '
_ID = re.compile(r"[^A-Za-z0-9_-]")


def _dumps(value: Any) -> str:
    # ASCII: whatever the locale's encoding, and a lone surrogate a cell printed is written escaped
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


class Cell:
    """One step: its source, execution count, outputs and ``mcp2repl`` metadata, and its JSON text while unchanged."""

    __slots__ = ("clear_pending", "count", "id", "meta", "outputs", "source", "text")

    def __init__(self, cell_id: str, source: str, count: int | None, meta: dict[str, Any]) -> None:
        self.id = cell_id
        self.source = source
        self.count = count
        self.meta = meta
        self.outputs: list[dict[str, Any]] = []
        self.clear_pending = False
        self.text: str | None = None

    def json(self) -> str:
        if self.text is None:
            cell = {
                "cell_type": "code",
                "id": self.id,
                "metadata": {"mcp2repl": self.meta},
                "execution_count": self.count,
                "source": self.source,
                "outputs": self.outputs,
            }
            self.text = _dumps(cell)
        return self.text


class Notebook:
    """The record of one session, fed in order by the kernel (through writer.py's thread)."""

    def __init__(self, session: str, max_bytes: int = MAX_BYTES, max_cells: int = MAX_CELLS) -> None:
        self.session = session
        self.max_bytes = max_bytes
        self.max_cells = max_cells
        self.cells: list[Cell] = []
        self.steps = 0  # every step recorded, dropped ones included
        self.last_client: str | None = None
        self.trimmed = 0  # oldest steps whose outputs were dropped
        self.dropped = 0  # oldest steps dropped whole
        self._by_key: dict[str, Cell] = {}
        self._displays: dict[str, list[tuple[Cell, dict[str, Any]]]] = {}

    # ---- what the kernel tells ------------------------------------------------------------------

    def begin(self, key: str, source: str, count: int | None, meta: dict[str, Any]) -> None:
        """A step starts: its cell is recorded at once, source and no outputs (a crash keeps that much)."""
        cell = Cell(_ID.sub("-", key)[:64] or f"step-{self.steps + 1}", source, count, dict(meta))
        self.cells.append(cell)
        self._by_key[key] = cell
        self.steps += 1
        self.last_client = meta.get("client")

    def output(self, key: str, msg_type: str, content: dict[str, Any]) -> None:
        """One IOPub message of step ``key`` (late ones, from its timers, included)."""
        cell = self._by_key.get(key)
        if cell is None:
            return
        if msg_type == "clear_output":
            if content.get("wait"):
                cell.clear_pending = True
            else:
                cell.outputs = []
                cell.text = None
            return
        if msg_type == "update_display_data":
            for owner, out in self._displays.get(str((content.get("transient") or {}).get("display_id")), []):
                out["data"], out["metadata"] = content.get("data", {}), content.get("metadata", {})
                owner.text = None
            return
        out = _output(msg_type, content)
        if out is None:
            return
        if cell.clear_pending:
            cell.outputs, cell.clear_pending = [], False
        last = cell.outputs[-1] if cell.outputs else None
        if out["output_type"] == "stream" and last and last["output_type"] == "stream" and last["name"] == out["name"]:
            last["text"] += out["text"]
        else:
            cell.outputs.append(out)
            display_id = (content.get("transient") or {}).get("display_id")
            if msg_type == "display_data" and display_id:
                self._displays.setdefault(str(display_id), []).append((cell, out))
        cell.text = None

    def end(self, key: str, count: int | None, meta: dict[str, Any]) -> None:
        """A step's reply: its execution count and the rest of its metadata (when it ended, its calls)."""
        cell = self._by_key.get(key)
        if cell is None:
            return
        cell.count = count
        cell.meta.update(meta)
        cell.text = None

    # ---- the file -------------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        own = {"session": self.session, "steps": self.steps, "lastClient": self.last_client}
        if self.trimmed or self.dropped:
            own.update(trimmed=self.trimmed, dropped=self.dropped)
        return {"kernelspec": KERNELSPEC, "language_info": LANGUAGE_INFO, "mcp2repl": own}

    def text(self) -> str:
        """The whole notebook as nbformat 4.5 JSON text, within the bounds."""
        self._bound()
        cells = [c.json() for c in self.cells]
        if self.trimmed or self.dropped:
            cells.insert(0, _dumps(self._note()))
        return _HEAD + _dumps(self.metadata()) + ',\n"nbformat": 4,\n"nbformat_minor": 5,\n"cells": [\n' + ",\n".join(cells) + "\n]}\n"

    def _bound(self) -> None:
        while len(self.cells) > self.max_cells:
            self._drop()
        total = sum(len(c.json()) + 2 for c in self.cells)
        while total > self.max_bytes and self.cells:
            oldest = next((c for c in self.cells if c.outputs), None)
            if oldest is not None:
                before = len(oldest.json())
                oldest.outputs, oldest.text = [], None
                oldest.meta["outputsTrimmed"] = True
                self.trimmed += 1
                total -= before - len(oldest.json())
            else:
                total -= len(self.cells[0].json()) + 2
                self._drop()

    def _drop(self) -> None:
        cell = self.cells.pop(0)
        self.dropped += 1
        self.trimmed -= bool(cell.meta.get("outputsTrimmed"))
        self._by_key = {k: c for k, c in self._by_key.items() if c is not cell}
        for display_id, owners in list(self._displays.items()):
            kept = [(c, o) for c, o in owners if c is not cell]
            if kept:
                self._displays[display_id] = kept
            else:
                del self._displays[display_id]

    def _note(self) -> dict[str, Any]:
        said = []
        if self.dropped:
            said.append(f"the {self.dropped} oldest steps were dropped")
        if self.trimmed:
            said.append(f"the outputs of the {self.trimmed} oldest steps kept were trimmed")
        limit = f"{self.max_bytes / 1e6:g} MB and {self.max_cells:,} steps"
        return {
            "cell_type": "markdown",
            "id": NOTE_ID,
            "metadata": {"mcp2repl": {"note": "trimmed"}},
            "source": f"*mcp2repl keeps a session's record under {limit}: {' and '.join(said)}.*",
        }


def _output(msg_type: str, content: dict[str, Any]) -> dict[str, Any] | None:
    """The nbformat output of one IOPub message (None: it leaves none)."""
    if msg_type == "stream":
        return {"output_type": "stream", "name": content.get("name", "stdout"), "text": str(content.get("text", ""))}
    if msg_type == "display_data":
        return {"output_type": "display_data", "data": content.get("data", {}), "metadata": content.get("metadata", {})}
    if msg_type == "execute_result":
        return {
            "output_type": "execute_result",
            "execution_count": content.get("execution_count"),
            "data": content.get("data", {}),
            "metadata": content.get("metadata", {}),
        }
    if msg_type == "error":
        return {
            "output_type": "error",
            "ename": str(content.get("ename", "")),
            "evalue": str(content.get("evalue", "")),
            "traceback": [str(line) for line in content.get("traceback", [])],
        }
    return None


def summary(path: Path) -> dict[str, Any] | None:
    """A record's ``mcp2repl`` metadata (session, steps, lastClient), read from its first line; None when unreadable."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            first = f.readline(1_000_000)
            if first.startswith(_HEAD) and first.endswith(",\n"):
                with contextlib.suppress(ValueError):
                    own = json.loads(first[len(_HEAD) : -2]).get("mcp2repl")
                    return own if isinstance(own, dict) else None
            f.seek(0)
            own = json.load(f).get("metadata", {}).get("mcp2repl")  # saved by another program: read it whole
    except (OSError, ValueError, AttributeError):
        return None
    return own if isinstance(own, dict) else None
