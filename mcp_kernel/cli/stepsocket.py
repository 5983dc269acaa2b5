"""The session kernel's step socket: ``.mcp2repl/sessions/NAME.sock``, for the fast client (cli/quick.py).

Started by ``python -m mcp_kernel`` for a named session's kernel, in daemon threads beside
ipykernel. Each step runs through the command's own code (cli/served.py) and reaches the kernel
as a Jupyter execute handed to its shell in-process (kernel/direct.py: the same dispatch, order,
record and IOPub as a request over ZMQ, without a connection of the kernel to itself); before the
kernel's loop runs, over a ZMQ connection as the command would. The socket is owner-only in an owner-only folder, and a
connection is served only when ``SO_PEERCRED`` says its peer runs as this user: the socket is a
second door to the same kernel, with the same key as its connection file — being this user.
Netstrings in (argv, environment, working folder, stdin; cli/quick.py), netstrings out (status,
stdout, stderr); the client closing its side (Ctrl-C, or it went away) interrupts the step.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..client.registry import FOLDER, SessionFiles
from ..client.trust import folder_problem
from .quick import VERSION, pack, unpack

if TYPE_CHECKING:
    from ..client.kernel_session import Channel, KernelSession
    from .sessions import Watch

#: The way to this kernel's own shell for a step, or None (not yet: the step then connects over ZMQ).
Direct = Callable[[], "Channel | None"]

#: A request's most bytes (its stdin is the program): past it the connection is dropped.
MAX_REQUEST = 64 << 20
_CRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def socket_path(files: SessionFiles) -> Path:
    return files.folder / f"{files.name}.sock"


def serve(conn_file: Path, direct: Direct | None = None) -> None:
    """Listen for steps of the session whose connection file is ``conn_file`` (…/.mcp2repl/sessions/kernels/NAME.json);
    ``direct`` gives each step its way to this kernel's shell (kernel/direct.py)."""
    cwd = conn_file.absolute().parents[3]
    if cwd / FOLDER / "kernels" != conn_file.absolute().parent:
        return  # not a named session's kernel
    threading.Thread(target=_listen, args=(SessionFiles(conn_file.stem, cwd), direct), name="mcp2repl-step-socket", daemon=True).start()


def _listen(files: SessionFiles, direct: Direct | None) -> None:
    path = socket_path(files)
    try:
        if any(folder_problem(p)[0] or folder_problem(p)[1] & 0o077 for p in (files.folder, files.kernels)):
            return _say(f"{files.rel(files.folder)} is not private: no step socket (steps take the ZMQ path)")
        with contextlib.suppress(FileNotFoundError):
            st = os.lstat(path)
            if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
                return _say(f"{files.rel(path)} is not a socket of yours: no step socket (steps take the ZMQ path)")
            os.unlink(path)  # a socket a previous kernel of this session left
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        os.chmod(path, 0o600)
        server.listen(16)
    except OSError as exc:
        return _say(f"no step socket at {files.rel(path)} ({exc.strerror or exc}): steps take the ZMQ path")
    # Loaded now, not on the first step: 7 modules, ~120 KB in a kernel that has ipykernel and zmq already
    # (measured for issue 28: importing it lazily would save an idle kernel nothing worth a slower first step).
    import mcp_kernel.cli.served  # noqa: F401

    while True:
        conn, _ = server.accept()
        threading.Thread(target=_handle, args=(conn, files, direct), name="mcp2repl-step", daemon=True).start()


def _say(text: str) -> None:
    print(f"[mcp2repl] {text}", file=sys.__stderr__, flush=True)


def _handle(conn: socket.socket, files: SessionFiles, direct: Direct | None) -> None:
    from . import served

    with conn:
        pid, uid, _gid = _CRED.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size))
        if uid != os.getuid():
            return  # another user's process: not a word
        request = _request(conn)
        if request is None:
            return
        argv, env, cwd, stdin = request
        reply: served.Reply = "another folder"
        if os.path.realpath(cwd) == os.path.realpath(files.cwd):
            out, err = _Live(conn, b"o"), _Live(conn, b"e")
            channel = direct() if direct is not None else None
            reply = served.run(argv, env, stdin, files.name, _hang_up_interrupts(conn), pid, out, err, channel)  # type: ignore[arg-type]
        _send(conn, [b"f", reply.encode()] if isinstance(reply, str) else [b"x", b"%d" % reply])
        with contextlib.suppress(OSError):  # the end, said: close alone is not while the hang-up watcher's recv holds the socket
            conn.shutdown(socket.SHUT_RDWR)


def _send(conn: socket.socket, fields: list[bytes]) -> None:
    with contextlib.suppress(OSError):  # the client went away: its step was interrupted, nobody reads this
        conn.sendall(pack(fields))


class _Live:
    """A text stream whose every write is a frame to the client (``o``: stdout, ``e``: stderr)."""

    def __init__(self, conn: socket.socket, kind: bytes) -> None:
        self.conn, self.kind = conn, kind

    def write(self, text: str) -> int:
        if text:
            _send(self.conn, [self.kind, text.encode("utf-8", "surrogatepass")])
        return len(text)

    def flush(self) -> None:
        """Every write is sent at once."""


def _request(conn: socket.socket) -> tuple[list[str], dict[str, str], str, bytes | None] | None:
    """argv, MCP2REPL_* environment, working folder and stdin of a request (cli/quick.py packs it); None if malformed."""
    whole = unpack(conn.recv, 1, MAX_REQUEST)
    blob = [whole[0] if whole else b""]
    head = unpack(lambda _: blob.pop() if blob else b"", 6, MAX_REQUEST)
    if head is None or head[0] != VERSION or not (head[4].isdigit() and head[5].isdigit()):
        return None
    blob = [whole[0]] if whole else []
    fields = unpack(lambda _: blob.pop() if blob else b"", 6 + int(head[4]) + int(head[5]), MAX_REQUEST)
    if fields is None:
        return None
    rest = fields[6:]
    argv = [os.fsdecode(a) for a in rest[: int(head[4])]]
    env = dict(os.fsdecode(pair).partition("=")[::2] for pair in rest[int(head[4]) :])
    return argv, env, os.fsdecode(head[1]), head[3] if head[2] == b"1" else None


def _hang_up_interrupts(conn: socket.socket) -> Watch:
    """The watch of a served step: the client closing its side interrupts the step; the session is let go of at the end."""

    @contextlib.contextmanager
    def watch(session: KernelSession) -> Iterator[None]:
        def wait() -> None:
            with contextlib.suppress(OSError):
                while conn.recv(4096):
                    pass
            session.interrupt()

        threading.Thread(target=wait, name="mcp2repl-step-hangup", daemon=True).start()
        try:
            yield
        finally:
            session.close()

    return watch
