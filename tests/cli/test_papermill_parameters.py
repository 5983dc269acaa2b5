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


def test_cli_refuses_a_reserved_word_with_a_usage_error(tmp_path: Path) -> None:
    src = _notebook(tmp_path / "p.ipynb")
    done = subprocess.run(
        [sys.executable, "-m", "papermill", str(src), str(tmp_path / "o.ipynb"), "-y", "class: 1", "--no-progress-bar"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.endswith(
        "Error: parameter 'class' cannot be injected into a JavaScript notebook: 'class' is a reserved word in JavaScript; rename it, e.g. class_\n"
    )
    assert not (tmp_path / "o.ipynb").exists()


def test_values_javascript_cannot_hold_as_numbers_or_json_arrive_intact(tmp_path: Path) -> None:
    params = new_code_cell("const big = 0;", metadata={"tags": ["parameters"]})
    check = new_code_cell(
        "[typeof big, String(big), typeof nested.ids[1], String(nested.ids[1]), Object.hasOwn(nested, '__proto__'),\n"
        " Object.getPrototypeOf(nested) === Object.prototype, Number.isNaN(nan), Object.is(negz, -0), inf, sep === 'a\\u2028b'].join(' | ')"
    )
    nb = new_notebook(
        cells=[params, check], metadata={"kernelspec": {"name": "mcp2repl", "language": "javascript", "display_name": "mcp2repl"}}
    )
    nbformat.write(nb, tmp_path / "p.ipynb")
    yaml = 'big: 12345678901234567890\nnested: {ids: [1, 9007199254740993], __proto__: {x: 1}}\nnan: .nan\nnegz: -0.0\ninf: -.inf\nsep: "a\\u2028b"\n'
    done = subprocess.run(
        [sys.executable, "-m", "papermill", "p.ipynb", "o.ipynb", "-y", yaml, "--no-progress-bar"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = nbformat.read(tmp_path / "o.ipynb", as_version=4)
    assert out.cells[1].source == (
        "// Parameters\n"
        "const big = 12345678901234567890n;\n"
        'const nested = {"ids": [1, 9007199254740993n], ["__proto__"]: {"x": 1}};\n'
        "const nan = NaN;\n"
        "const negz = -0.0;\n"
        "const inf = -Infinity;\n"
        'const sep = "a\\u2028b";\n'
    )
    assert (
        out.cells[2].outputs[0]["data"]["text/plain"]
        == "'bigint | 12345678901234567890 | bigint | 9007199254740993 | true | true | true | true | -Infinity | true'"
    )
