"""``mcp2repl run``: the real command on small notebooks, as a user or a CI job runs it.

Time limits and a server's slow start are in test_run_timeouts.py (two files, so the two test
workers share them); the helpers both use are in run_notebooks.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_markdown_cell
from run_notebooks import mcp2repl, outputs, result, stdout, write_notebook


def test_success_exits_0_with_the_summary(tmp_path: Path) -> None:
    write_notebook(tmp_path / "in.ipynb", new_markdown_cell("# title"), "const a = 1\nconsole.log('a is', a)", "a + 1")
    proc = mcp2repl(tmp_path, "run", "in.ipynb", "-o", "out.ipynb", "--timeout", "30")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"Executed 2 code cells of in.ipynb (0 with errors)\nExecuted notebook: {tmp_path / 'out.ipynb'}\n"
    # issue 23, item 12: neither ipykernel's TCP warning nor a shutdown that timed out reaches the user
    assert "without encryption" not in proc.stderr and "did not close" not in proc.stderr, proc.stderr
    saved = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert [outputs(c) for c in saved.cells[1:]] == [[stdout("a is 1\n")], [result("2")]]
    assert [c.execution_count for c in saved.cells[1:]] == [1, 2]


def test_error_stops_with_exit_1(tmp_path: Path) -> None:
    write_notebook(tmp_path / "in.ipynb", "const a = 1", "undefinedThing", "'never'")
    proc = mcp2repl(tmp_path, "run", "in.ipynb", "-o", "out.ipynb", "--timeout", "30")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == (
        f"Executed 2 of 3 code cells of in.ipynb (1 with errors); stopped at In [2]\nExecuted notebook: {tmp_path / 'out.ipynb'}\n"
    )
    assert "ReferenceError: undefinedThing is not defined\n  at cell[2] line 1, col 1" in proc.stderr


def test_fractional_timeout_is_accepted(tmp_path: Path) -> None:
    write_notebook(tmp_path / "in.ipynb", "1 + 1")
    proc = mcp2repl(tmp_path, "run", "in.ipynb", "-o", "out.ipynb", "--timeout", "20.5")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Executed 1 code cells of in.ipynb (0 with errors)\n")


def test_a_kernel_that_dies_as_it_starts_is_started_once_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As when another process takes one of its ports before it binds them: the second start works."""
    spec = tmp_path / "jupyter" / "kernels" / "flaky"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [sys.executable, str(spec / "flaky.py"), "{connection_file}"], "display_name": "flaky", "language": "javascript"}))
    (spec / "flaky.py").write_text(
        "import os, sys\n"
        f"marker = {str(tmp_path / 'started-once')!r}\n"
        "if not os.path.exists(marker):\n"
        "    open(marker, 'w').close()\n"
        "    sys.exit('zmq.error.ZMQError: Address already in use')\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'mcp_kernel', '-f', sys.argv[1]])\n"
    )
    write_notebook(tmp_path / "in.ipynb", "6 * 7")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    proc = mcp2repl(tmp_path, "run", "in.ipynb", "-o", "out.ipynb", "-k", "flaky")
    assert proc.returncode == 0, proc.stderr
    assert "mcp2repl run: the kernel died as it started; starting it once more\n" in proc.stderr
    assert [outputs(c) for c in nbformat.read(tmp_path / "out.ipynb", as_version=4).cells] == [[result("42")]]


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    missing = mcp2repl(tmp_path, "run", "missing.ipynb")
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr.startswith("mcp2repl run: cannot read missing.ipynb: ")
    assert "Traceback" not in missing.stderr
    negative = mcp2repl(tmp_path, "run", "missing.ipynb", "--timeout", "-1")
    assert negative.returncode == 2
    assert "argument --timeout: must be a number of seconds >= 0 (0: no limit), not '-1'" in negative.stderr
