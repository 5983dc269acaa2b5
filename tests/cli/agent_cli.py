"""Running the real ``mcp2repl`` command as an agent's shell does, and cleaning up its sessions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_kernel.client.registry import pid_alive

ROOT = Path(__file__).resolve().parents[2]
MCP2REPL = str(Path(sys.executable).with_name("mcp2repl"))
PY = sys.executable
SERVERS = ROOT / "tests" / "fixtures" / "servers"


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def envelope(self) -> dict[str, Any]:
        return json.loads(self.out)


def clean_env(**extra: str) -> dict[str, str]:
    """The runner's environment without MCP2REPL_* settings, with an empty user config folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP2REPL_") or k in ("MCP2REPL_STATE_DIR", "MCP2REPL_HISTORY")}
    env["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="mcp2repl-xdg-")
    env.update(extra)
    return env


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None, timeout: float = 120) -> Run:
    proc = subprocess.run([MCP2REPL, *args], cwd=cwd, env=env or clean_env(), input=stdin, capture_output=True, text=True, timeout=timeout)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def start(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([MCP2REPL, *args], cwd=cwd, env=env or clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def session_pid(cwd: Path, name: str) -> int:
    return int(json.loads((cwd / ".mcp2repl" / "sessions" / f"{name}.meta.json").read_text())["pid"])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def wait_gone(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


def stop_all(cwd: Path) -> None:
    """End every session a test left under ``cwd`` (kernel, servers and files)."""
    folder = cwd / ".mcp2repl" / "sessions"
    for meta in folder.glob("*.meta.json") if folder.is_dir() else []:
        pid = int(json.loads(meta.read_text()).get("pid", 0))
        name = meta.name[: -len(".meta.json")]
        cli("--stop", name, cwd=cwd, timeout=60)
        if pid and pid_alive(pid, str(folder / f"{name}.json")):  # its kernel, not a reused pid
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def config(cwd: Path, servers: dict[str, Any]) -> Path:
    path = cwd / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def fixture(name: str, *args: str, **env: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": PY, "args": [str(SERVERS / name), *args]}
    if env:
        entry["env"] = env
    return entry
