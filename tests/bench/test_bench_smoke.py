"""bench/run.py end to end at tiny sizes: real kernel, real servers, real SDK baselines.

Only that every measure produced a number for every implementation that can run here: the
numbers themselves mean nothing on a busy test machine, so nothing here compares speeds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "run.py"
#: measure keys of bench/harness.py, per implementation
MEASURES = {
    "python_sdk": ["seq_python", "seq_everything", "conc_python", "conc_everything", "cold", "cold_ready", "big_time", "big_peak"],
    "node_sdk": ["seq_python", "seq_everything", "conc_python", "conc_everything", "cold", "cold_ready", "big_time", "big_peak"],
    "kernel": [
        *("seq_python", "seq_everything", "conc_python", "conc_everything", "cold", "cold_ready", "trivial", "trivial_ts", "big_time", "big_peak"),
        *("strip_10", "rewrite_10", "strip_2000", "rewrite_2000", "strip_js", "rewrite_js"),
    ],
    "ipykernel": ["trivial"],
}
#: the measures of the first table; issue 28's session rows have their own smoke test (test_session_bench_smoke.py)
SELECTED = "seq_python,seq_everything,conc_python,conc_everything,cold,trivial,big,typestrip"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One --quick run of the whole harness; the kernelspec comes from conftest's private Jupyter path."""
    out = tmp_path_factory.mktemp("bench")
    done = subprocess.run([sys.executable, str(RUN), "--quick", "--only", SELECTED, "--out", str(out)], capture_output=True, text=True, timeout=1200, cwd=ROOT)  # generous: a loaded machine
    results = list(out.glob("*.json"))
    assert len(results) == 1, f"bench/run.py --quick wrote no results:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    return {"results": json.loads(results[0].read_text()), "out": out, "done": done}


@pytest.mark.slow
@pytest.mark.timeout(1300)
@pytest.mark.parametrize("impl", list(MEASURES))
def test_every_measure_has_a_number(quick_run: dict, impl: str) -> None:
    results = quick_run["results"]
    skipped = results["skipped"]
    assert "server everything" not in skipped, skipped["server everything"]
    if impl in skipped:
        if impl == "node_sdk":
            pytest.skip(f"raw Node SDK baseline unavailable: {skipped[impl]}")
        if impl == "ipykernel":
            pytest.skip(f"ipykernel's python3 kernelspec unavailable: {skipped[impl]}")
        pytest.fail(f"{impl} was skipped: {skipped[impl]}")
    summary = results["summary"]
    missing = [m for m in MEASURES[impl] if not summary.get(m, {}).get(impl, {}).get("median", 0) > 0]
    errors = [t["error"] for r in results["rounds"] for t in r["trials"] if t["impl"] == impl and "error" in t]
    assert not missing, f"{impl}: no positive number for {missing}\n" + "\n".join(errors)


@pytest.mark.slow
@pytest.mark.timeout(1300)
def test_run_succeeds_and_writes_its_table_beside_the_results(quick_run: dict) -> None:
    done, out = quick_run["done"], quick_run["out"]
    assert done.returncode == 0, done.stderr[-6000:]
    assert [r["quiet"]["quiet"] for r in quick_run["results"]["rounds"]] == [True]  # --quick does not wait
    table = (out / "performance.md").read_text()
    rows = ("sequential call, Python server", "sequential call, server-everything", "concurrent calls", "cold start", "trivial cell", "1 MB result")
    for row in (*rows, "trivial TypeScript cell", "type stripping, 10-line", "type stripping, the same plain-JS cells"):
        assert row in table
    assert not (ROOT / "bench" / "results" / f"{quick_run['results']['id']}.json").exists()


def test_the_upstream_stdio_reproduction_runs() -> None:
    """bench/upstream/stdio_quadratic.py at tiny sizes: it must keep working against the SDK in use."""
    script = ROOT / "bench" / "upstream" / "stdio_quadratic.py"
    done = subprocess.run([sys.executable, str(script), "1", "2"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert [line.split(" line:")[0].strip() for line in lines] == ["1 MB", "2 MB"]
    assert lines[1].endswith("the first size's time for 2x the bytes)")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_serve_bench_runs(tmp_path: Path) -> None:
    """bench/serve_bench.py at a tiny size: every number is there (their values mean nothing here)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "serve_bench.py"), "--rounds", "1", "--steps", "3"], capture_output=True, text=True, timeout=580, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(done.stdout[done.stdout.index("{") :])
    assert summary["run_ms"] > 0 and summary["step_ms"] > 0 and summary["run_vs_step"] > 0
    assert set(summary["economy"]) == {"trivial", "loop of 100 calls", "catalog", "knowledge graph", "a failing step"}
    assert summary["economy"]["trivial"]["run_text_read"] == 1  # "2"
    assert summary["cli_read"] > 0 and summary["tools_list_bytes"] > 0
    assert summary["cli_read_incl_skill"] == summary["cli_read"] + (ROOT / "skills" / "mcp2repl" / "SKILL.md").stat().st_size


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_agent_bytes_bench_runs() -> None:
    """bench/agent_bytes.py at a tiny size (issue 23): the same cells through jupyter_client and through --json."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "agent_bytes.py"), "--calls", "3"], capture_output=True, text=True, timeout=880, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    rows = json.loads(done.stdout[done.stdout.index("{") :])
    assert set(rows) == {"trivial", "loop of 3 tool calls", "loop of 3 tool calls, titles"}
    assert (rows["trivial"]["kernel_read"], rows["trivial"]["cli_read"]) == ("2", '{"ok":true,"value":2}\n')
    loop = rows["loop of 3 tool calls"]
    assert loop["kernel_read"].startswith("{ calls: 3, pages: ") and loop["cli_read"].startswith('{"ok":true,"value":{"calls":3,"pages":')
    assert all(row["kernel_bytes"] > 0 and row["cli_json_bytes"] > 0 for row in rows.values())


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_step_bench_runs() -> None:
    """bench/step_bench.py at one run (issue 28): the warm step and its floors, in both bytecode modes, with a baseline."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "step_bench.py"), "--runs", "1", "--baseline", "HEAD"], capture_output=True, text=True, timeout=580, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(done.stdout[done.stdout.index("{") :])
    for mode in ("cached", "source"):
        table = summary[mode]
        for name in ("floor_S", "floor", "imports", "helper_floor", "warm_e", "warm_json", "warm_stdin", "baseline_warm_e"):
            assert table[f"{name}_ms"] > 0, (mode, name, table)
        assert table["warm_e_vs_floor_S"] > 0 and table["import_self_ms"]
    assert set(summary["phases_in_process_ms"]) == {"parse", "trust_checks", "attach", "step", "close"}
