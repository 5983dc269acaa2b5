"""Named sessions: detached kernels that live under ``.mcp2repl/sessions/`` of a working directory.

A session is an ordinary mcp2repl kernel started in the background with its connection file at
``.mcp2repl/sessions/kernels/NAME.json`` (owner-only, loopback ports it bound), so ``jupyter
console --existing`` and JupyterLab attach to it like to any kernel; ``kernels/`` holds connection
files and nothing else, so a Jupyter server can be pointed at it. Beside it, in ``sessions/``:
``NAME.meta.json`` (the session's record: its kernel's pid, when, with which options),
``NAME.log`` (the kernel's own output) and ``NAME.lock``: every step holds an exclusive lock on
it (steplock.py), so two shells stepping the same session are served one after the other.

Nothing there is trusted for being there (trust.py): :meth:`SessionFiles.check` is the one
verdict every path that reads a session goes through — a step, the listing, ``--stop``,
``KernelSession``. The kernel ends itself after ``idle_timeout`` seconds without a cell and
removes its connection file; a kernel that died leaves it behind. That is how a dead session is
told from one that ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .trust import SessionError, connection_problem, file_problem, folder_problem, kernel_problem, open_private, write_private
from .wire import KernelConnection, KernelDied

if TYPE_CHECKING:  # subprocess is imported where a kernel is started: a warm step starts none
    import subprocess

__all__ = ["SessionError", "SessionFiles", "StartOptions", "Verdict", "connect", "names", "start", "stop"]

#: How a kernel process is started, before ``-f CONNECTION_FILE``: ``-X no_debug_ranges`` keeps no
#: column table in any code object (~0.4 MB of an idle kernel's memory). Python tracebacks lose
#: their ``^^^`` markers: the kernel's own (a cell's errors are V8's), and those of any module whose
#: bytecode the kernel was first to cache (a ``pip install`` caches every module with its table).
KERNEL_ARGS = ("-X", "no_debug_ranges", "-m", "mcp_kernel")


FOLDER = Path(".mcp2repl") / "sessions"
KERNELS = "kernels"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
DEFAULT_IDLE = 3600.0
START_TIMEOUT = 60.0
#: The exit status of a kernel whose ports another process took first (``kernel/app.py``), and how
#: many times a session's kernel is started on fresh ports before that is the error.
PORTS_TAKEN = 75
PORT_ATTEMPTS = 3
#: Kernels this process started: polled so that a dead child is reaped, not kept as a zombie.
_children: list[subprocess.Popen[bytes]] = []


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


@dataclass
class Verdict:
    """What a session's files say, once checked: ``running`` (trusted: ``info`` may be sent code),
    ``dead`` (its kernel died), ``ended`` (it ended itself), ``missing`` or ``untrusted`` (``reason``)."""

    state: str
    reason: str = ""
    pid: int = 0
    info: dict[str, Any] | None = None
    is_kernel: bool = False  # the record's pid is this session's kernel: it may be signalled


def secure_folders(cwd: Path, notices: list[str], create: bool = False) -> None:
    """Check the sessions folders of ``cwd``: the user's, real folders, open to nobody else.

    One open to others is the user's own doing (a umask, a clone, a copy) and is tightened to
    0700 with a notice; one of someone else's, or a link, is refused (SessionError).
    """
    folder = cwd / FOLDER
    for path in (folder, folder / KERNELS):
        try:
            problem, mode = folder_problem(path)
        except FileNotFoundError:
            if not create:
                return
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            problem, mode = folder_problem(path)
        shown = path.relative_to(cwd)
        if problem:
            raise SessionError(f"{shown} {problem}: mcp2repl uses no session there (remove it, or work in another folder)")
        if mode & 0o077:
            os.chmod(path, 0o700)
            notices.append(f"{shown} was open to others (mode {mode & 0o777:04o}): tightened to 0700")


class SessionFiles:
    """The files of session ``name`` under ``cwd``, and whether they may be trusted."""

    def __init__(self, name: str, cwd: Path | None = None) -> None:
        self.name = check_name(name)
        self.cwd = (cwd or Path.cwd()).absolute()
        self.folder = self.cwd / FOLDER
        self.kernels = self.folder / KERNELS
        self.conn = self.kernels / f"{name}.json"
        self.meta = self.folder / f"{name}.meta.json"
        self.log = self.folder / f"{name}.log"
        self.lock = self.folder / f"{name}.lock"
        self.gateway = self.folder / f"{name}.gateway.json"
        self.notebook = self.folder / f"{name}.ipynb"  # the kernel's record of every step (kept after the session ends)
        #: What checking the folders did that the user should hear of (a folder tightened).
        self.notices: list[str] = []

    def rel(self, path: Path) -> str:
        """``path`` as the user sees it: from the working directory."""
        with contextlib.suppress(ValueError):
            return str(path.relative_to(self.cwd))
        return str(path)

    def secure(self, create: bool = False) -> None:
        secure_folders(self.cwd, self.notices, create)

    def read_meta(self) -> dict[str, Any] | None:
        try:
            meta = json.loads(self.meta.read_text())
        except (OSError, ValueError):
            return None
        return meta if isinstance(meta, dict) else None

    def conn_info(self) -> dict[str, Any] | None:
        try:
            info = json.loads(self.conn.read_text())
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def check(self) -> Verdict:
        """The session's state, trusting nothing its files say until they pass every check (trust.py)."""
        self.secure()
        has_conn, has_meta = os.path.lexists(self.conn), os.path.lexists(self.meta)
        conn, meta_shown = self.rel(self.conn), self.rel(self.meta)
        if not has_meta:
            if not has_conn:
                return Verdict("missing")
            return Verdict("untrusted", f"{conn} has no session record beside it ({meta_shown}): mcp2repl did not start it")
        if problem := file_problem(self.meta):
            return Verdict("untrusted", f"{meta_shown} {problem}")
        pid = (self.read_meta() or {}).get("pid")
        if not isinstance(pid, int) or isinstance(pid, bool):
            return Verdict("untrusted", f"{meta_shown} is not a session record")
        _reap()
        not_kernel = kernel_problem(pid, self.conn)
        if not has_conn:
            return Verdict("ended", pid=pid, is_kernel=not_kernel is None)
        if problem := file_problem(self.conn):
            return Verdict("untrusted", f"{conn} {problem}", pid, is_kernel=not_kernel is None)
        if not_kernel:
            return Verdict("dead", not_kernel, pid)
        info = self.conn_info()
        if problem := connection_problem(info):
            return Verdict("untrusted", f"{conn} {problem}", pid, is_kernel=True)
        return Verdict("running", pid=pid, info=info, is_kernel=True)

    def state(self) -> str:
        """``running``, ``dead``, ``ended``, ``missing`` or ``untrusted``: see :meth:`check`."""
        return self.check().state

    def last_used(self) -> float | None:
        with contextlib.suppress(OSError):
            return self.lock.stat().st_mtime
        return None

    def log_tail(self, lines: int = 6) -> str:
        """The kernel log's last lines, without what every kernel prints (IPython's banner)."""
        with contextlib.suppress(OSError):
            text = [line for line in self.log.read_text(errors="replace").strip().splitlines() if not _banner(line)]
            return "\n".join(text[-lines:])
        return ""

    def remove(self) -> None:
        for path in (self.conn, self.meta, self.lock, self.folder / f"{self.name}.sock"):  # .sock: cli/stepsocket.py
            with contextlib.suppress(OSError):
                path.unlink()


