"""`python -m mcp_kernel install`: where the spec lands and what it says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run_install(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcp_kernel", "install", *args], capture_output=True, text=True, timeout=60)


def test_prefix_install_writes_spec_and_logos(tmp_path: Path) -> None:
    done = run_install("--prefix", str(tmp_path), "--name", "mcp2repl-test", "--display-name", "JS test", "--env", "MCP2REPL_TIMEOUT", "30")
    assert done.returncode == 0, done.stderr
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / "mcp2repl-test"
    assert done.stdout.strip() == f"Installed kernelspec mcp2repl-test in {spec_dir}"
    spec = json.loads((spec_dir / "kernel.json").read_text())
    assert spec == {
        "argv": [sys.executable, "-X", "no_debug_ranges", "-m", "mcp_kernel", "-f", "{connection_file}"],
        "display_name": "JS test",
        "language": "javascript",
        "interrupt_mode": "message",
        "metadata": {"debugger": False},
        "env": {"MCP2REPL_TIMEOUT": "30"},
    }
    for logo in ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg"):
        assert (spec_dir / logo).stat().st_size > 100


def test_listed_by_jupyter_kernelspec(tmp_path: Path) -> None:
    assert run_install("--prefix", str(tmp_path)).returncode == 0
    env = {"JUPYTER_PATH": str(tmp_path / "share" / "jupyter"), "PATH": str(Path(sys.executable).parent)}
    listed = subprocess.run(
        [sys.executable, "-m", "jupyter", "kernelspec", "list", "--json"], capture_output=True, text=True, env=env, timeout=60
    )
    specs = json.loads(listed.stdout)["kernelspecs"]
    assert specs["mcp2repl"]["spec"]["display_name"] == "JavaScript (mcp2repl)"


def test_user_and_sys_prefix_are_exclusive() -> None:
    done = run_install("--user", "--sys-prefix")
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr
