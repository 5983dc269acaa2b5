"""display/server_logs in-process: a cell shows no server log lines but the first error of each server."""

from __future__ import annotations

from mcp_kernel.display.server_logs import SHOWN_CHARS, ServerLogLines


def test_log_lines_stay_in_the_log_and_only_a_servers_first_error_is_shown_once_per_cell() -> None:
    """Issue 23, item 10: `[everything] info: Roots updated: …` leaked into a step's stderr."""
    shown: list[str] = []
    lines = ServerLogLines(shown.append)
    for level in ("debug", "info", "notice", "warning"):
        lines.add("cell[1]", "a", level, "Roots updated: 1 root(s) received from client")
    assert shown == []
    lines.add("cell[1]", "a", "error", "disk\nfull")
    lines.add("cell[1]", "a", "critical", "still full")
    lines.add("cell[1]", "b", "error", "x" * 500)
    assert shown == [
        "[a] error: disk full (its log: await api.serverLog('a'))\n",
        f"[b] error: {'x' * SHOWN_CHARS}… (its log: await api.serverLog('b'))\n",
    ]
    assert lines.summary("cell[1]") == ""
    lines.add("cell[2]", "a", "error", "again")  # a new cell: shown again
    assert shown[-1] == "[a] error: again (its log: await api.serverLog('a'))\n"
