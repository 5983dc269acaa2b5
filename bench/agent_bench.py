"""The agent command's speed targets (issue 11), with a Node baseline measured in the same rounds.

Measures, interleaved per round (medians over rounds; ratios taken within a round):

* ``warm_cli``: wall time of ``mcp2repl --session bench -e 'return 1'`` on a warm session (target
  <= 100 ms);
* ``node_floor``: what any step costs that starts a Node process importing the MCP SDK client and
  asks a daemon over a Unix socket, as the original mcp2repl's session client does (its README
  measured ~336 ms per warm step; the original is not published on npm, so its own client cannot
  be run here — this floor is a lower bound of it);
* ``oneshot``: wall time of ``mcp2repl -e '1+1'`` (target <= 0.6 s);
* ``step``: ``KernelSession.step("1+1")`` on a warm session, in this process (target <= 5 ms).

Run: ``.venv/bin/python bench/agent_bench.py [--rounds 5] [--steps 200]``. Needs
``scripts/bootstrap.sh --test`` (the Node SDK under tests/fixtures/node) for the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MCP2REPL = str(Path(sys.executable).with_name("mcp2repl"))
NODE_MODULES = ROOT / "tests" / "fixtures" / "node" / "node_modules"
STATED_ORIGINAL_MS = 336.0  # the original mcp2repl's README, warm session step
NODE_CLIENT = """
import "@modelcontextprotocol/sdk/client/index.js";
import "@modelcontextprotocol/sdk/client/stdio.js";
import net from "node:net";
const sock = net.createConnection(process.argv[2]);
sock.on("connect", () => sock.write(JSON.stringify({ type: "eval", source: "return 1" }) + "\\n"));
sock.on("data", (d) => { process.stdout.write(d); sock.end(); });
"""


def _wall(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def _daemon(path: str) -> None:
    """A stand-in for the original's session daemon: one JSON line in, one JSON reply out."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    while True:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b'{"ok":true,"response":"1"}\n')


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=200)
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="mcp2repl-agent-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP2REPL_")}
    env["XDG_CONFIG_HOME"] = str(work / "xdg")
    node = shutil.which("node")
    node_script = None
    if node and NODE_MODULES.is_dir():
        node_script = NODE_MODULES.parent / "agent_floor.mjs"
        node_script.write_text(NODE_CLIENT)
        sock_path = str(work / "daemon.sock")
        threading.Thread(target=_daemon, args=(sock_path,), daemon=True).start()
        time.sleep(0.2)
    sys.path.insert(0, str(ROOT))
    from mcp_kernel.client import KernelSession

    subprocess.run([MCP2REPL, "--session", "bench", "-e", "1"], cwd=work, env=env, check=True, capture_output=True)
    session = KernelSession("bench", cwd=work)
    rows = []
    try:
        for _ in range(3):  # warm everything once
            _wall([MCP2REPL, "--session", "bench", "-e", "return 1"], work, env)
            _wall([MCP2REPL, "-e", "1+1"], work, env)
            session.step("1+1")
        for index in range(args.rounds):
            row = {"warm_cli": _wall([MCP2REPL, "--session", "bench", "-e", "return 1"], work, env)}
            row["oneshot"] = _wall([MCP2REPL, "-e", "1+1"], work, env)
            if node_script is not None:
                row["node_floor"] = _wall([node, str(node_script), sock_path], work, env)
            times = []
            for _ in range(args.steps):
                started = time.perf_counter()
                result = session.step("1+1")
                times.append((time.perf_counter() - started) * 1000)
                assert result.value == 2
            row["step"] = statistics.median(times)
            rows.append(row)
            print(f"round {index + 1}: " + ", ".join(f"{k} {v:.1f} ms" for k, v in row.items()), file=sys.stderr)
    finally:
        session.stop()
        if node_script is not None:
            node_script.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    summary = {
        "warm_cli_ms": round(med["warm_cli"], 1),
        "warm_cli_target_ms": 100,
        "oneshot_ms": round(med["oneshot"], 1),
        "oneshot_target_ms": 600,
        "step_ms": round(med["step"], 2),
        "step_target_ms": 5,
        "stated_original_warm_step_ms": STATED_ORIGINAL_MS,
        "warm_cli_vs_stated_original": round(med["warm_cli"] / STATED_ORIGINAL_MS, 2),
    }
    if "node_floor" in med:
        summary["node_floor_ms"] = round(med["node_floor"], 1)
        summary["warm_cli_vs_node_floor"] = round(statistics.median(r["warm_cli"] / r["node_floor"] for r in rows), 2)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