#: Lines every kernel writes to its log at start (ipykernel's connection banner, its TCP warning):
#: they say nothing about why a kernel ended.
_BANNER = ("NOTE: When using the `ipython kernel` entry point", "To connect another client to this kernel", "--existing ", "Kernel is running over TCP without encryption")


def _banner(line: str) -> bool:
    text = line.strip()
    return not text or any(mark in text for mark in _BANNER)


def untrusted(files: SessionFiles, reason: str) -> SessionError:
    """Stepping an untrusted session: what is wrong, that nothing was sent, and the way out."""
    return SessionError(
        f"session {files.name!r} is untrusted: {reason}. No code was sent to it: remove its files with --stop {files.name}, "
        "or replace it with --restart (KernelSession(..., restart=True))"
    )


def _reap() -> None:
    for child in list(_children):
        if child.poll() is not None:
            _children.remove(child)


def is_kernel(pid: int, conn: Path) -> bool:
    """Is ``pid`` the live kernel of connection file ``conn`` (trust.kernel_problem)?"""
    _reap()
    return kernel_problem(pid, conn) is None


def start(files: SessionFiles, options: StartOptions) -> KernelConnection:
    """Start the session's kernel, detached (own process group, output to NAME.log), and connect.

    The ports are picked here and bound by the kernel: if another process takes one in between,
    the kernel exits with :data:`PORTS_TAKEN` and is started again on other ports.
    """
    import subprocess

    files.secure(create=True)
    attempt = 1
    while True:
        proc, info = _launch(files, options)
        try:
            return _connect_started(files, proc, info)
        except (KernelDied, SessionError):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            if proc.returncode != PORTS_TAKEN or attempt >= PORT_ATTEMPTS:
                raise
            attempt += 1


