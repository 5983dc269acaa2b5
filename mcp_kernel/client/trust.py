"""Whether a session's files may be used: being under ``.mcp2repl/sessions/`` proves nothing.

``.mcp2repl/`` sits in the working directory, often a cloned repository or a shared folder, so
whoever wrote that folder could plant a connection file pointing at their own "kernel": the first
step would send it the agent's code (and the secrets in it) and print its forged result as a
success. So a session is used only when

* its folders are the user's, real folders (no links), and nobody else may write them;
* its record and its connection file are regular files of the user's, private (0600, as mcp2repl
  writes them: a clone or an archive cannot make them so without the user);
* the record names a live process of the user's whose command line is the kernel of exactly that
  connection file (``-m mcp_kernel -f PATH``, as ``registry.start`` runs it);
* the connection info has a non-empty key signed with hmac-sha256 (``wire.py`` drops every
  message whose signature does not verify), and tcp on a loopback address.

Each check answers why not, in words for the user (None: it passes). ``registry.SessionFiles.check``
is the one place that puts them together.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any

SCHEME = "hmac-sha256"
PORTS = ("shell_port", "control_port", "iopub_port")


class SessionError(Exception):
    """A session cannot be used as asked; the message says what to do."""


def folder_problem(path: Path) -> tuple[str | None, int]:
    """Why a sessions folder may not be used at all, and its permission bits (None: it may)."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link", 0
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder", 0
    if st.st_uid != os.getuid():
        return f"belongs to uid {st.st_uid}, not to you", 0
    return None, stat.S_IMODE(st.st_mode)


def file_problem(path: Path) -> str | None:
    """Why a session's record or connection file may not be trusted (None: a private regular file of the user's)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "is missing"
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_uid != os.getuid():
        return f"belongs to uid {st.st_uid}, not to you"
    if st.st_mode & 0o077:
        return f"has mode {stat.S_IMODE(st.st_mode):04o}, not 0600: others may read or write it"
    return None


def _ip_address(text: str) -> Any:
    """``ipaddress.ip_address``, imported at first use: a one-shot run checks no connection file."""
    import ipaddress

    return ipaddress.ip_address(text)


def is_loopback(host: str) -> bool:
    """Does ``host`` name this machine only (127.0.0.0/8, ::1, localhost)?"""
    if host.lower() == "localhost":
        return True
    try:
        return _ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def connection_problem(info: Any) -> str | None:
    """Why connection info may not be used to send code (None: signed, tcp, loopback)."""
    if not isinstance(info, dict):
        return "is not a connection file"
    if not isinstance(info.get("key"), str) or not info["key"]:
        return "has an empty key: messages from it could not be verified"
    if info.get("signature_scheme") != SCHEME:
        return f"signs with {info.get('signature_scheme')!r}, not {SCHEME}"
    if info.get("transport") != "tcp":
        return f"names transport {info.get('transport')!r}, not tcp"
    try:
        loopback = _ip_address(str(info.get("ip"))).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        return f"names address {info.get('ip')!r}, not a loopback one"
    for port in PORTS:
        value = info.get(port)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 65536:
            return f"names no valid {port}"
    return None


def kernel_problem(pid: int, conn: Path) -> str | None:
    """Why ``pid`` is not the live kernel of connection file ``conn`` (None: it is).

    pids come round again soon (Linux's default ``pid_max`` is 32768), and a record may be a
    lie, so the process's owner and command line are checked, not just that something runs.
    """
    if pid <= 0:
        return "the record names no process"
    proc = Path(f"/proc/{pid}")
    if not Path("/proc/self").exists():
        return _kernel_problem_ps(pid, conn)
    try:
        owner = proc.stat().st_uid
        state = proc.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0]
        args = proc.joinpath("cmdline").read_bytes().split(b"\0")
    except (OSError, IndexError):
        return f"pid {pid} is not running"
    if state in ("Z", "X"):
        return f"pid {pid} is not running"
    if owner != os.getuid():
        return f"pid {pid} runs as uid {owner}, not as you"
    want = [b"-m", b"mcp_kernel", b"-f", os.fsencode(conn)]
    if not any(args[i : i + len(want)] == want for i in range(len(args))):
        return f"pid {pid} is not its kernel"
    return None


def _kernel_problem_ps(pid: int, conn: Path) -> str | None:
    """:func:`kernel_problem` without /proc (macOS): ``ps`` joins the arguments with spaces."""
    import subprocess  # here only: Linux answers from /proc, and every warm step checks

    out = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["ps", "-o", "uid=,stat=,args=", "-p", str(pid)], capture_output=True, text=True, timeout=10).stdout
    fields = out.strip().split(None, 2)
    if len(fields) < 3 or fields[1].startswith("Z"):
        return f"pid {pid} is not running"
    if int(fields[0]) != os.getuid():
        return f"pid {pid} runs as uid {fields[0]}, not as you"
    if f" -m mcp_kernel -f {conn}" not in f" {fields[2]} ":
        return f"pid {pid} is not its kernel"
    return None


def open_private(path: Path, flags: int, shown: str) -> int:
    """Open (creating, 0600) a file of the sessions folder, never through a link planted there."""
    try:
        return os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if os.path.islink(path):
            raise SessionError(f"{shown} is a symbolic link: mcp2repl writes no file through one (remove it)") from None
        raise SessionError(f"cannot open {shown}: {exc.strerror}") from None


def write_private(path: Path, text: str, shown: str) -> None:
    """Replace ``path`` with ``text``, owner-only, atomically, never writing through a planted link."""
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = open_private(tmp, os.O_WRONLY | os.O_EXCL, shown + ".tmp")
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(tmp, path)
