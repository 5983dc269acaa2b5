"""Notebooks run headless by nbclient: what `jupyter execute` and nbconvert --execute users get.

Each module fixture runs one notebook in one kernel; the tests then read the cells it produced.
"""

from __future__ import annotations

from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell, new_notebook

KERNELSPEC = {"name": "mcp2repl", "display_name": "JavaScript (mcp2repl)", "language": "javascript"}


def notebook(*sources: str) -> nbformat.NotebookNode:
    nb = new_notebook(metadata={"kernelspec": dict(KERNELSPEC)})
    nb.cells = [new_code_cell(source) for source in sources]
    return nb


def execute(nb: nbformat.NotebookNode, **options: Any) -> nbformat.NotebookNode:
    options.setdefault("timeout", 20)
    NotebookClient(nb, kernel_name="mcp2repl", **options).execute()
    return nb


def stdout(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stdout", "text": text}


def stderr(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stderr", "text": text}


def result(count: int, text: str, **extra: Any) -> dict[str, Any]:
    return {"output_type": "execute_result", "execution_count": count, "metadata": {}, "data": {"text/plain": text, **extra}}


def error(ename: str, evalue: str, *traceback: str) -> dict[str, Any]:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": list(traceback)}


# ---- a notebook that succeeds ------------------------------------------------------------------

GOOD = (
    # 0: a function defined here ...
    "function double(x) {\n  console.log('doubling', x)\n  return x * 2\n}",
    # 1: ... is used in the next cells
    "double(21)",
    "const xs = [1, 2].map(double)\nxs",
    # 3: stdout and stderr interleave in order
    "console.log('a'); console.error('b'); console.log('c')",
    # 4: a timer that fires while the cell still awaits
    "setTimeout(() => console.log('late'), 100)\nconsole.log('early')\nawait sleep(300)\n'done'",
    # 5: rich display before the cell ends
    "api.display({a: 1})\nconsole.log('shown')",
    # 6: clearOutput drops what came before it
    "console.log('gone')\napi.display('also gone')\napi.clearOutput()\nconsole.log('kept')\n'result'",
    # 7: a display updated in place through its display_id
    "const handle = api.display('v1', {display_id: 'progress'})\nhandle.update('v2')\nhandle.display_id",
    # 8: `return` makes the result; re-declaring a const is allowed
    "const xs = 'again'\nreturn xs.toUpperCase()",
    # 9: statements without a value produce no output
    "let nothing = undefined",
)


@pytest.fixture(scope="module")
def good() -> nbformat.NotebookNode:
    return execute(notebook(*GOOD))


def test_function_from_one_cell_is_used_in_the_next(good: nbformat.NotebookNode) -> None:
    assert good.cells[0].outputs == []
    assert good.cells[1].outputs == [stdout("doubling 21\n"), result(2, "42")]
    assert good.cells[2].outputs == [stdout("doubling 1\ndoubling 2\n"), result(3, "[ 2, 4 ]", **{"application/json": [2, 4]})]


def test_execution_counts_follow_the_cells(good: nbformat.NotebookNode) -> None:
    assert [cell.execution_count for cell in good.cells] == list(range(1, len(GOOD) + 1))


def test_stdout_and_stderr_keep_their_order(good: nbformat.NotebookNode) -> None:
    assert good.cells[3].outputs == [stdout("a\n"), stderr("b\n"), stdout("c\n")]


def test_timer_output_lands_in_the_cell_that_awaits(good: nbformat.NotebookNode) -> None:
    assert good.cells[4].outputs == [stdout("early\n"), stdout("late\n"), result(5, "'done'")]


def test_api_display_makes_display_data(good: nbformat.NotebookNode) -> None:
    display = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "{ a: 1 }", "application/json": {"a": 1}}}
    assert good.cells[5].outputs == [display, stdout("shown\n")]


def test_clear_output_removes_earlier_output(good: nbformat.NotebookNode) -> None:
    assert good.cells[6].outputs == [stdout("kept\n"), result(7, "'result'")]


def test_display_update_replaces_the_display(good: nbformat.NotebookNode) -> None:
    # nbclient applies update_display_data to the output that carries the same display_id.
    display = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "'v2'"}}
    assert good.cells[7].outputs == [display, result(8, "'progress'")]


def test_return_and_redeclared_const(good: nbformat.NotebookNode) -> None:
    assert good.cells[8].outputs == [result(9, "'AGAIN'")]
    assert good.cells[9].outputs == []


