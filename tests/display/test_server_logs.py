"""display/server_logs in-process: a cell shows the first log lines of each server, then one count."""

from __future__ import annotations

from mcp_kernel.display.server_logs import SHOWN, ServerLogLines


def test_each_server_shows_its_first_lines_then_one_count_per_cell() -> None:
    shown: list[str] = []
    lines = ServerLogLines(shown.append)
    for n in range(SHOWN + 5):
        lines.add("cell[1]", "a", "info", f"a{n}")
    lines.add("cell[1]", "b", "debug", "b0")
    lines.add("cell[2]", "a", "info", "other cell")
    assert shown == [f"[a] info: a{n}\n" for n in range(SHOWN)] + ["[b] debug: b0\n", "[a] info: other cell\n"]
    assert lines.summary("cell[1]") == "[mcp2repl] … 5 more log lines from a: await api.serverLog('a')\n"
    assert lines.summary("cell[1]") == ""  # counted once
    assert lines.summary("cell[2]") == ""
