"""A cell's call trace in-process: records for agents, the live display's rules, the summary line."""

from __future__ import annotations

import time

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


def test_fast_cells_show_nothing_and_slow_ones_collapse_into_a_summary(monkeypatch: object) -> None:
    published: list[tuple[dict, bool]] = []
    trace = CellTrace(publish=lambda bundle, update: published.append((bundle, update)))
    call = trace.begin("demo", "slow", 0)
    assert published == []  # not shown before SHOW_AFTER
    trace.started -= calltrace.SHOW_AFTER + 0.1
    trace.progress(call, 1, 4, "step 1")
    first, update = published[0]
    assert update is False and set(first) == {"text/html"} and "<progress" in first["text/html"]
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
