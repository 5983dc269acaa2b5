"""The tool calls of one cell: a record for agents, and one live display for people.

A cell that composes many calls should show one updating line, not a flood: calls so far, the
ones in flight, server progress as a bar, and elapsed time; it collapses into a summary when the
cell ends. Fast cells show nothing (the display appears only once calls have run for a moment).
The full trace goes into a notebook's execute_reply metadata (``mcp2repl.calls``); a step client
gets it when it asks (``--trace``), else one line each for failed and unfinished calls (:meth:`CellTrace.notes`).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: A live display appears only when the cell has been calling tools this long (seconds).
SHOW_AFTER = 0.4
#: At most this many display updates per second (and progress lines on stderr, after a first burst).
UPDATES_PER_SECOND = 5
#: Progress lines a terminal gets at once before they are paced (a task's first status and progress).
BURST = 5
#: Tools named in the in-flight line (grouped: ``everything.echo ×158``).
MAX_NAMES = 4
#: Calls of one cell recorded one by one; later ones are counted per tool (one row with ``count``),
#: so a loop of 100,000 calls keeps a reply's metadata and ``api.calls()`` small.
KEPT_CALLS = 1000


@dataclass
class Call:
    id: int
    server: str
    tool: str
    started: float
    ms: float | None = None
    ok: bool | None = None
    bytes_in: int = 0
    bytes_out: int = 0
    error: str | None = None
    progress: tuple[float, float | None, str | None] | None = None

    def record(self) -> dict[str, Any]:
        """What the trace says of the call; one still running (a call the cell did not await) is
        ``unfinished``, neither a success nor a failure (``ok: false, error: null`` read as both)."""
        row = {
            "server": self.server,
            "tool": self.tool,
            "ok": self.ok,
            "ms": self.ms,
            "bytesIn": self.bytes_in,
            "bytesOut": self.bytes_out,
            "error": self.error,
        }
        if self.ok is None:
            row["unfinished"] = True
        return row


Publish = Callable[[dict[str, Any], bool], None]  # (bundle, update?)


@dataclass
class CellTrace:
    """Calls of one cell, and the display that shows them (publish is None: record only).

    Every call updates running totals, so the cost per call stays constant however many calls
    the cell has made (a tool call is the kernel's hot path).
    """

    publish: Publish | None
    mode: str = "display"  # display | stderr | off
    stderr: Callable[[str], None] | None = None
    started: float = field(default_factory=time.monotonic)
    calls: list[Call] = field(default_factory=list)  # the first KEPT_CALLS calls
    shown: bool = False
    _last: float = 0.0
    _next_id: int = 0
    _flying: dict[int, Call] = field(default_factory=dict)
    _failed: int = 0
    _received: int = 0
    _folded: dict[tuple[str, str, bool], dict[str, Any]] = field(default_factory=dict)
    _lines: float = BURST  # progress lines the terminal may get now (refilled UPDATES_PER_SECOND a second)
    _paced: float = field(default_factory=time.monotonic)
    _held: tuple[int, str] | None = None  # (call, line): the latest progress line that had to wait; a newer one replaces it

    def begin(self, server: str, tool: str, bytes_out: int) -> Call:
        self._next_id += 1
        call = Call(self._next_id, server, tool, time.monotonic(), bytes_out=bytes_out)
        if len(self.calls) < KEPT_CALLS:
            self.calls.append(call)
        self._flying[call.id] = call
        self._refresh()
        return call

    def progress(self, call: Call, done: float, total: float | None, message: str | None) -> None:
        """A server's progress: the display updates at most UPDATES_PER_SECOND times a second, and so do the
        stderr lines of a terminal (after a first burst), however many notifications come: the latest wins."""
        call.progress = (done, total, message)
        if self.mode == "stderr" and self.stderr is not None:
            # a task's status message comes without numbers (done 0, no total)
            pct = f"{done / total:.0%}" if total else f"{done:g}" if done or not message else ""
            self._say(call.id, f"[{call.server}.{call.tool}] {' '.join(filter(None, [pct, message]))}\n")
        self._refresh()

    def _say(self, call: int, line: str) -> None:
        now = time.monotonic()
        self._lines = min(BURST, self._lines + (now - self._paced) * UPDATES_PER_SECOND)
        self._paced = now
        if self._lines < 1:
            self._held = (call, line)  # shown by a later tick, unless a newer line comes first
            return
        self._lines -= 1
        self._held = None
        assert self.stderr is not None
        self.stderr(line)

    def end(self, call: Call, ok: bool, bytes_in: int = 0, error: str | None = None) -> None:
        call.ms = round((time.monotonic() - call.started) * 1000, 1)
        call.ok, call.bytes_in, call.error = ok, bytes_in, error
        self._flying.pop(call.id, None)
        self._failed += not ok
        self._received += bytes_in
        if call.id > KEPT_CALLS:
            row = self._folded.get(key := (call.server, call.tool, ok))
            if row is None:
                row = self._folded[key] = {**call.record(), "ms": 0.0, "bytesIn": 0, "bytesOut": 0, "count": 0}
            row["count"] += 1
            row["ms"] = round(row["ms"] + call.ms, 1)
            row["bytesIn"] += bytes_in
            row["bytesOut"] += call.bytes_out
        self._refresh()

    def finish(self) -> None:
        """The cell ended: collapse the live display into its summary line."""
        if self.shown and self.publish is not None:
            self.publish(self._bundle(final=True), True)

    def records(self) -> list[dict[str, Any]]:
        """One record per call, then (past KEPT_CALLS) one per tool and outcome with ``count`` and summed ms and bytes."""
        return [c.record() for c in self.calls] + [dict(row) for row in self._folded.values()]

    def notes(self) -> list[str]:
        """A line each for failed calls and for calls still running (not awaited?): what a step client is told
        without the trace; nothing in it varies between runs of the same step (no timings)."""
        lines = []
        if self._failed:
            failed: Counter[str] = Counter()
            for c in self.calls:
                if c.ok is False:
                    failed[_named(c.server, c.tool, c.error)] += 1
            for (server, tool, ok), row in self._folded.items():
                if not ok:
                    failed[_named(server, tool, row.get("error"))] += row["count"]
            plural = "s" if self._next_id != 1 else ""
            lines.append(f"{self._failed:,} of {self._next_id:,} tool call{plural} failed: {_grouped(failed)}")
        if self._flying:
            running = Counter(f"{c.server}.{c.tool}" for c in self._flying.values())
            n = len(self._flying)
            lines.append(f"{n:,} tool call{'s' if n != 1 else ''} had not finished when the step ended (a missing await?): {_grouped(running)}")
        return lines

    def received(self) -> int:
        """Bytes of tool results this cell has received so far."""
        return self._received

    # ---- rendering ----------------------------------------------------------------------------

    def _refresh(self) -> None:
        if self.mode != "display" or self.publish is None:
            return
        now = time.monotonic()
        if not self.shown:
            if now - self.started < SHOW_AFTER or not self._flying:
                return
            self.shown = True
            self._last = now
            self.publish(self._bundle(final=False), False)
            return
        if now - self._last >= 1 / UPDATES_PER_SECOND:
            self._last = now
            self.publish(self._bundle(final=False), True)

    def tick(self) -> None:
        """Called periodically while the cell runs, so elapsed time moves without events (and a held progress line is shown)."""
        if self._held is not None and self._held[0] in self._flying:
            self._say(*self._held)
        self._refresh()

    async def ticking(self) -> None:
        """Tick every quarter second, beside a cell that may wait long on slow tools."""
        while True:
            await asyncio.sleep(0.25)
            self.tick()

    def summary(self) -> str:
        elapsed = time.monotonic() - self.started
        text = f"{self._next_id:,} tool call{'s' if self._next_id != 1 else ''}"
        if self._failed:
            text += f", {self._failed:,} failed"
        return f"{text}, {elapsed:.1f} s, {_size(self._received)} received"

    def _bundle(self, final: bool) -> dict[str, Any]:
        from html import escape  # here: a one-shot run without tool calls never needs it

        if final:
            line = ("✗ " if self._failed else "✓ ") + self.summary()
            return {
                "text/plain": line,
                "text/html": f'<div class="mcp2repl-calls" style="font-family:monospace;opacity:.75">{escape(line)}</div>',
            }
        flying = list(self._flying.values())
        counts = Counter(f"{c.server}.{c.tool}" for c in flying)
        shown = [f"{name} ×{n}" if n > 1 else name for name, n in counts.most_common(MAX_NAMES)]
        names = ", ".join(shown) + (f" +{len(counts) - MAX_NAMES} more tools" if len(counts) > MAX_NAMES else "")
        line = f"⏳ {self.summary()} · in flight: {names or '–'}"
        plain, bar = line, ""
        with_progress = [c for c in flying if c.progress and (c.progress[1] or c.progress[2])]
        if with_progress:
            done, total, message = with_progress[-1].progress  # type: ignore[misc]
            frac = max(0.0, min(1.0, done / total)) if total else 0.0
            label = message or f"{frac:.0%}"
            if total:
                plain += f"\n  {'█' * round(frac * 20)}{'░' * (20 - round(frac * 20))} {label}"
                meter = f'<progress value="{frac:.3f}" max="1" style="width:12em"></progress> '
            else:  # a status message alone (an MCP task says what it is doing)
                plain += f"\n  {label}"
                meter = ""
            bar = f'<div style="margin:2px 0">{meter}{escape(label)}</div>'

        # text/plain too: nbclient agents and terminals read only that
        return {"text/plain": plain, "text/html": f'<div class="mcp2repl-calls" style="font-family:monospace">{escape(line)}{bar}</div>'}


def _named(server: str, tool: str, error: Any) -> str:
    first = str(error or "").strip().split("\n", 1)[0]
    return f"{server}.{tool}" + (f" ({first[:120]}{'…' if len(first) > 120 else ''})" if first else "")


def _grouped(counts: Counter[str]) -> str:
    shown = [f"{name} ×{n:,}" if n > 1 else name for name, n in counts.most_common(MAX_NAMES)]
    return ", ".join(shown) + (f" +{len(counts) - MAX_NAMES} more" if len(counts) > MAX_NAMES else "")


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"
