"""``mcp2repl run``: the real command on small notebooks, as a user or a CI job runs it.

Timeouts here are generous on purpose: a spinning cell always outlasts them, and what must fit
inside them (one fast tool call) takes milliseconds even on a loaded machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
import pytest
from conftest import ECHO, OWN_VARS
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

KERNELSPEC = {"name": "mcp2repl", "display_name": "JavaScript (mcp2repl)", "language": "javascript"}

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


def write_notebook(path: Path, *cells: Any) -> Path:
    """A notebook of ``cells`` (sources become code cells) on the mcp2repl kernel."""
    nb = new_notebook(metadata={"kernelspec": dict(KERNELSPEC)})
    nb.cells = [new_code_cell(c) if isinstance(c, str) else c for c in cells]
    nbformat.write(nb, path)
    return path


def mcp2repl(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m mcp_kernel.cli.main ARGS`` in ``cwd``, seeing no config but the one written there."""
    env = {k: v for k, v in os.environ.items() if k not in OWN_VARS}
    env["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="mcp2repl-xdg-")
    return subprocess.run(
        [sys.executable, "-m", "mcp_kernel.cli.main", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


def error(ename: str, evalue: str, *frames: str) -> dict[str, Any]:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": [f"{ename}: {evalue}", *frames]}


def stdout(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stdout", "text": text}


def result(text: str) -> dict[str, Any]:
    return {"output_type": "execute_result", "execution_count": None, "metadata": {}, "data": {"text/plain": text}}


def outputs(cell: Any) -> list[dict[str, Any]]:
    """A cell's outputs as plain dicts, execute_result counts left out (they are checked on the cell)."""
    found = []
    for out in cell.outputs:
        out = json.loads(json.dumps(out))
        if out["output_type"] == "execute_result":
            out["execution_count"] = None
        found.append(out)
    return found


SPIN = "while (true) {}"
#: the error recorded on a cell stopped by ``--timeout 2``: the kernel's location, named a timeout
SPIN_TIMEOUT = error(
    "TimeoutError",
    "Cell timed out after 2 s (mcp2repl run --timeout 2)",
    "  at cell[2] line 1, col 15",
    "    while (true) {}",
    "                  ^",
)


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


def test_error_stops_with_exit_1(tmp_path: Path) -> None:
    write_notebook(tmp_path / "in.ipynb", "const a = 1", "undefinedThing", "'never'")
    proc = mcp2repl(tmp_path, "run", "in.ipynb", "-o", "out.ipynb", "--timeout", "30")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == (
        f"Executed 2 of 3 code cells of in.ipynb (1 with errors); stopped at In [2]\nExecuted notebook: {tmp_path / 'out.ipynb'}\n"
    )
    assert "ReferenceError: undefinedThing is not defined\n  at cell[2] line 1, col 1" in proc.stderr


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
