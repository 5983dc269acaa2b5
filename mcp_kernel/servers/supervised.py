"""The kernel's side of supervisor.py: one supervisor per kernel, and each server's process as anyio sees one.

A guard per server (guard.py) cost 9.7 MB of RSS each; one supervisor for all of a kernel's
servers costs that once. The kernel makes each server's pipes itself and hands them over with the
command (file descriptors over a Unix socket), so the server's stdin and stdout connect to the
kernel exactly as before, and :class:`SupervisedProcess` gives the stdio transport what anyio's
process gave it: ``stdin``, ``stdout``, ``pid``, ``returncode``, ``terminate`` and ``kill``.
Linux only (the supervisor is a child subreaper and reads /proc); elsewhere spawn.py keeps a guard
per server. Nothing here blocks the event loop: the sockets are non-blocking, the pipes are
asyncio's pipe transports, and an exit comes as a reader callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import anyio.abc

from . import supervisor

SCRIPT = str(Path(supervisor.__file__))
#: Seconds to wait for the supervisor to say a server started (it answers in milliseconds; a loaded machine).
ANSWER_WAIT = 60.0
#: What the supervisor's own environment keeps of ours: its two grace periods, and no secret.
KEPT = ("MCP2REPL_KILL_GRACE", "MCP2REPL_LEFT_GRACE")


def encode(items: list[str]) -> bytes:
    """A start request's body as supervisor.decode reads it: ``LENGTH:ITEM`` pieces, in UTF-8 bytes."""
    return b"".join(b"%d:%s" % (len(b), b) for b in (i.encode("utf-8", "surrogateescape") for i in items))


class SupervisorError(OSError):
    """The supervisor could not be started or did not answer."""


class _PipeReceive(anyio.abc.ByteReceiveStream):
    """The server's stdout: an asyncio read-pipe transport under anyio's receive-stream interface."""

    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.ReadTransport) -> None:
        self._reader, self._transport, self._closed = reader, transport, False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._reader.read(max_bytes)
        if self._closed:
            raise anyio.ClosedResourceError
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        self._closed = True
        self._transport.close()
        self._reader.feed_eof()  # a receive waiting now ends


