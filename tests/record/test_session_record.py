"""A named session's notebook, from real clients of a real session kernel: the command line, the
step API and a jupyter_client attach each add their steps, in order, sources and outputs exact; a
kernel killed mid-step leaves a valid notebook holding everything before the running step."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "cli"))
from agent_cli import Run, cli, session_pid, start, stop_all, wait_gone  # noqa: E402

from mcp_kernel.client import KernelSession  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    stop_all(tmp_path)


def record(cwd: Path, name: str = "s") -> nbformat.NotebookNode:
    node = nbformat.read(cwd / ".mcp2repl" / "sessions" / f"{name}.ipynb", as_version=4)
    nbformat.validate(node)
    return node


def outputs(cell: Any) -> list[tuple[str, Any]]:
    shown = []
    for o in cell.outputs:
        if o.output_type == "stream":
            shown.append((o.name, o.text))
        elif o.output_type == "error":
            shown.append(("error", o.traceback))
        else:
            shown.append((o.output_type, o.data["text/plain"]))
    return shown


def wait_for(what: str, check: Any, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with_value = check()
        if with_value:
            return with_value
        time.sleep(0.1)
    pytest.fail(f"waited {timeout:g} s for {what}")


def test_every_client_steps_into_one_notebook_in_order(here: Path) -> None:
    from jupyter_client import BlockingKernelClient

    assert cli("--session", "s", "-e", "globalThis.seen = ['cli']; console.log('from the shell'); seen.length", cwd=here) == Run(
        0, "1\nfrom the shell\n", ""
    )
    api = KernelSession("s", cwd=here)
    try:
        assert api.step("seen.push(data.who); await mcp.demo.get_book({ book_id: 'b01' }).then((b) => b.id)", data={"who": "api"}).value == "b01"
    finally:
        api.close()
    kc = BlockingKernelClient(connection_file=str(here / ".mcp2repl" / "sessions" / "kernels" / "s.json"))
    kc.load_connection_file()
    kc.start_channels()
    try:
        assert kc.execute_interactive("seen.push('person'); console.error('by hand'); seen", timeout=60)["content"]["status"] == "ok"
        assert kc.execute_interactive("seen.nope.x", timeout=60)["content"]["status"] == "error"
        kc.execute_interactive("1 + 1", silent=True, timeout=60)  # silent: not a step, not recorded
    finally:
        kc.stop_channels()
    assert cli("--session", "s", "--json", "-e", "seen.join(',')", cwd=here).envelope["value"] == "cli,api,person"

    nb = record(here)
    assert [c.source for c in nb.cells] == [
        "globalThis.seen = ['cli']; console.log('from the shell'); seen.length",
        "seen.push(data.who); await mcp.demo.get_book({ book_id: 'b01' }).then((b) => b.id)",
        "seen.push('person'); console.error('by hand'); seen",
        "seen.nope.x",
        "seen.join(',')",
    ]
    assert [c.execution_count for c in nb.cells] == [1, 2, 3, 4, 5]
    mine = [c.metadata.mcp2repl for c in nb.cells]
    assert [(m.client, m.status) for m in mine] == [("cli", "ok"), ("step-api", "ok"), ("jupyter", "ok"), ("jupyter", "error"), ("cli", "ok")]
    assert mine[1].data == {"who": "api"} and "data" not in mine[0]
    assert [(c.tool, c.ok) for c in mine[1].calls] == [("demo.get_book", True)] and mine[0].calls == []
    assert all(m.started <= m.ended for m in mine)
    assert outputs(nb.cells[0]) == [("stdout", "from the shell\n"), ("execute_result", "1")]
    assert outputs(nb.cells[1])[-1] == ("execute_result", "'b01'")
    assert outputs(nb.cells[2]) == [("stderr", "by hand\n"), ("execute_result", "[ 'cli', 'api', 'person' ]")]
    assert outputs(nb.cells[3]) == [
        ("error", ["TypeError: Cannot read properties of undefined (reading 'x')", "  at cell[4] line 1, col 11", "    seen.nope.x", "              ^"])
    ]
    assert outputs(nb.cells[4]) == [("execute_result", "'cli,api,person'")]
    assert nb.metadata.kernelspec.name == "mcp2repl" and nb.metadata.mcp2repl == {"session": "s", "steps": 5, "lastClient": "cli"}
    path = here / ".mcp2repl" / "sessions" / "s.ipynb"
    assert path.stat().st_mode & 0o777 == 0o600


def test_secrets_are_masked_in_the_record(here: Path) -> None:
    secret = "sk-record-9f8e7d6c5b4a"
    (here / "mcp.json").write_text(
        json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": ["-m", "mcp_kernel.demo"], "env": {"TOKEN": secret}}}})
    )
    run = cli("--session", "s", "--config", "mcp.json", "-e", f"console.log('{secret}'); '{secret}'", cwd=here)
    assert secret not in run.out and run.code == 0
    text = (here / ".mcp2repl" / "sessions" / "s.ipynb").read_text()
    assert secret not in text and text.count("[redacted]") == 4  # twice in the source, the stream, the result


def test_a_kernel_killed_mid_step_leaves_a_valid_notebook(here: Path) -> None:
    assert cli("--session", "s", "-e", "globalThis.n = 1; n", cwd=here).code == 0
    pid = session_pid(here, "s")
    api = KernelSession("s", cwd=here)
    died: list[BaseException] = []

    def step() -> None:
        try:
            api.step("console.log('before the wait'); await sleep(120000); 'never'")
        except BaseException as exc:  # noqa: BLE001 - the kernel dies under it: SessionError
            died.append(exc)

    stepping = threading.Thread(target=step)
    stepping.start()
    try:

        def running() -> bool:
            try:
                cells = record(here).cells
            except (OSError, ValueError):
                return False
            return len(cells) == 2 and outputs(cells[1]) == [("stdout", "before the wait\n")]

        wait_for("the running step's first output in the notebook", running)
        os.killpg(pid, signal.SIGKILL)
        assert wait_gone(pid)
        stepping.join(60)
    finally:
        api.close()
    assert died and "died during the step" in str(died[0])
    nb = record(here)
    assert [(c.source, c.execution_count, outputs(c)) for c in nb.cells] == [
        ("globalThis.n = 1; n", 1, [("execute_result", "1")]),
        ("console.log('before the wait'); await sleep(120000); 'never'", 2, [("stdout", "before the wait\n")]),
    ]
    assert "ended" not in nb.cells[1].metadata.mcp2repl and nb.cells[1].metadata.mcp2repl.client == "step-api"
    assert not list((here / ".mcp2repl" / "sessions").glob("*.tmp"))


def test_a_step_that_times_out_behind_a_persons_cell_does_not_interrupt_it(here: Path) -> None:
    """A person's cell (JupyterLab, a console) holds no step lock: the agent's step queues behind it in
    the kernel. Its time limit must stop the agent's own step, never the person's running cell."""
    step = _step_behind_a_persons_cell(here, "globalThis.n = 1", 6000, "await sleep(30000); 'the agent ran'")
    assert step.code == 3 and step.err.startswith("TimeoutError: the step ran past its time limit of 1 s"), step  # stopped once it ran
    assert cli("--session", "s", "-e", "n", cwd=here) == Run(0, "1\n", "")


def test_a_step_that_cannot_start_behind_a_persons_long_cell_says_so(here: Path) -> None:
    step = _step_behind_a_persons_cell(here, "globalThis.late = 'not yet'", 20000, "globalThis.late = 'ran after the person'")
    assert step.code == 3, step
    assert re.fullmatch(
        r"TimeoutError: the step waited 1\d s and was stopped before it started: the session's kernel is running a cell another client "
        r"sent \(a person, from JupyterLab or a Jupyter console\), which was left running\. This step stays queued in the kernel and runs "
        r"when that cell ends\n",
        step.err,
    ), step.err
    assert wait_for("the queued step to run", lambda: cli("--session", "s", "-e", "late", cwd=here).out == "'ran after the person'\n")


def _step_behind_a_persons_cell(here: Path, first: str, person_ms: int, step: str) -> Run:
    """Session ``s`` stepped with ``first``; then a person's cell (a Jupyter client's, no step lock)
    that sleeps ``person_ms`` and a step with ``--timeout 1`` sent while it runs. The step's run, once
    the person's cell has ended, and ended well (the step's limit never stops it)."""
    from jupyter_client import BlockingKernelClient

    assert cli("--session", "s", "-e", first, cwd=here).code == 0
    kc = BlockingKernelClient(connection_file=str(here / ".mcp2repl" / "sessions" / "kernels" / "s.json"))
    kc.load_connection_file()
    kc.start_channels()
    try:
        msg_id = kc.execute(f"await sleep({person_ms}); 'the person finished'")
        wait_for("the person's cell to start", lambda: _busy(kc, msg_id))
        run = cli("--session", "s", "--timeout", "1", "-e", step, cwd=here)
        reply = kc.get_shell_msg(timeout=60)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = kc.get_shell_msg(timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()
    return run


def _busy(kc: Any, msg_id: str) -> bool:
    while True:
        try:
            msg = kc.get_iopub_msg(timeout=0.2)
        except Exception:  # noqa: BLE001 - queue.Empty: nothing yet
            return False
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status" and msg["content"]["execution_state"] == "busy":
            return True


def test_a_persons_cell_queued_behind_an_agents_step_stays_out_of_its_output(here: Path) -> None:
    from jupyter_client import BlockingKernelClient

    assert cli("--session", "s", "-e", "globalThis.n = 1", cwd=here).code == 0
    agent = start("--session", "s", "-e", "console.log('agent says'); await sleep(4000); 'agent'", cwd=here)
    kc = BlockingKernelClient(connection_file=str(here / ".mcp2repl" / "sessions" / "kernels" / "s.json"))
    kc.load_connection_file()
    kc.start_channels()
    try:
        wait_for("the agent's step to run", lambda: len(record(here).cells) == 2)
        reply = kc.execute_interactive("console.log('person says'); 'person'", timeout=120, output_hook=lambda msg: None)
        assert reply["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
    out, err = agent.communicate(timeout=120)
    assert (agent.returncode, out, err) == (0, "'agent'\nagent says\n", "")
    assert [(c.source, outputs(c)) for c in record(here).cells][1:] == [
        ("console.log('agent says'); await sleep(4000); 'agent'", [("stdout", "agent says\n"), ("execute_result", "'agent'")]),
        ("console.log('person says'); 'person'", [("stdout", "person says\n"), ("execute_result", "'person'")]),
    ]
