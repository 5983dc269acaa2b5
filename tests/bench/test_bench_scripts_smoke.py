"""The side benches' scripts (bench/upstream, serve_bench, agent_bytes, step_bench) end to end at tiny sizes.

Only that each runs and gives every number it promises: their values mean nothing on a busy test
machine. Apart from test_bench_smoke.py (bench/run.py's harness), so the two test workers share them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