def test_language_info_is_recorded(good: nbformat.NotebookNode) -> None:
    info = good.metadata.language_info
    assert (info.name, info.file_extension, info.mimetype) == ("javascript", ".js", "text/javascript")
    assert info.codemirror_mode == "typescript"  # every cell may be TypeScript: highlighted as such
    assert info.pygments_lexer == "typescript"
    assert good.metadata.kernelspec == KERNELSPEC


def test_executed_notebook_is_valid(good: nbformat.NotebookNode) -> None:
    nbformat.validate(good)


# ---- a notebook with errors, allow_errors=True, and a cell that never ends -----------------------

FAILING = (
    # 0
    "globalThis.before = 42\nfunction f(o) {\n  return o.items.length\n}",
    # 1: the error is raised inside f, defined in the cell above
    "const rows = [{items: [1]}, {}]\nrows.map(f)",
    # 2: the next cell runs and sees the globals
    "rows.length",
    # 3: awaited code that throws
    "await sleep(10)\nthrow new RangeError('too far')",
    # 4: nbclient's timeout (2 s) interrupts the kernel
    "while (true) {}",
    # 5
    "before + 1",
)


@pytest.fixture(scope="module")
def failing() -> nbformat.NotebookNode:
    return execute(notebook(*FAILING), allow_errors=True, timeout=2, interrupt_on_timeout=True)


def test_error_output_has_name_message_and_frames(failing: nbformat.NotebookNode) -> None:
    assert failing.cells[1].outputs == [
        error(
            "TypeError",
            "Cannot read properties of undefined (reading 'length')",
            "TypeError: Cannot read properties of undefined (reading 'length')",
            "  at cell[1] line 3, col 18, in f",
            "    return o.items.length",
            "                   ^",
            "  at cell[2] line 2, col 6",
            "    rows.map(f)",
            "         ^",
        )
    ]


def test_cell_after_an_error_still_runs(failing: nbformat.NotebookNode) -> None:
    assert failing.cells[2].outputs == [result(3, "2")]


def test_error_after_await(failing: nbformat.NotebookNode) -> None:
    assert failing.cells[3].outputs == [
        error(
            "RangeError",
            "too far",
            "RangeError: too far",
            "  at cell[4] line 2, col 7",
            "    throw new RangeError('too far')",
            "          ^",
        )
    ]


def test_timeout_interrupts_the_cell(failing: nbformat.NotebookNode) -> None:
    # nbclient sends interrupt_request after `timeout`; the error output is the kernel's own
    # InterruptError (nbclient adds nothing of its own).
    assert failing.cells[4].outputs == [
        error(
            "InterruptError",
            "Execution interrupted",
            "InterruptError: Execution interrupted",
            "  at cell[5] line 1, col 15",
            "    while (true) {}",
            "                  ^",
        )
    ]
    assert failing.cells[4].execution_count == 5


def test_globals_survive_the_interrupt(failing: nbformat.NotebookNode) -> None:
    assert failing.cells[5].outputs == [result(6, "43")]
    assert [cell.execution_count for cell in failing.cells] == [1, 2, 3, 4, 5, 6]


# ---- allow_errors=False ------------------------------------------------------------------------


def test_error_stops_the_notebook_when_errors_are_not_allowed() -> None:
    nb = notebook("const o = null\nconsole.log('before')", "o.name", "console.log('never')")
    with pytest.raises(CellExecutionError) as caught:
        execute(nb, allow_errors=False)
    assert caught.value.ename == "TypeError"
    assert caught.value.evalue == "Cannot read properties of null (reading 'name')"
    message = str(caught.value)
    assert "------------------\no.name\n------------------" in message
    assert "TypeError: Cannot read properties of null (reading 'name')\n  at cell[2] line 1, col 3\n    o.name\n      ^" in message
    assert nb.cells[0].outputs == [stdout("before\n")]
    assert nb.cells[1].outputs[0]["ename"] == "TypeError"
    assert (nb.cells[2].execution_count, nb.cells[2].outputs) == (None, [])


def test_timeout_without_allow_errors_raises_the_interrupt_error() -> None:
    nb = notebook("while (true) {}", "1")
    with pytest.raises(CellExecutionError) as caught:
        execute(nb, timeout=1, interrupt_on_timeout=True)
    assert (caught.value.ename, caught.value.evalue) == ("InterruptError", "Execution interrupted")
    assert "InterruptError: Execution interrupted\n  at cell[1] line 1, col 15" in str(caught.value)
    assert nb.cells[1].execution_count is None