class _PipeSend(anyio.abc.ByteSendStream):
    """The server's stdin. ``_stream`` is the asyncio writer, as on anyio's own process stdin, so
    compat.mcp_sdk's ``send_now`` and ``pipe_closing`` treat both alike."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._stream = writer

    async def send(self, item: bytes) -> None:
        if self._stream.is_closing():
            raise anyio.BrokenResourceError
        self._stream.write(item)
        await self._stream.drain()

    async def aclose(self) -> None:
        self._stream.close()


class SupervisedProcess(anyio.abc.Process):
    """A server started by the supervisor; its exit status comes on its control socket, once its tree is gone."""

    def __init__(self, pid: int, control: socket.socket, rest: bytes, stdin: _PipeSend, stdout: _PipeReceive) -> None:
        self._pid, self._control, self._buffer = pid, control, b""
        self._stdin, self._stdout = stdin, stdout
        self._returncode: int | None = None
        self._loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = self._loop.create_future()
        self._loop.add_reader(control.fileno(), self._readable)
        if rest:
            self._heard(rest)

    def _readable(self) -> None:
        try:
            data = self._control.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._heard(data)
            return
        # the supervisor is gone without a word: its death signal (SIGKILL) ended the server
        self._ended(-signal.SIGKILL)

    def _heard(self, data: bytes) -> None:
        self._buffer += data
        while b"\n" in self._buffer:
            line, _, self._buffer = self._buffer.partition(b"\n")
            if line[:1] == b"E" and line[1:].isdigit():
                self._ended(os.waitstatus_to_exitcode(int(line[1:])))

    def _ended(self, code: int) -> None:
        if self._returncode is None:
            self._returncode = code
        if not self._exited.done():
            self._exited.set_result(self._returncode)
        self._close_control()

    def _close_control(self) -> None:
        if self._control.fileno() >= 0:
            with contextlib.suppress(ValueError, RuntimeError):
                self._loop.remove_reader(self._control.fileno())
            self._control.close()

    def _say(self, what: bytes) -> None:
        with contextlib.suppress(OSError):
            if self._control.fileno() >= 0:
                self._control.send(what)

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> None:
        return None

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)

    def terminate(self) -> None:
        """SIGTERM to the server's tree, SIGKILL after the supervisor's grace."""
        self._say(b"T")

    def kill(self) -> None:
        self._say(b"K")

    def send_signal(self, sig: int) -> None:
        if sig == signal.SIGTERM:
            self.terminate()
        elif sig == signal.SIGKILL:
            self.kill()
        elif self._returncode is None:
            with contextlib.suppress(OSError):
                os.kill(self._pid, sig)

    async def aclose(self) -> None:
        """Close the pipes and the control socket: the supervisor gives the server its grace, then ends its tree."""
        await self._stdin.aclose()
        await self._stdout.aclose()
        self._close_control()


class Supervisor:
    """This kernel's supervisor process and the socket to it (one per process: :func:`shared`)."""

    def __init__(self) -> None:
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: v for k in KEPT if (v := os.environ.get(k)) is not None}
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-S", "-I", SCRIPT],
                stdin=theirs,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # an interrupt to our process group must not reach it
            )
        except OSError as exc:
            self._sock.close()
            raise SupervisorError(f"cannot start the server supervisor: {exc}") from exc
        finally:
            theirs.close()
        self.owner = os.getpid()

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None and self._sock.fileno() >= 0

    def close(self) -> None:
        """Let go of the supervisor: it gives what it runs their grace, ends it and exits."""
        self._sock.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(0)

    async def start(self, argv: Sequence[str], env: Mapping[str, str], cwd: str | None, stderr: int) -> SupervisedProcess:
        """Start ``argv`` under the supervisor with fresh stdin/stdout pipes and ``stderr`` (a file descriptor)."""
        loop = asyncio.get_running_loop()
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(self._sock, [b"S"], [in_r, out_w, stderr, theirs.fileno()])
        except OSError as exc:
            for fd in (in_w, out_r):
                os.close(fd)
            mine.close()
            raise SupervisorError(f"the server supervisor is gone: {exc}") from exc
        finally:
            for fd in (in_r, out_w):
                os.close(fd)
            theirs.close()
        try:
            mine.setblocking(False)
            items = [cwd or "", str(len(argv)), *argv, *(f"{k}={v}" for k, v in env.items())]
            body = encode(items)
            await loop.sock_sendall(mine, b"%d:" % len(body) + body)
            pid, rest = await asyncio.wait_for(_started(loop, mine), ANSWER_WAIT)
            reader = asyncio.StreamReader(limit=1 << 30)  # read(n) only: no line limit applies
            read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(out_r, "rb", 0))
            out_r = -1
            write_transport, protocol = await loop.connect_write_pipe(lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(in_w, "wb", 0))
            in_w = -1
            writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
            return SupervisedProcess(pid, mine, rest, _PipeSend(writer), _PipeReceive(reader, read_transport))
        except BaseException as exc:
            for fd in (in_w, out_r):
                if fd >= 0:
                    os.close(fd)
            mine.close()  # the supervisor ends what it started
            if isinstance(exc, asyncio.TimeoutError):
                raise SupervisorError(f"the server supervisor did not start {argv[0]!r} within {ANSWER_WAIT:.0f} s") from None
            raise


async def _started(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> tuple[int, bytes]:
    """The supervisor's ``P<pid>`` line, and whatever came after it."""
    got = b""
    while b"\n" not in got:
        chunk = await loop.sock_recv(sock, 4096)
        if not chunk:
            raise SupervisorError("the server supervisor ended before it started the server")
        got += chunk
    line, _, rest = got.partition(b"\n")
    if line[:1] != b"P" or not line[1:].isdigit():
        raise SupervisorError(f"the server supervisor said {line[:80]!r}")
    return int(line[1:]), rest


_shared: Supervisor | None = None
_starting = threading.Lock()  # sessions on two threads' loops share the one supervisor


def shared() -> Supervisor:
    """This process's supervisor, started on first use (and again should it have died)."""
    global _shared
    with _starting:
        if _shared is None or not _shared.alive():
            _shared = Supervisor()
        return _shared


def available() -> bool:
    """Does this system have what the supervisor needs (a child subreaper, /proc, fds over Unix sockets)?"""
    return sys.platform.startswith("linux") and hasattr(socket, "send_fds")

