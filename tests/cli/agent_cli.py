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

from mcp_kernel.client.registry import is_kernel

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
        if pid and is_kernel(pid, folder / "kernels" / f"{name}.json"):  # its kernel, not a reused pid
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


FAKE_KERNEL = ROOT / "tests" / "fixtures" / "fake_kernel.py"


@dataclass
class Planted:
    """A fake kernel (tests/fixtures/fake_kernel.py) behind a planted connection file."""

    proc: subprocess.Popen[bytes]
    conn: Path
    received: Path  # every code it was sent, one per line

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def plant(cwd: Path, name: str, *, key: str = "", sign_with: str | None = None, as_kernel: bool = False, conn: Path | None = None) -> Planted:
    """Start a fake kernel whose connection file is session ``name``'s, as a red team plants one.

    ``as_kernel``: its command line also reads ``-m mcp_kernel -f CONN``, as a session kernel's does.
    """
    conn = conn or cwd / ".mcp2repl" / "sessions" / "kernels" / f"{name}.json"
    conn.parent.mkdir(parents=True, exist_ok=True)
    received = cwd / f"{name}.received.txt"
    cmd = [PY, str(FAKE_KERNEL), str(conn), str(received), "--key", key]
    if sign_with is not None:
        cmd += ["--sign-with", sign_with]
    if as_kernel:
        cmd += ["--", "-m", "mcp_kernel", "-f", str(conn)]
    proc = subprocess.Popen(cmd)
    deadline = time.monotonic() + 60
    while not conn.exists():
        assert proc.poll() is None and time.monotonic() < deadline, f"the fake kernel did not write {conn} within 60 s"
        time.sleep(0.05)
    return Planted(proc, conn, received)


def write_record(cwd: Path, name: str, pid: int, mode: int = 0o600) -> Path:
    """A session record (NAME.meta.json) naming ``pid``, as mcp2repl writes one."""
    meta = cwd / ".mcp2repl" / "sessions" / f"{name}.meta.json"
    meta.write_text(json.dumps({"name": name, "pid": pid, "started": time.time()}))
    meta.chmod(mode)
    return meta
