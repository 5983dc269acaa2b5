"""``mcp2repl run --timeout``: a cell that overruns is interrupted and named; a server's start-up is not counted.

Timeouts here are generous on purpose: a spinning cell always outlasts them, and what must fit
inside them (one fast tool call) takes milliseconds even on a loaded machine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
from conftest import ECHO
from run_notebooks import SPIN, SPIN_TIMEOUT, error, mcp2repl, outputs, result, stdout, write_notebook

#: a stdio server that takes START_DELAY seconds before it serves (then it is the echo fixture)
START_DELAY = 5
SLOW_START = (
    "import os, runpy, sys, time\n"
    f"time.sleep({START_DELAY})\n"
    "path = sys.argv[1]\n"
    "sys.argv = [path]\n"
    "sys.path.insert(0, os.path.dirname(path))\n"
    "runpy.run_path(path, run_name='__main__')\n"
)


def test_timeout_interrupts_the_cell_and_stops_with_exit_3(tmp_path: Path) -> None:
    write_notebook(tmp_path / "in.ipynb", "const a = 1\nconsole.log('a is', a)", SPIN, "console.log('never')")
    proc = mcp2repl(tmp_path, "run", "in.ipynb", "-o", "out.ipynb", "--timeout", "2")
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == (
        "Executed 2 of 3 code cells of in.ipynb (1 with errors); stopped at In [2]\n"
        "In [2] timed out after 2 s and was interrupted: while (true) {}\n"
        f"Executed notebook: {tmp_path / 'out.ipynb'}\n"
    )
    assert "Traceback (most recent call last)" not in proc.stderr
    assert "\n".join(SPIN_TIMEOUT["traceback"]) in proc.stderr
    saved = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert [outputs(c) for c in saved.cells] == [[stdout("a is 1\n")], [SPIN_TIMEOUT], []]
    assert [c.execution_count for c in saved.cells] == [1, 2, None]
    nbformat.validate(saved)


def test_timeout_with_allow_errors_goes_on_and_keeps_globals(tmp_path: Path) -> None:
    write_notebook(tmp_path / "in.ipynb", "const a = 1", SPIN, "a + 1", "undefinedThing", "'last'")
    proc = mcp2repl(tmp_path, "run", "in.ipynb", "-o", "out.ipynb", "--timeout", "2", "--allow-errors")
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == (
        "Executed 5 code cells of in.ipynb (2 with errors)\n"
        "In [2] timed out after 2 s and was interrupted: while (true) {}\n"
        f"Executed notebook: {tmp_path / 'out.ipynb'}\n"
    )
    assert "Traceback (most recent call last)" not in proc.stderr
    saved = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert [outputs(c) for c in saved.cells] == [
        [],
        [SPIN_TIMEOUT],
        [result("2")],
        [error("ReferenceError", "undefinedThing is not defined", "  at cell[4] line 1, col 1", "    undefinedThing", "    ^")],
        [result("'last'")],
    ]
    assert [c.execution_count for c in saved.cells] == [1, 2, 3, 4, 5]


def test_server_start_up_does_not_count_against_the_first_cell(tmp_path: Path) -> None:
    # The server needs START_DELAY s (plus its own imports) before it answers; the cell's call
    # itself takes milliseconds. Timed from the cell's start, the first cell would overrun.
    server = {"command": sys.executable, "args": ["-c", SLOW_START, ECHO]}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"slow": server}}))
    write_notebook(tmp_path / "in.ipynb", "await mcp.slow.add({a: 1, b: 2})", "await mcp.slow.echo({text: 'hi'})")
    proc = mcp2repl(tmp_path, "run", "in.ipynb", "-o", "out.ipynb", "--timeout", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == f"Executed 2 code cells of in.ipynb (0 with errors)\nExecuted notebook: {tmp_path / 'out.ipynb'}\n"
    saved = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert [c.outputs[-1]["data"]["text/plain"] for c in saved.cells] == ["{ sum: 3 }", "'hi'"]
