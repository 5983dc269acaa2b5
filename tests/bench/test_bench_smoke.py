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
