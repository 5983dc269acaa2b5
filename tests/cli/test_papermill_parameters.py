"""papermill -p against mcp2repl notebooks (our translator, registered through an entry point)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import papermill as pm
from nbformat.v4 import new_code_cell, new_notebook


def _notebook(path: Path) -> Path:
    params = new_code_cell("const limit = 2; // how many\nconst genre = 'fantasy';\nlet ratio = 0.5;", metadata={"tags": ["parameters"]})
    use = new_code_cell("({ limit, genre, ratio, extra: typeof extra === 'undefined' ? null : extra })")
    nb = new_notebook(
        cells=[params, use],
        metadata={"kernelspec": {"name": "mcp2repl", "language": "javascript", "display_name": "JavaScript (mcp2repl)"}},
    )
    nbformat.write(nb, path)
    return path


def test_parameters_are_injected_as_javascript(tmp_path: Path) -> None:
    src = _notebook(tmp_path / "p.ipynb")
    out = pm.execute_notebook(
        str(src), str(tmp_path / "o.ipynb"), parameters={"limit": 5, "genre": "sci-fi", "extra": {"a": [1, None, True, 1.5]}}
    )
    injected = out.cells[1]
    assert "injected-parameters" in injected.metadata.tags
    assert injected.source == '// Parameters\nconst limit = 5;\nconst genre = "sci-fi";\nconst extra = {"a": [1, null, true, 1.5]};\n'
    assert out.cells[2].outputs[0]["data"]["application/json"] == {
        "limit": 5,
        "genre": "sci-fi",
        "ratio": 0.5,
        "extra": {"a": [1, None, True, 1.5]},
    }


def test_inspect_lists_declared_parameters(tmp_path: Path) -> None:
    params = pm.inspect_notebook(str(_notebook(tmp_path / "p.ipynb")))
    assert {k: (v["inferred_type_name"], v["default"], v["help"]) for k, v in params.items()} == {
        "limit": ("number", "2", "how many"),
        "genre": ("string", "'fantasy'", ""),
        "ratio": ("number", "0.5", ""),
    }


def test_cli_with_p_flags(tmp_path: Path) -> None:
    src = _notebook(tmp_path / "p.ipynb")
    done = subprocess.run(
        [sys.executable, "-m", "papermill", str(src), str(tmp_path / "o.ipynb"), "-p", "limit", "7", "-p", "genre", "history"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = nbformat.read(tmp_path / "o.ipynb", as_version=4)
    assert out.cells[2].outputs[0]["data"]["application/json"]["limit"] == 7
    assert out.cells[2].outputs[0]["data"]["application/json"]["genre"] == "history"
