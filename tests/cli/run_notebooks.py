"""What the ``mcp2repl run`` tests (test_run.py, test_run_timeouts.py) share: notebooks on the
mcp2repl kernel, the real command in a clean environment, and outputs as plain dicts to compare."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from conftest import OWN_VARS
from nbformat.v4 import new_code_cell, new_notebook

KERNELSPEC = {"name": "mcp2repl", "display_name": "JavaScript (mcp2repl)", "language": "javascript"}


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
