"""A cell's call trace in-process: records for agents, the live display's rules, the summary line."""

from __future__ import annotations

import time

import pytest

from mcp_kernel.display import calltrace
from mcp_kernel.display.calltrace import CellTrace


def test_records_and_summary() -> None:
    trace = CellTrace(publish=None)
    call = trace.begin("demo", "search", bytes_out=12)
    trace.end(call, True, bytes_in=2048)
    failed = trace.begin("demo", "get", bytes_out=3)
    trace.end(failed, False, error="tool_error")
    records = trace.records()
    assert [(r["server"], r["tool"], r["ok"], r["bytesIn"], r["bytesOut"], r["error"]) for r in records] == [
        ("demo", "search", True, 2048, 12, None),
        ("demo", "get", False, 0, 3, "tool_error"),
    ]
    assert all(isinstance(r["ms"], float) for r in records)
    assert trace.summary().startswith("2 tool calls, 1 failed, ") and trace.summary().endswith(" s, 2.0 KB received")


def test_a_long_loop_keeps_the_first_calls_and_counts_the_rest_per_tool() -> None:
    """Regression: every call summed all earlier ones (a 1,000-call loop did 500,500 additions) and the
    reply's metadata listed every call of the cell, without bound."""
    trace = CellTrace(publish=None)
    for i in range(calltrace.KEPT_CALLS + 1500):
        call = trace.begin("demo", "get" if i % 2 else "search", bytes_out=10)
        trace.end(call, i % 3 != 0, bytes_in=100)
    records = trace.records()
    assert len(records) == calltrace.KEPT_CALLS + 4
    assert "count" not in records[0]
    folded = {(r["server"], r["tool"], r["ok"]): (r["count"], r["bytesIn"], r["bytesOut"]) for r in records[calltrace.KEPT_CALLS :]}
    assert folded == {
        ("demo", "search", False): (250, 25_000, 2_500),
        ("demo", "get", True): (500, 50_000, 5_000),
        ("demo", "search", True): (500, 50_000, 5_000),
        ("demo", "get", False): (250, 25_000, 2_500),
    }
    assert trace.received() == 2500 * 100
    assert trace.summary().startswith("2,500 tool calls, 834 failed, ")


def test_fast_cells_show_nothing_and_slow_ones_collapse_into_a_summary(monkeypatch: object) -> None:
    published: list[tuple[dict, bool]] = []
    trace = CellTrace(publish=lambda bundle, update: published.append((bundle, update)))
    call = trace.begin("demo", "slow", 0)
    assert published == []  # not shown before SHOW_AFTER
    trace.started -= calltrace.SHOW_AFTER + 0.1
    trace.progress(call, 1, 4, "step 1")
    first, update = published[0]
    assert update is False and set(first) == {"text/plain", "text/html"} and "<progress" in first["text/html"]
    # in-flight updates carry text/plain: nbclient agents and terminals read only that
    assert first["text/plain"].startswith("⏳ 1 tool call, ")
    assert first["text/plain"].endswith(" · in flight: demo.slow\n  █████░░░░░░░░░░░░░░░ step 1")
    trace.end(call, True, 10)
    trace.finish()
    final, update = published[-1]
    assert update is True and final["text/plain"].startswith("✓ 1 tool call, ")


def test_stderr_mode_prints_progress_lines() -> None:
    lines: list[str] = []
    trace = CellTrace(publish=None, mode="stderr", stderr=lines.append)
    call = trace.begin("demo", "slow", 0)
    trace.progress(call, 1, 4, "step 1")
    trace.progress(call, 3, None, None)
    assert lines == ["[demo.slow] 25% step 1\n", "[demo.slow] 3\n"]
    time.sleep(0)


def test_a_flood_of_progress_gives_a_terminal_a_few_lines_a_second() -> None:
    """Regression: every progress notification was a stderr line (2,000 notifications, 2,000 messages)."""
    lines: list[str] = []
    trace = CellTrace(publish=None, mode="stderr", stderr=lines.append)
    call = trace.begin("demo", "slow", 0)
    for n in range(2000):
        trace.progress(call, n + 1, 2000, None)
    assert lines == [f"[demo.slow] {n}%\n" for n in (0, 0, 0, 0, 0)]  # the first burst (0.05% rounds to 0%)
    trace.tick()
    assert len(lines) == 5  # too soon: the latest line is held
    trace._paced -= 1 / calltrace.UPDATES_PER_SECOND
    trace.tick()
    assert lines[5:] == ["[demo.slow] 100%\n"]  # the latest, not the 2,000 before it
    trace.tick()
    assert len(lines) == 6  # shown once
    trace.progress(call, 1, 2, "later")
    trace.end(call, True)
    trace._paced -= 1
    trace.tick()
    assert len(lines) == 6  # a line held for a call that ended is not shown


def test_many_calls_in_flight_are_grouped_by_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: 158 calls read ``everything.echo, everything.echo, … +154``."""
    monkeypatch.setattr(calltrace, "UPDATES_PER_SECOND", 1e9)
    published: list[dict] = []
    trace = CellTrace(publish=lambda bundle, update: published.append(bundle))
    trace.started -= calltrace.SHOW_AFTER + 0.1
    for _ in range(158):
        trace.begin("everything", "echo", 0)
    for tool in ("a", "b", "c", "d", "b"):
        trace.begin("x", tool, 0)
    trace.tick()
    line = published[-1]["text/plain"]
    assert line.endswith(" · in flight: everything.echo ×158, x.b ×2, x.a, x.c +1 more tools"), line
    assert line.startswith("⏳ 163 tool calls, ")


def test_a_status_message_without_numbers_is_shown_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """An MCP task's status message comes as progress without done or total: no bar, no "0"."""
    monkeypatch.setattr(calltrace, "UPDATES_PER_SECOND", 1e9)
    lines: list[str] = []
    trace = CellTrace(publish=None, mode="stderr", stderr=lines.append)
    trace.progress(trace.begin("p", "research", 0), 0, None, "Reading...")
    assert lines == ["[p.research] Reading...\n"]
    published: list[dict] = []
    trace = CellTrace(publish=lambda bundle, update: published.append(bundle))
    trace.started -= calltrace.SHOW_AFTER + 0.1
    trace.progress(trace.begin("p", "research", 0), 0, None, "Reading...")
    assert published[-1]["text/plain"].endswith(" · in flight: p.research\n  Reading...")
    assert '<div style="margin:2px 0">Reading...</div>' in published[-1]["text/html"]