def _launch(files: SessionFiles, options: StartOptions) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    import secrets
    import subprocess

    from jupyter_client.connect import write_connection_file  # 0.3 s to import: paid at start only

    log = open_private(files.log, os.O_WRONLY | os.O_APPEND, files.rel(files.log))
    try:
        os.fchmod(log, 0o600)
        # Written here, not by the kernel: ipykernel 7.4 answers no shell request when it writes its own.
        # A dead kernel's file goes first (new ports and a new key); the write never follows a link.
        try:
            _, info = write_connection_file(str(files.conn), ip="127.0.0.1", key=secrets.token_hex(16).encode(), kernel_name="mcp2repl")
        except OSError as exc:
            raise SessionError(f"cannot write {files.rel(files.conn)}: {exc.strerror} (remove it, or --stop {files.name})") from None
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
        cmd = [
            *(sys.executable, *KERNEL_ARGS, "-f", str(files.conn)),
            f"--MCPKernel.idle_timeout={options.idle_timeout:g}",
            f"--MCPKernel.record={files.notebook}",  # every step, recorded as a notebook (mcp_kernel/record)
        ]
        proc = subprocess.Popen(cmd, cwd=files.cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    finally:
        os.close(log)
    _children.append(proc)
    meta = {
        "name": files.name,
        "pid": proc.pid,
        "started": time.time(),
        "cwd": str(files.cwd),
        "idle_timeout": options.idle_timeout,
        "options": {k: v for k, v in vars(options).items() if k not in ("env", "idle_timeout") and v is not None},
    }
    write_private(files.meta, json.dumps(meta, indent=1), files.rel(files.meta))
    return proc, dict(info)


#: Options a running session cannot change (its servers, its artifact folder), with their flags.
FIXED_OPTIONS = (("config", "--config"), ("server", "--server"), ("profile", "--profile"), ("artifact_dir", "--artifact-dir"))


def changed_options(files: SessionFiles, options: StartOptions) -> str | None:
    """What ``options`` ask that the running session was not started with (None: nothing)."""
    recorded = (files.read_meta() or {}).get("options") or {}
    for key, flag in FIXED_OPTIONS:
        given, was = getattr(options, key), recorded.get(key)
        if given is None or _same(key, str(given), was, files.cwd):
            continue
        started = f"with {flag} {was}" if was is not None else f"without {flag}"
        return (
            f"session {files.name!r} was started {started}, not {given}: it keeps the options it started with; "
            "--restart starts it afresh with these (its state is dropped)"
        )
    return None


def _same(key: str, given: str, was: Any, cwd: Path) -> bool:
    if was is None:
        return False
    if key in ("config", "artifact_dir"):  # paths: the same file however it is written
        return (cwd / Path(given).expanduser()).resolve() == (cwd / Path(str(was)).expanduser()).resolve()
    return given == str(was)


def _connect_started(files: SessionFiles, proc: subprocess.Popen[bytes], info: dict[str, Any]) -> KernelConnection:
    """Connect to a kernel this process just started (the info is the one it wrote: nothing to check)."""
    conn = KernelConnection(info, alive=lambda: proc.poll() is None)
    try:
        conn.wait_ready(START_TIMEOUT)
    except KernelDied:
        conn.close()
        raise SessionError(f"the kernel of session {files.name!r} exited while starting (status {proc.poll()}):\n{files.log_tail()}") from None
    except TimeoutError:
        conn.close()
        terminate(proc.pid, files.conn)
        raise SessionError(f"the kernel of session {files.name!r} did not start within {START_TIMEOUT:g} s:\n{files.log_tail()}") from None
    except BaseException:
        conn.close()
        raise
    return conn


def connect(files: SessionFiles, verdict: Verdict | None = None) -> KernelConnection:
    """A connection to the session's running kernel (ready for a step), only once its files are trusted."""
    v = verdict or files.check()
    if v.state == "untrusted":
        raise untrusted(files, v.reason)
    if v.state != "running" or v.info is None:
        raise SessionError(f"session {files.name!r} is not running ({v.state})")
    pid = v.pid
    conn = KernelConnection(v.info, alive=lambda: is_kernel(pid, files.conn))
    try:
        conn.wait_ready(START_TIMEOUT)
    except BaseException:
        conn.close()
        raise
    return conn


def terminate(pid: int, conn: Path, grace: float = 3.0) -> None:
    """End a kernel's process group (the kernel and its servers), politely first.

    Before every signal ``pid`` is checked to be the kernel of ``conn`` (trust.kernel_problem):
    pids come round again soon, and another session's kernel also leads its own group.
    """
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        if not is_kernel(pid, conn):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not is_kernel(pid, conn):
                return
            time.sleep(0.05)


def stop(files: SessionFiles) -> str:
    """Stop the session (shutdown request, then signals) and remove its files; what happened, in words.

    Only a trusted session is sent the shutdown request, and only a pid that is this session's
    kernel is ever signalled: an untrusted session's files are removed, nothing else.
    """
    v = files.check()
    if v.state == "running" and v.info is not None:
        conn = KernelConnection(v.info)
        try:
            conn.shutdown()
        finally:
            conn.close()
        deadline = time.monotonic() + 5
        while is_kernel(v.pid, files.conn) and time.monotonic() < deadline:
            time.sleep(0.05)
        terminate(v.pid, files.conn)
        files.remove()
        return f"stopped session {files.name!r} (pid {v.pid})"
    if v.state == "untrusted":
        if v.is_kernel:
            terminate(v.pid, files.conn)
        files.remove()
        return f"session {files.name!r} was untrusted ({v.reason}); its files are removed"
    files.remove()
    if v.state == "missing":
        raise SessionError(f"no session named {files.name!r} in {files.folder}")
    return f"session {files.name!r} was not running (its kernel had {'died' if v.state == 'dead' else 'ended'}); its files are removed"


def names(cwd: Path | None = None) -> list[str]:
    """The sessions of ``cwd``: from records (``NAME.meta.json``) and connection files (``kernels/NAME.json``)."""
    folder = (cwd or Path.cwd()).absolute() / FOLDER
    found: set[str] = set()
    for where, suffix in ((folder, ".meta.json"), (folder / KERNELS, ".json")):
        with contextlib.suppress(OSError):
            found |= {p.name[: -len(suffix)] for p in where.iterdir() if p.name.endswith(suffix)}
    return sorted(n for n in found if NAME.match(n))
