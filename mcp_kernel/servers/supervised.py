"""The kernel's side of supervisor.py: one supervisor per kernel, and each server's process as anyio sees one.

A guard per server (guard.py) cost 9.7 MB of RSS each; one supervisor for all of a kernel's
servers costs that once. The kernel makes each server's pipes itself and hands them over, so the
server's stdin and stdout connect to the kernel exactly as before, and :class:`SupervisedProcess`
gives the stdio transport what anyio's process gave it. The protocol:

* the supervisor's stdin is a ``SOCK_SEQPACKET`` socket from the kernel; a start request is one
  byte on it with four file descriptors: the server's stdin (read end), its stdout (write end),
  its log (for stderr) and one end of a socket of the server's own, the *control* socket;
* on the control socket the kernel writes ``LENGTH:BODY`` (:func:`encode`: working folder, the
  number of arguments, the command, ``NAME=VALUE`` for its environment) and reads ``P<pid>`` once
  the server is forked (or ``F<message>`` if it could not be), then ``E<wait status>`` once the
  server and all it left behind are gone. It writes ``T`` (end the tree: SIGTERM, SIGKILL after
  the grace) or ``K`` (SIGKILL now); closing the control socket lets go of the server, which then
  gets its grace to exit by itself before its tree is ended; the kernel's end does that for all.

Linux only (the supervisor is a child subreaper and reads /proc); elsewhere spawn.py keeps a guard
per server. The event loop never waits on the supervisor: the sockets are non-blocking, the pipes
are asyncio's pipe transports, and an exit comes as a reader callback. Starting the supervisor
itself (a fork and exec, once per kernel) is the one thing done in place.
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

from . import proctable, supervisor

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

    def __init__(self, pid: int, boss: int, control: socket.socket, rest: bytes, stdin: _PipeSend, stdout: _PipeReceive) -> None:
        self._pid, self._boss, self._control, self._buffer = pid, boss, control, b""
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
        """SIGTERM and SIGKILL go to the tree, through the supervisor (the pid may be reaped, and reused, before the tree is gone)."""
        if sig == signal.SIGTERM:
            self.terminate()
        elif sig == signal.SIGKILL:
            self.kill()
        else:
            raise ValueError(f"only SIGTERM and SIGKILL reach a supervised server, not {sig}")

    async def force_end(self) -> None:
        """The supervisor does not answer: SIGKILL from here to every process that carries this server's mark."""
        mark = f"{proctable.MARK}={self._boss}:{self._pid}".encode()
        for pid in await asyncio.to_thread(proctable.carrying, mark):  # /proc reads, off the loop
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    async def aclose(self) -> None:
        """Close the pipes and the control socket: the supervisor gives the server its grace, then ends its tree."""
        await self._stdin.aclose()
        await self._stdout.aclose()
        self._close_control()


class Supervisor:
    """This kernel's supervisor process and the socket to it (one per process: :func:`shared`)."""

    def __init__(self) -> None:
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock.setblocking(False)
        env = {k: v for k in KEPT if (v := os.environ.get(k)) is not None}
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-S", "-I", SCRIPT],
                stdin=theirs,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd="/",  # it pins no folder; each server gets the kernel's at its start
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
        """Let go of the supervisor: it gives what it runs their grace, ends it and exits (subprocess reaps it)."""
        self._sock.close()

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
            why = "is not reading its requests" if isinstance(exc, BlockingIOError) else f"is gone ({exc})"
            raise SupervisorError(f"the server supervisor {why}") from exc
        finally:
            for fd in (in_r, out_w):
                os.close(fd)
            theirs.close()
        read_transport: asyncio.ReadTransport | None = None
        try:
            mine.setblocking(False)
            items = [cwd or os.getcwd(), str(len(argv)), *argv, *(f"{k}={v}" for k, v in env.items())]
            body = encode(items)
            await loop.sock_sendall(mine, b"%d:" % len(body) + body)
            pid, rest = await asyncio.wait_for(_started(loop, mine), ANSWER_WAIT)
            reader = asyncio.StreamReader()  # its limit (64 KiB) pauses the pipe past 128 KiB unread, as anyio's
            stdout, out_r = os.fdopen(out_r, "rb", 0), -1  # the file owns the fd now
            read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdout)
            stdin, in_w = os.fdopen(in_w, "wb", 0), -1
            write_transport, protocol = await loop.connect_write_pipe(lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), stdin)
            writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
            return SupervisedProcess(pid, self.process.pid, mine, rest, _PipeSend(writer), _PipeReceive(reader, read_transport))
        except BaseException as exc:
            for fd in (in_w, out_r):
                if fd >= 0:
                    os.close(fd)
            if read_transport is not None:
                read_transport.close()
            mine.close()  # the supervisor ends what it started
            if isinstance(exc, asyncio.TimeoutError):
                raise SupervisorError(f"the server supervisor did not start {argv[0]!r} within {ANSWER_WAIT:.0f} s") from None
            raise


async def _started(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> tuple[int, bytes]:
    """The supervisor's ``P<pid>`` line, and whatever came after it."""
    got = b""
    while b"\n" not in got:
        try:
            chunk = await loop.sock_recv(sock, 4096)
        except ConnectionResetError:  # it dropped the request: the fds did not all reach it
            raise SupervisorError("the server supervisor could not take the request (out of file descriptors?)") from None
        if not chunk:
            raise SupervisorError("the server supervisor ended before it started the server")
        got += chunk
    line, _, rest = got.partition(b"\n")
    if line[:1] == b"F":
        raise SupervisorError(line[1:].decode(errors="replace"))
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
            if _shared is not None:
                _shared.close()
            _shared = Supervisor()
        return _shared


def available() -> bool:
    """Does this system have what the supervisor needs (a child subreaper, /proc, fds over Unix sockets)?"""
    return sys.platform.startswith("linux") and hasattr(socket, "send_fds")

