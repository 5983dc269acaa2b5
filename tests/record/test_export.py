"""``mcp2repl sessions export``: a session's record becomes a clean notebook that ``mcp2repl run`` and
papermill execute again from scratch, on a fresh kernel, to the same values (the demo server)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "cli"))
from agent_cli import Run, clean_env, cli, stop_all  # noqa: E402

from mcp_kernel.client import KernelSession  # noqa: E402

pytestmark = pytest.mark.slow

STEPS = [
    "globalThis.first = await mcp.demo.get_book({ book_id: 'b01' }); first.title",
    "const picked = await mcp.demo.get_book({ book_id: data.id }); picked.title",
    "picked.nope.x",
    "[first.id, picked.id, picked.title.length]",
]


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One session stepped from the shell and from Python (a step with data, a failing one), then stopped."""
    cwd = tmp_path_factory.mktemp("export")
    try:
        assert cli("--session", "s", "-e", STEPS[0], cwd=cwd) == Run(0, "'The Lantern Cartographer'\n", "")
        api = KernelSession("s", cwd=cwd)
        try:
            assert api.step(STEPS[1], data={"id": "b02"}).value == "Salt and Starling"
            assert api.step(STEPS[2]).error is not None
        finally:
            api.close()
        assert cli("--session", "s", "-e", STEPS[3], cwd=cwd).code == 0
        assert cli("--stop", "s", cwd=cwd).code == 0  # the record outlives the session
        yield cwd
    finally:
        stop_all(cwd)


def results(path: Path) -> list[str]:
    """Each code cell's result as text (the live call display says how long calls took: not compared)."""
    node = nbformat.read(path, as_version=4)
    nbformat.validate(node)
    return [o.data["text/plain"] for c in node.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "execute_result"]


RECORDED = ["'The Lantern Cartographer'", "'Salt and Starling'", "[ 'b01', 'b02', 17 ]"]


def test_the_export_keeps_what_worked_and_runs_again_to_the_same_values(here: Path) -> None:
    run = cli("sessions", "export", "s", cwd=here)
    assert run == Run(0, "wrote s.ipynb: 3 steps; 1 failed left out as notes. Run it again with: mcp2repl run s.ipynb\n", "")
    node = nbformat.read(here / "s.ipynb", as_version=4)
    assert [c.cell_type for c in node.cells] == ["code", "code", "markdown", "code"]
    assert node.cells[0].source == STEPS[0]
    assert node.cells[1].source == "globalThis.data = {\"id\": \"b02\"}; // the data this step was given\n" + STEPS[1]
    assert node.cells[2].source == (
        "**Step [3] failed with `TypeError: Cannot read properties of undefined (reading 'x')`**; it is left out"
        " (export with `--keep-errors` to keep it):\n\n```javascript\npicked.nope.x\n```"
    )
    assert node.metadata.kernelspec.name == "mcp2repl" and all(c.metadata == {} for c in node.cells)
    assert results(here / "s.ipynb") == RECORDED
    again = subprocess.run(
        [str(Path(sys.executable).with_name("mcp2repl")), "run", "s.ipynb", "-o", "again.ipynb"],
        cwd=here, env=clean_env(), capture_output=True, text=True, timeout=300,
    )
    assert (again.returncode, again.stdout.splitlines()[0]) == (0, "Executed 3 code cells of s.ipynb (0 with errors)"), again.stderr
    assert results(here / "again.ipynb") == RECORDED


def test_parameters_become_a_papermill_cell_the_steps_read(here: Path) -> None:
    run = cli("sessions", "export", "s", "-o", "p.ipynb", "--parameters", cwd=here)
    assert run == Run(0, "wrote p.ipynb: 3 steps; 1 failed left out as notes; parameters data_2. Run it again with: mcp2repl run p.ipynb\n", "")
    node = nbformat.read(here / "p.ipynb", as_version=4)
    assert (node.cells[0].source, node.cells[0].metadata.tags) == ('const data_2 = {"id": "b02"};', ["parameters"])
    assert node.cells[2].source == "globalThis.data = data_2; // this step's data, from the parameters cell\n" + STEPS[1]
    for args, values in (([], RECORDED), (["-y", "data_2: {id: b03}"], None)):
        out = here / f"pm{len(args)}.ipynb"
        done = subprocess.run(
            [sys.executable, "-m", "papermill", "p.ipynb", str(out), "--no-progress-bar", *args],
            cwd=here, env=clean_env(), capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        got = results(out)
        if values is not None:
            assert got == values
        else:  # other input, the same work: the third book instead of the second
            assert got[0] == RECORDED[0] and got[1] != RECORDED[1] and got[2].startswith("[ 'b01', 'b03', ")


def test_keep_errors_keeps_the_failed_step_and_the_run_goes_on_past_it(here: Path) -> None:
    assert cli("sessions", "export", "s", "-o", "k.ipynb", "--keep-errors", cwd=here).code == 0
    node = nbformat.read(here / "k.ipynb", as_version=4)
    assert [(c.source, c.metadata.get("tags")) for c in node.cells][2] == ("picked.nope.x", ["raises-exception"])
    assert [o.output_type for o in node.cells[2].outputs] == ["error"]


def test_export_says_what_is_wrong(here: Path) -> None:
    assert cli("sessions", "export", "none", cwd=here) == Run(
        2, "", "mcp2repl: error: session 'none' has no notebook (.mcp2repl/sessions/none.ipynb): its steps are recorded from its first step on\n"
    )
    (here / "s.ipynb").write_text(json.dumps({"mine": True}))
    assert cli("sessions", "export", "s", cwd=here) == Run(2, "", "mcp2repl: error: s.ipynb exists: name the file to write with -o (-o s.ipynb replaces it)\n")
    assert json.loads((here / "s.ipynb").read_text()) == {"mine": True}
