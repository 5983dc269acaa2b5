"""The per-cell console budget in-process: what is shown, where it is cut, what the artifact keeps."""

from __future__ import annotations

from pathlib import Path

from mcp_kernel.display.console import ConsoleBudget, DisplayBudget

MARK = "[mcp2repl] console output cut at 300 characters (MCP2REPL_MAX_CONSOLE_CHARS); "


def test_output_within_budget_passes_untouched() -> None:
    budget = ConsoleBudget(300)
    assert budget.take("a\n") == "a\n"
    assert budget.take("b" * 298) == "b" * 298
    assert not budget.end()
    assert budget.log() == ""  # nothing to save, nothing kept


def test_one_huge_line_is_cut_with_a_marker_and_kept_whole() -> None:
    budget = ConsoleBudget(300)
    shown = budget.take("y" * 100_000 + "\n")
    assert shown == "y" * 300 + "\n" + MARK + "the whole log is saved when the cell ends\n"
    assert budget.take("more\n") == ""
    assert budget.end()
    assert budget.log() == "y" * 100_000 + "\nmore\n"
    assert budget.saved_line('await api.readArtifact("console-cell1.txt")') == (
        '[mcp2repl] whole console log (100,006 characters, 2 lines): await api.readArtifact("console-cell1.txt")\n'
    )


def test_many_lines_are_cut_after_a_whole_line() -> None:
    budget = ConsoleBudget(300)
    text = "".join(f"line {i}\n" for i in range(2000))
    shown = budget.take(text)
    assert shown.endswith("line 37\n" + MARK + "the whole log is saved when the cell ends\n")
    assert len(shown) - len(MARK) < 400


def test_output_after_the_cell_ended_is_only_counted() -> None:
    budget = ConsoleBudget(300)
    budget.take("x" * 200)
    assert not budget.end()
    assert budget.take("z" * 500) == "z" * 100 + "\n" + MARK + "output after the cell ended is not saved\n"


def test_the_kept_log_is_bounded() -> None:
    budget = ConsoleBudget(10, keep=50)
    budget.take("a" * 40)
    budget.take("b" * 40)
    assert budget.end()
    assert budget.log() == "a" * 40 + "b" * 10 + "\n[mcp2repl] … 30 more characters were not kept\n"


# ---- displays (issue 22, item 8: 20 MB of api.html in one cell) -------------------------------------


def test_displays_past_the_budget_are_dropped_with_one_note() -> None:
    budget = DisplayBudget(1 << 20)
    assert budget.take({"text/html": "h" * 600_000, "text/plain": "<html>"}) == (True, "")
    allowed, note = budget.take({"text/html": "h" * 600_000, "text/plain": "<html>"})
    assert (allowed, note) == (False, "[mcp2repl] display output of this cell passed its budget of 1 MB (MCP2REPL_MAX_DISPLAY_MB): this display and later ones are dropped; save big content with api.saveArtifact\n")
    assert budget.take({"text/plain": "small"}) == (False, "")  # one note per cell, and nothing after it
    assert budget.dropped == 2


def test_a_session_drops_displays_past_the_cells_budget(tmp_path: Path) -> None:
    from conftest import SessionHarness

    s = SessionHarness(tmp_path, {"mcpServers": {}}, max_display_mb=2)
    try:
        result, out = s.run("for (let i = 0; i < 40; i++) api.html('<p>' + 'x'.repeat(512 * 1024) + '</p>'); 'done'")
        assert result.data["text/plain"] == "'done'"
        shown = sum(len(d["text/html"]) for d, *_ in out.displays)
        assert len(out.displays) == 3 and shown <= 2 << 20, (len(out.displays), shown)
        assert out.text("stderr") == "[mcp2repl] display output of this cell passed its budget of 2 MB (MCP2REPL_MAX_DISPLAY_MB): this display and later ones are dropped; save big content with api.saveArtifact\n"
        _, out = s.run("api.html('<b>next cell</b>'); 1")  # a new cell, a new budget
        assert [d["text/html"] for d, *_ in out.displays] == ["<b>next cell</b>"]
    finally:
        s.close()
