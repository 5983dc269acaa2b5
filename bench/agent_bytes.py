"""What an agent reads of the same cell through the kernel and through ``mcp2repl --session --json`` (issue 23).

Each cell runs twice, on the built-in demo server:

* through jupyter_client, on an mcp2repl kernel: the bytes an nbclient agent reads, i.e. the
  ``text/plain`` of the cell's outputs as they stand when it ends (execute_result, stream text,
  displays, an update replacing the display it updates: the live call display is read once, as
  its final summary line);
* through ``mcp2repl --session S --json -e CODE`` (``MCP2REPL_SESSION``/``MCP2REPL_JSON`` exported, as
  the skill advises): the bytes of its stdout and stderr.

Cells: a trivial step (``1+1``), a loop of N tool calls returning a compact summary (two numbers),
and the same loop returning the distinct titles it saw. The issue's target: on the multi-call step
the shell path reads within 10% of the kernel path. The envelope costs a constant ~21 bytes
(``{"ok":true,"value":`` … ``}``), whatever the number of calls; ``--before`` measures another
``mcp2repl`` (e.g. main's) on the same cells for comparison.

Run: ``.venv/bin/python bench/agent_bytes.py [--calls 100]``; prints one JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

MCP2REPL = str(Path(sys.executable).with_name("mcp2repl"))


def cells(calls: int) -> dict[str, str]:
    book = "mcp.demo.get_book({ book_id: 'b' + String(i % 40 + 1).padStart(2, '0') })"
    return {
        "trivial": "1+1",
        f"loop of {calls} tool calls": f"let pages = 0; for (let i = 0; i < {calls}; i++) pages += (await {book}).pages; ({{ calls: {calls}, pages }})",
        f"loop of {calls} tool calls, titles": (
            f"const seen = new Set(); for (let i = 0; i < {calls}; i++) seen.add((await {book}).title); [...seen].sort()"
        ),
    }


def kernel_read(kc: Any, code: str, timeout: float = 300) -> tuple[int, str]:
    """Bytes of the text/plain an nbclient agent reads of the cell's final outputs, and that text."""
    outputs: list[dict[str, Any]] = []

    def seen(msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            outputs.append({"id": None, "text": content.get("text", "")})
        elif kind in ("execute_result", "display_data"):
            display_id = (content.get("transient") or {}).get("display_id")
            outputs.append({"id": display_id, "text": (content.get("data") or {}).get("text/plain", "")})
        elif kind == "update_display_data":
            display_id = (content.get("transient") or {}).get("display_id")
            for out in outputs:
                if out["id"] == display_id:
                    out["text"] = (content.get("data") or {}).get("text/plain", "")
        elif kind == "error":
            outputs.append({"id": None, "text": "\n".join(content.get("traceback") or [])})
        elif kind == "clear_output":
            outputs.clear()

    reply = kc.execute_interactive(code, timeout=timeout, output_hook=seen)
    assert reply["content"]["status"] == "ok", reply["content"]
    text = "\n".join(o["text"] for o in outputs)
    return len(text.encode()), text


def cli_read(code: str, work: Path, env: dict[str, str], command: str = MCP2REPL) -> tuple[int, str]:
    step_env = {**env, "MCP2REPL_SESSION": "bytes" if command == MCP2REPL else "before", "MCP2REPL_JSON": "1"}
    done = subprocess.run([command, "-e", code], cwd=work, env=step_env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return len((done.stdout + done.stderr).encode()), done.stdout + done.stderr


def measure(calls: int, work: Path, env: dict[str, str], before: str | None = None) -> dict[str, Any]:
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="mcp2repl", cwd=str(work), env=env, startup_timeout=120)
    rows: dict[str, Any] = {}
    try:
        kernel_read(kc, "await api.servers()")  # warm both: servers started, the step's session running
        cli_read("await api.servers(); 1", work, env)
        if before:
            cli_read("await api.servers(); 1", work, env, before)
        for name, code in cells(calls).items():
            k_bytes, k_text = kernel_read(kc, code)
            c_bytes, c_text = cli_read(code, work, env)
            rows[name] = {
                "kernel_bytes": k_bytes,
                "cli_json_bytes": c_bytes,
                "ratio": round(c_bytes / k_bytes, 3) if k_bytes else None,
                "cli_overhead_bytes": c_bytes - k_bytes,
                "kernel_read": k_text,
                "cli_read": c_text,
            }
            if before:  # another mcp2repl (an older install), its envelope for the same cell
                rows[name]["before_cli_json_bytes"] = cli_read(code, work, env, before)[0]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        for name, command in (("bytes", MCP2REPL), ("before", before)):
            if command:
                subprocess.run([command, "--stop", name], cwd=work, env=env, capture_output=True, timeout=120)
    return rows


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=100, help="tool calls in the loop cells (default 100)")
    p.add_argument("--before", metavar="MCP2REPL", help="also measure this mcp2repl command (e.g. another checkout's) on the same cells")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="mcp2repl-bytes-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP2REPL_")}
    env["XDG_CONFIG_HOME"] = str(work / "xdg")  # no user config: the built-in demo server
    try:
        rows = measure(args.calls, work, env, args.before)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(rows, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
