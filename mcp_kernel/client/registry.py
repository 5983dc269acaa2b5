"""Named sessions: detached kernels that live under ``.mcp2repl/sessions/`` of a working directory.

A session is an ordinary mcp2repl kernel started in the background with its connection file at
``.mcp2repl/sessions/NAME.json`` (written by the kernel itself: owner-only, loopback ports it bound),
so ``jupyter console --existing`` and JupyterLab attach to it like to any kernel. Beside it:
``NAME.meta.json`` (who started it, when, with which options), ``NAME.log`` (the kernel's own
output) and ``NAME.lock``: every step holds an exclusive lock on it, so two shells stepping the
same session are served one after the other, and its modification time is the last use.

The kernel ends itself after ``idle_timeout`` seconds without a cell and removes its connection
file; a kernel that died leaves it behind. That is how a dead session is told from one that ended.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .wire import KernelConnection, KernelDied

FOLDER = Path(".mcp2repl") / "sessions"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
DEFAULT_IDLE = 3600.0
START_TIMEOUT = 60.0
#: The exit status of a kernel whose ports another process took first (``kernel/app.py``), and how
#: many times a session's kernel is started on fresh ports before that is the error.
PORTS_TAKEN = 75
PORT_ATTEMPTS = 3
#: Kernels this process started: polled so that a dead child is reaped, not kept as a zombie.
_children: list[subprocess.Popen[bytes]] = []


class SessionError(Exception):
    """A session cannot be used as asked; the message says what to do."""


def check_name(name: str) -> str:
    if not NAME.match(name or ""):
        raise SessionError(f"invalid session name {name!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    return name


@dataclass
class StartOptions:
    """What a session kernel is started with; fixed for its life (a step cannot change them)."""

    config: str | None = None
    server: str | None = None
    profile: str | None = None
    max_output_chars: int | None = None
    artifact_dir: str | None = None
    idle_timeout: float = DEFAULT_IDLE
    env: dict[str, str] = field(default_factory=dict)


class SessionFiles:
    """The files of session ``name`` under ``cwd``."""

    def __init__(self, name: str, cwd: Path | None = None) -> None:
        self.name = check_name(name)
        self.cwd = (cwd or Path.cwd()).absolute()
        self.folder = self.cwd / FOLDER
        self.conn = self.folder / f"{name}.json"
        self.meta = self.folder / f"{name}.meta.json"
        self.log = self.folder / f"{name}.log"
        self.lock = self.folder / f"{name}.lock"

    def read_meta(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.meta.read_text())
        except (OSError, ValueError):
            return None

    def state(self) -> str:
        """``running``, ``dead`` (its kernel died), ``ended`` (it ended itself: idle) or ``missing``."""
        meta = self.read_meta()
        if meta is None:
            return "running" if self.conn.exists() and self.conn_info() else "missing"
        if pid_alive(int(meta.get("pid", 0)), str(self.conn)):
            return "running"
        return "dead" if self.conn.exists() else "ended"

    def conn_info(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.conn.read_text())
        except (OSError, ValueError):
            return None

    def last_used(self) -> float | None:
        with contextlib.suppress(OSError):
            return self.lock.stat().st_mtime
        return None

    def log_tail(self, lines: int = 6) -> str:
        with contextlib.suppress(OSError):
            text = self.log.read_text(errors="replace").strip().splitlines()
            return "\n".join(text[-lines:])
        return ""

    def remove(self) -> None:
        for path in (self.conn, self.meta, self.lock):
            with contextlib.suppress(OSError):
                path.unlink()

    @contextlib.contextmanager
    def step_lock(self) -> Iterator[None]:
        """Hold the session for one step (other shells wait here); the lock's mtime is the last use."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.utime(fd)
            yield
        finally:
            os.close(fd)


def pid_alive(pid: int, marker: str = "") -> bool:
    """Is ``pid`` a live process (not a zombie), and ours (its command line names ``marker``)?"""
    for child in list(_children):
        if child.poll() is not None:
            _children.remove(child)
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    proc = Path(f"/proc/{pid}")
    if proc.exists():
        with contextlib.suppress(OSError):
            if proc.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return False
            if marker and marker.encode() not in proc.joinpath("cmdline").read_bytes():
                return False  # the pid was reused by another program
    return True


def start(files: SessionFiles, options: StartOptions) -> KernelConnection:
    """Start the session's kernel, detached (own process group, output to NAME.log), and connect.

    The ports are picked here and bound by the kernel: if another process takes one in between,
    the kernel exits with :data:`PORTS_TAKEN` and is started again on other ports.
    """
    attempt = 1
    while True:
        proc = _launch(files, options)
        try:
            return _connect_started(files, proc)
        except (KernelDied, SessionError):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            if proc.returncode != PORTS_TAKEN or attempt >= PORT_ATTEMPTS:
                raise
            attempt += 1


