"""Notebooks run by papermill, through its Python API and its command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import papermill
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from papermill.exceptions import PapermillExecutionError

KERNELSPEC = {"name": "mcp2repl", "display_name": "JavaScript (mcp2repl)", "language": "javascript"}

FAILING = (
    "const a = 1\nconsole.log('a is', a)",
    "undefinedThing + 1",
    "console.log('never')",
)

FAILING_TRACEBACK = ["ReferenceError: undefinedThing is not defined", "  at cell[2] line 1, col 1", "    undefinedThing + 1", "    ^"]


def write_notebook(path: Path, *sources: str) -> Path:
    nb = new_notebook(metadata={"kernelspec": dict(KERNELSPEC)})
    nb.cells = [new_code_cell(source) for source in sources]
    nbformat.write(nb, path)
    return path


def stdout(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stdout", "text": text}


def test_successful_notebook_saves_its_outputs(tmp_path: Path) -> None:
    source = write_notebook(
        tmp_path / "in.ipynb",
        "async function total(xs) {\n  await sleep(5)\n  return xs.reduce((a, b) => a + b, 0)\n}",
        "const n = await total([1, 2, 3])\nconsole.log('total', n)\nn",
        "({name: 'mcp2repl', n})",
    )
    returned = papermill.execute_notebook(str(source), str(tmp_path / "out.ipynb"), kernel_name="mcp2repl", progress_bar=False)
    saved = nbformat.read(tmp_path / "out.ipynb", as_version=4)

    for nb in (returned, saved):
        assert [cell.cell_type for cell in nb.cells] == ["code", "code", "code"]
        assert [cell.execution_count for cell in nb.cells] == [1, 2, 3]
        assert nb.cells[0].outputs == []
        assert nb.cells[1].outputs == [
            stdout("total 6\n"),
            {"output_type": "execute_result", "execution_count": 2, "metadata": {}, "data": {"text/plain": "6"}},
        ]
        assert nb.cells[2].outputs == [
            {
                "output_type": "execute_result",
                "execution_count": 3,
                "metadata": {},
                "data": {"text/plain": "{ name: 'mcp2repl', n: 6 }", "application/json": {"name": "mcp2repl", "n": 6}},
            }
        ]
        assert [cell.metadata.papermill.status for cell in nb.cells] == ["completed"] * 3
        assert [cell.metadata.papermill.exception for cell in nb.cells] == [False] * 3
        assert nb.metadata.papermill.exception is None
        assert nb.metadata.language_info.name == "javascript"
        assert nb.metadata.language_info.file_extension == ".js"
    nbformat.validate(saved)


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[PapermillExecutionError, nbformat.NotebookNode]:
    folder = tmp_path_factory.mktemp("papermill")
    source = write_notebook(folder / "in.ipynb", *FAILING)
    with pytest.raises(PapermillExecutionError) as caught:
        papermill.execute_notebook(str(source), str(folder / "out.ipynb"), kernel_name="mcp2repl", progress_bar=False)
    return caught.value, nbformat.read(folder / "out.ipynb", as_version=4)


def test_error_raises_papermill_execution_error(failed_run: tuple[PapermillExecutionError, nbformat.NotebookNode]) -> None:
    err, _ = failed_run
    assert err.ename == "ReferenceError"
    assert err.evalue == "undefinedThing is not defined"
    assert err.traceback == FAILING_TRACEBACK
    assert err.exec_count == 2
    assert str(err).endswith('Exception encountered at "In [2]":\n' + "\n".join(FAILING_TRACEBACK) + "\n")


def test_saved_notebook_marks_the_failing_cell(failed_run: tuple[PapermillExecutionError, nbformat.NotebookNode]) -> None:
    _, nb = failed_run
    # papermill adds two markdown cells tagged papermill-error-cell-tag: a link at the top and an
    # anchor just before the failing cell.
    assert [cell.cell_type for cell in nb.cells] == ["markdown", "code", "markdown", "code", "code"]
    top, first, anchor, failing, after = nb.cells
    for marker in (top, anchor):
        assert marker.metadata.tags == ["papermill-error-cell-tag"]
    assert "An Exception was encountered at '<a href=\"#papermill-error-cell\">In [2]</a>'." in top.source
    assert '<span id="papermill-error-cell"' in anchor.source
    assert "Execution using papermill encountered an exception here and stopped:" in anchor.source

    assert first.outputs == [stdout("a is 1\n")]
    assert (first.metadata.papermill.status, first.metadata.papermill.exception) == ("completed", False)

    assert failing.source == FAILING[1]
    assert failing.execution_count == 2
    assert failing.outputs == [
        {"output_type": "error", "ename": "ReferenceError", "evalue": "undefinedThing is not defined", "traceback": FAILING_TRACEBACK}
    ]
    assert (failing.metadata.papermill.status, failing.metadata.papermill.exception) == ("failed", True)
    assert nb.metadata.papermill.exception is True


def test_cells_after_the_error_are_not_executed(failed_run: tuple[PapermillExecutionError, nbformat.NotebookNode]) -> None:
    _, nb = failed_run
    after = nb.cells[-1]
    assert after.source == "console.log('never')"
    assert after.execution_count is None
    assert after.outputs == []
    assert after.metadata.papermill.status == "pending"


def test_cli_exits_1_and_prints_the_error(tmp_path: Path) -> None:
    write_notebook(tmp_path / "in.ipynb", *FAILING)
    proc = subprocess.run(
        [sys.executable, "-m", "papermill", "in.ipynb", "out.ipynb", "-k", "mcp2repl", "--no-progress-bar"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Input Notebook:  in.ipynb\nOutput Notebook: out.ipynb\n" in proc.stderr
    assert "Executing notebook with kernel: mcp2repl" in proc.stderr
    assert "papermill.exceptions.PapermillExecutionError: \n" in proc.stderr
    assert proc.stderr.endswith('Exception encountered at "In [2]":\n' + "\n".join(FAILING_TRACEBACK) + "\n\n")
    saved = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert [cell.execution_count for cell in saved.cells if cell.cell_type == "code"] == [1, 2, None]
