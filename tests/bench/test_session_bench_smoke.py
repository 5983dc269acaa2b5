"""bench/run.py's issue-28 rows at tiny sizes (--only step,memory,sessions --quick): a real session
kernel with a real stdio server, the real floors and ipykernel's python3 kernel beside them.

Only that every row has a number, its baseline of the same run and its table line, that the
helpers were found as the kernel's descendants apart from the server, and that every session the
bench started is gone afterwards: the numbers themselves mean nothing on a busy test machine, so
nothing here compares speeds or sizes against a target.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "run.py"
#: measure -> the implementations with a value in it (the kernel, and the baselines measured beside it)
ROWS = {
    "step_warm": {"kernel", "floor_S", "floor"},
    "step_oneshot": {"kernel", "floor_S", "floor"},
    "mem_idle": {"kernel", "ipykernel"},
    "mem_helper_max": {"kernel"},
    "mem_helpers": {"kernel"},
    "mem_after_calls": {"kernel"},
    "mem_after_more_calls": {"kernel"},
    "mem_after_cells": {"kernel"},
    "sessions_pss": {"kernel", "ipykernel"},
    "sessions_step": {"kernel", "floor_S"},
    "sessions_fit": {"kernel"},
}


def _processes_under(folder: str) -> list[str]:
    """The command lines of processes that name ``folder`` (the bench's session kernels and servers do)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if any(folder in arg for arg in cmd):
            found.append(" ".join(cmd))
    return found


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    out = tmp_path_factory.mktemp("bench28")
    tmp = tempfile.mkdtemp(prefix="b28-")  # the bench's session folders: short (a session's socket path must fit), and only this run's
    cmd = [sys.executable, str(RUN), "--quick", "--only", "step,memory,sessions", "--out", str(out)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT, env={**os.environ, "TMPDIR": tmp})  # generous: a loaded machine
        results = list(out.glob("*.json"))
        assert len(results) == 1, f"bench/run.py wrote no results:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
        yield {"results": json.loads(results[0].read_text()), "out": out, "done": done, "left": _processes_under(tmp), "tmp": tmp}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.timeout(1000)
def test_every_row_has_its_number_and_its_baselines(quick_run: dict) -> None:
    done, results = quick_run["done"], quick_run["results"]
    assert done.returncode == 0, done.stderr[-6000:]
    summary = results["summary"]
    got = {key: {impl for impl, stats in summary.get(key, {}).items() if stats["median"] >= 0} for key in ROWS}
    assert got == ROWS, done.stderr[-4000:]
    positive = [key for key in ROWS if key not in ("mem_helper_max", "mem_helpers") and not summary[key]["kernel"]["median"] > 0]
    assert not positive, positive
    assert set(summary["step_warm"]["kernel"]["ratio_to"]) == {"floor_S", "floor"}
    assert summary["mem_after_calls"]["kernel"]["ratio_median"] > 0  # to the idle kernel of the same round
    assert summary["mem_after_more_calls"]["kernel"]["ratio_median"] > 0  # to the first calls' figure
    assert summary["sessions_step"]["kernel"]["detail"].endswith(" ms") and " of 2 within 100 ms, median " in summary["sessions_step"]["kernel"]["detail"]


@pytest.mark.slow
@pytest.mark.timeout(1000)
def test_helpers_are_the_kernels_descendants_apart_from_the_server(quick_run: dict) -> None:
    trial = next(t for t in quick_run["results"]["rounds"][0]["trials"] if t["group"] == "memory" and t["impl"] == "kernel")
    tree = trial["results"]["mem_idle@kernel"]["tree"]
    assert [s["label"] for s in tree["servers"]] == ["echo_server.py"]
    assert all(h["label"] != "echo_server.py" and h["rss_mb"] > 0 for h in tree["helpers"]), tree["helpers"]
    helpers = trial["results"]["mem_helpers@kernel"]
    assert helpers["detail"] == f"{len(tree['helpers'])} process(es)"


@pytest.mark.slow
@pytest.mark.timeout(1000)
def test_the_table_has_every_row_and_no_session_is_left(quick_run: dict) -> None:
    table = (quick_run["out"] / "performance.md").read_text()
    assert "## Sessions: the agent's step and a session's memory (issue 28)" in table
    for row in (
        "| warm session step `mcp2repl --session s -e 'return 1'` (ms)⁶ | `python -S -c pass`: **",
        "| one-shot `mcp2repl -e '1+1'` (ms)⁶ | `python -S -c pass`: **",
        "| idle kernel RSS, one stdio server connected (MB)⁷ | ipykernel python3: **",
        "| largest helper process of the session, RSS (MB)⁷ | — | **",
        "| kernel RSS after 5 tool calls (MB)⁷ | that row: idle kernel RSS, one stdio server connected | **",
        "| kernel RSS after those calls and 3 cells (MB)⁷ | that row: idle kernel RSS, one stdio server connected | **",
        "| memory per idle session, kernel + helpers + server, PSS (MB)⁸ | ipykernel python3: **",
        "| slowest step of 2 idle sessions (ms)⁸ | `python -S -c pass`: **",
        "| idle sessions that fit in 80 % of memory⁸ | — | **",
    ):
        assert row in table, row
    assert "| ≤ 40 ms |" in table and "| ≤ 200 ms |" in table and "| ≥ 100 sessions |" in table
    assert quick_run["left"] == []
    assert [p.name for p in Path(quick_run["tmp"]).iterdir() if p.name.startswith("mcp2repl-bench-")] == []  # every session folder removed


def test_a_sessions_helpers_are_every_descendant_but_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/procmem.py on a real process tree shaped as a session's: a kernel with a watcher and a
    guard that was given the server's whole command line; the server has a child of its own."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import procmem
    from harness import Server

    py = sys.executable
    scripts = {
        "server.py": f"import subprocess, time; subprocess.Popen([{py!r}, '-c', 'import time; time.sleep(120)']); time.sleep(120)",
        "guard.py": "import subprocess, sys; subprocess.Popen(sys.argv[1:]).wait()",
        "watcher.py": "import time; time.sleep(120)",
        "kernel.py": (
            f"import subprocess, time; subprocess.Popen([{py!r}, 'watcher.py']); "
            f"subprocess.Popen([{py!r}, '-S', 'guard.py', {py!r}, {str(tmp_path / 'server.py')!r}]); time.sleep(120)"
        ),
    }
    for name, text in scripts.items():
        (tmp_path / name).write_text(text)
    kernel = subprocess.Popen([py, "kernel.py"], cwd=tmp_path)
    try:
        proc = psutil.Process(kernel.pid)
        for _ in range(300):  # up to 30 s on a loaded machine for the four descendants to start
            if len(proc.children(recursive=True)) == 4:
                break
            time.sleep(0.1)
        tree = procmem.tree(kernel.pid, [Server("echo", py, [str(tmp_path / "server.py")], "echo", {})])
        assert sorted(u.label for u in tree.helpers) == ["guard.py", "watcher.py"]
        assert sorted(u.label for u in tree.servers) == sorted(["server.py", Path(py).name])
        assert tree.kernel.label == "kernel.py" and tree.kernel.rss > 0 and tree.total_pss() > 0
    finally:
        for child in psutil.Process(kernel.pid).children(recursive=True):
            child.kill()
        kernel.kill()
        kernel.wait()