def _launch(files: SessionFiles, options: StartOptions) -> subprocess.Popen[bytes]:
    import secrets

    from jupyter_client.connect import write_connection_file  # 0.3 s to import: paid at start only

    files.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        files.conn.unlink()  # a dead kernel's file: new ports and a new key
    # Written here, not by the kernel: ipykernel 7.4 answers no shell request when it writes its own.
    write_connection_file(str(files.conn), ip="127.0.0.1", key=secrets.token_hex(16).encode(), kernel_name="mcp2repl")
    env = {**os.environ, **options.env}
    for var, value in (
        ("MCP2REPL_CONFIG", options.config),
        ("MCP2REPL_SERVER", options.server),
        ("MCP2REPL_PROFILE", options.profile),
        ("MCP2REPL_MAX_OUTPUT_CHARS", options.max_output_chars),
        ("MCP2REPL_ARTIFACT_DIR", options.artifact_dir),
    ):
        if value is not None:
            env[var] = str(value)
    cmd = [sys.executable, "-m", "mcp_kernel", "-f", str(files.conn), f"--MCPKernel.idle_timeout={options.idle_timeout:g}"]
    with open(files.log, "ab") as log:
        os.chmod(files.log, 0o600)
        proc = subprocess.Popen(cmd, cwd=files.cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    _children.append(proc)
    meta = {
        "name": files.name,
        "pid": proc.pid,
        "started": time.time(),
        "cwd": str(files.cwd),
        "idle_timeout": options.idle_timeout,
        "options": {k: v for k, v in vars(options).items() if k not in ("env", "idle_timeout") and v is not None},
    }
    tmp = files.meta.with_suffix(".tmp")
    tmp.write_text(json.dumps(meta, indent=1))
    os.chmod(tmp, 0o600)
    os.replace(tmp, files.meta)
    return proc


def _connect_started(files: SessionFiles, proc: subprocess.Popen[bytes]) -> KernelConnection:
    deadline = time.monotonic() + START_TIMEOUT
    while (info := files.conn_info()) is None or "key" not in info:
        if proc.poll() is not None:
            raise SessionError(f"the kernel of session {files.name!r} exited while starting (status {proc.returncode}):\n{files.log_tail()}")
        if time.monotonic() > deadline:
            terminate(proc.pid, str(files.conn))
            raise SessionError(f"the kernel of session {files.name!r} did not start within {START_TIMEOUT:g} s:\n{files.log_tail()}")
        time.sleep(0.02)
    return connect(files, info, proc.pid)


def connect(files: SessionFiles, info: dict[str, Any] | None = None, pid: int | None = None) -> KernelConnection:
    """A connection to the session's running kernel (ready for a step)."""
    info = info or files.conn_info()
    if info is None:
        raise SessionError(f"session {files.name!r} has no connection file at {files.conn}")
    if pid is None:
        pid = int((files.read_meta() or {}).get("pid", 0))
    marker = str(files.conn)
    conn = KernelConnection(info, alive=(lambda: pid_alive(pid, marker)) if pid else (lambda: True))
    try:
        conn.wait_ready(START_TIMEOUT)
    except BaseException:
        conn.close()
        raise
    return conn


def terminate(pid: int, marker: str = "", grace: float = 3.0) -> None:
    """End a kernel's process group (the kernel and its servers), politely first.

    ``marker`` (its connection file) is checked before every signal: pids come round again soon
    (Linux's default ``pid_max`` is 32768), and another session's kernel also leads its own group.
    """
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        if not pid_alive(pid, marker):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not pid_alive(pid, marker):
                return
            time.sleep(0.05)


def stop(files: SessionFiles) -> str:
    """Stop the session (shutdown request, then signals) and remove its files; what happened, in words."""
    state = files.state()
    meta = files.read_meta() or {}
    pid = int(meta.get("pid", 0))
    if state == "running":
        info = files.conn_info()
        if info is not None:
            conn = KernelConnection(info)
            try:
                conn.shutdown()
            finally:
                conn.close()
            deadline = time.monotonic() + 5
            while pid and pid_alive(pid, str(files.conn)) and time.monotonic() < deadline:
                time.sleep(0.05)
        if pid:
            terminate(pid, str(files.conn))
        files.remove()
        return f"stopped session {files.name!r} (pid {pid})"
    files.remove()
    if state == "missing":
        raise SessionError(f"no session named {files.name!r} in {files.folder}")
    return f"session {files.name!r} was not running (its kernel had {'died' if state == 'dead' else 'ended'}); its files are removed"


def names(cwd: Path | None = None) -> list[str]:
    folder = (cwd or Path.cwd()) / FOLDER
    if not folder.is_dir():
        return []
    found = {p.name[: -len(".meta.json")] for p in folder.glob("*.meta.json")}
    found |= {p.stem for p in folder.glob("*.json") if not p.name.endswith(".meta.json") and not p.name.endswith(".gateway.json")}
    return sorted(n for n in found if NAME.match(n))
