"""Our stdio transport: the server runs under the supervisor, stdout is split into lines in linear time.

It yields ``(read_stream, write_stream)`` as the SDK's ``stdio_client`` does, so ``ClientSession``
is unchanged; they are not memory streams fed by reader and writer tasks but read stdout and write
stdin from the task that receives or sends (one task hand-off less each way, on every call). Why
not the SDK's:

* its reader does ``(buffer + chunk).split("\\n")`` for every chunk, so one message of n bytes
  costs O(n²) (a 50 MB result: ~20 s instead of ~0.1 s); here chunks are appended to a bytearray
  and only new data is searched for the newline, and each line is parsed once, then validated (a
  big one from its text, its bytes let go of first), holding a big result as few times as it can;
* the server runs under the kernel's supervisor (supervisor.py; elsewhere than Linux, its own
  ``guard.py``), which takes the server's whole process tree down with it (servers that ignore
  SIGTERM or stdin's end, ``setsid`` daemons) and when the kernel dies;
* a line that is not an MCP message (a server printing to stdout) is logged and counted instead
  of being handed to the session, invalid UTF-8 included, and answers to request ids that were
  never sent are counted: :class:`StdioStatus` keeps what went wrong, with the exit status and
  the start of this run's stderr, so a failure can say why;
* where the protocol is plainly broken (an answer to an id never sent, an answer that is not
  JSON-RPC, junk and then silence) the requests waiting fail at once (:mod:`.answers`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic_core import from_json

from ..compat import send_now
from .answers import Answers
from .limits import shorten
from .spawn import STOP_WAIT, Launch, Spawned, spawn, stop, wait_exit

#: Bytes asked for per read of stdout.
CHUNK = 1 << 20
#: Lines this long are decoded, let go of, and parsed by ``json``: a 59 MB line held while
#: ``from_json`` builds its 50 MB string took 3.2x the payload at the peak, this way 2.3x.
BIG_LINE = 1 << 20
#: Junk lines written to the server's log in full; later ones are only counted.
LOGGED_JUNK = 20

# the stream types the SDK takes; _StdoutReader and _StdinWriter serve as them
ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


def max_message_bytes() -> int:
    """The largest message accepted (``MCP2REPL_MAX_MESSAGE_MB``, default 512): a bound on memory, not on results."""
    return int(float(os.environ.get("MCP2REPL_MAX_MESSAGE_MB", "512")) * 1024 * 1024)


@dataclass
class StdioStatus:
    """What the transport saw of its server process, for messages that say why a server failed."""

    log_path: Path | None = None
    who: str = "the server"  # in messages: 'MCP server "x"'
    stderr_start: int = 0  # size of the log when this run started: its stderr comes after
    pid: int | None = None
    returncode: int | None = None
    junk_lines: int = 0
    last_junk: str = ""
    stray_ids: list[str] = field(default_factory=list)
    oversize: int | None = None  # the cap, when a message went past it
    leaving: bool = False  # the kernel is leaving: closing stdin is all, the supervisor finishes the stop (spawn.stop)

    def exit_text(self) -> str | None:
        """``exited with status 3`` / ``was killed by SIGKILL``, once the process has ended."""
        code = self.returncode
        if code is None:
            return None
        if code >= 0:
            return f"exited with status {code}"
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"

    def stdout_text(self) -> str | None:
        """What was wrong with the server's stdout, if anything (junk, answers to unknown ids, a huge message)."""
        parts = []
        if self.oversize is not None:
            parts.append(f"it sent a message over {self.oversize // (1024 * 1024)} MB (MCP2REPL_MAX_MESSAGE_MB)")
        if self.stray_ids:
            ids = ", ".join(self.stray_ids[:3]) + (", …" if len(self.stray_ids) > 3 else "")
            one = len(self.stray_ids) == 1
            parts.append(f"it answered request id{'' if one else 's'} {ids}, which {'was' if one else 'were'} never sent (a server replying with the wrong id?)")
        if self.junk_lines:
            lines = "a line" if self.junk_lines == 1 else f"{self.junk_lines:,} lines"
            parts.append(f"it wrote {lines} to stdout that are not MCP messages, the last: {json.dumps(self.last_junk[:120])}")
        return "; ".join(parts) or None

    def stderr_tail(self, lines: int = 3, width: int = 300) -> list[str]:
        """The last ``lines`` non-empty lines this run wrote to stderr, each at most ``width`` characters."""
        if self.log_path is None:
            return []
        try:
            with open(self.log_path, "rb") as fh:
                end = fh.seek(0, os.SEEK_END)
                fh.seek(max(self.stderr_start, end - 64 * 1024))
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return []
        kept = [line.rstrip() for line in text.splitlines() if line.strip() and not line.startswith("[mcp2repl] ")]
        return [shorten(line, width) for line in kept[-lines:]]


class _Lines:
    """Splits stdout into lines in linear time: each byte is copied once and searched once."""

    def __init__(self, limit: int) -> None:
        self.partial = bytearray()
        self.limit = limit

    def feed(self, chunk: bytes) -> list[bytes | bytearray]:
        """The lines completed by ``chunk`` (without their newline); raises OverflowError past the limit."""
        lines: list[bytes | bytearray] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if self.partial:
                self.partial += chunk[start:end]
                lines.append(self.partial)
                self.partial = bytearray()
            else:
                lines.append(chunk[start:end])
            start = end + 1
        if start < len(chunk):
            self.partial += chunk[start:] if start else chunk
            if len(self.partial) > self.limit:
                raise OverflowError
        return lines


class _StdoutReader:
    """The session's read stream: the task receiving a message reads it from the server's stdout itself.

    The usual shape (a reader task and a memory stream) costs every answer a hand-off between two
    tasks. Lines are split as they come (:class:`_Lines`) and each is parsed only when the session
    asks for the next message, so a big result is held once, by the session. The stream ends at
    the server's end-of-file (once its exit status is known), when a line is over the size limit
    (the rest of stdout is drained, so a server blocked writing can still exit), or when the server
    can no longer be written to.
    """

    def __init__(
        self,
        stdout: anyio.abc.ByteReceiveStream,
        parse: Callable[[bytes | bytearray], SessionMessage | None],
        gone: Callable[[], Awaitable[None]],
        oversize: Callable[[int], None],
        tg: anyio.abc.TaskGroup,
        answers: Answers,
    ) -> None:
        self._stdout = stdout
        self._parse = parse
        self._answers = answers  # errors for requests the server will not answer come first
        self._gone = gone  # the server closed stdout: learn how it went away before the session hears of it
        self._oversize = oversize
        self._tg = tg
        self._limit = max_message_bytes()
        self._lines = _Lines(self._limit)
        self._complete: list[bytes | bytearray] = []
        self._big: SessionMessage | None = None  # the last big answer handed over (see receive)
        self._ended = False
        self._receiving = False  # a receive waits on stdout

    def __aiter__(self) -> _StdoutReader:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def receive(self) -> SessionMessage:
        if self._big is not None:
            # The SDK's read loop keeps the last message it read in a variable until the next one
            # comes: a big answer (routed to its caller by now) would outlive its use by a whole
            # call, its text beside the copy the caller made of it. What it refers to goes now.
            self._big.message = types.JSONRPCResponse(jsonrpc="2.0", id=self._big.message.id, result={})
            self._big = None
        answers = self._answers
        while True:
            while self._complete or answers.failures:
                if answers.failures:
                    return answers.failures.pop(0)
                big = len(self._complete[-1]) >= BIG_LINE
                message = self._parse(self._complete.pop())  # parse holds the only reference: it may let go
                if message is not None:
                    if big and isinstance(message.message, types.JSONRPCResponse):
                        self._big = message
                    return message
            if self._ended:
                raise anyio.EndOfStream
            self._receiving = True
            chunk: bytes | None = b""
            try:
                if answers.deadline is None:  # (no cancel scope on the hot path)
                    chunk = await self._stdout.receive(CHUNK)
                else:  # after a junk line, wait only until its grace ends (then the requests waiting fail)
                    with anyio.move_on_after(max(0.0, answers.deadline - time.monotonic())):
                        chunk = await self._stdout.receive(CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                chunk = None
            finally:
                self._receiving = False
            if chunk == b"":
                answers.expire()
                continue
            if chunk is None:
                if not self._ended:
                    self._ended = True
                    await self._gone()
                raise anyio.EndOfStream
            try:
                complete = self._lines.feed(chunk)
            except OverflowError:
                self._oversize(self._limit)
                self._ended = True
                self._tg.start_soon(self.drain)
                raise anyio.EndOfStream from None
            complete.reverse()  # popped one by one: a parsed line is dropped as soon as its message goes
            self._complete = complete

    async def drain(self) -> None:
        """Read what the server still writes, to its end: a server blocked on a full pipe can then exit,
        and the pipe closes with it. Only when the session is not receiving (one reader at a time)."""
        if self._receiving:
            return
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError, RuntimeError):
            while True:
                await self._stdout.receive(CHUNK)

    async def end(self) -> None:
        """The server cannot be written to: the session sees the end at once (a waiting receive too)."""
        self.close()
        await self._stdout.aclose()

    def close(self) -> None:
        self._ended = True
        self._complete = []

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> _StdoutReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class _StdinWriter:
    """The session's write stream: each message goes straight to the server's stdin, from the task sending it.

    The usual shape (a memory stream and a writer task) costs every request a hand-off to that task.
    Here the line is written whole by one synchronous ``write`` before any wait, so concurrent senders
    never interleave and a cancelled sender never leaves half a message. If the server cannot be
    written to, the session is made to see the end (as when its stdout closes) and this message is
    dropped, as the writer task dropped it; later sends fail as a closed stream's do.
    """

    def __init__(self, stdin: anyio.abc.ByteSendStream, answers: Answers, reader: _StdoutReader) -> None:
        self._stdin = stdin
        self._answers = answers
        self._reader = reader
        self._closed = False

    async def send(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.BrokenResourceError
        message = item.message
        if isinstance(message, types.JSONRPCRequest):
            self._answers.sent(message.id)
        data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        try:
            await send_now(self._stdin, data)  # raises if the write failed, at once
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            self._closed = True
            await self._reader.end()  # the server cannot read: make the session see the end

    def close(self) -> None:
        self._closed = True

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> _StdinWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closed = True


@contextlib.asynccontextmanager
async def stdio_transport(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    log_path: Path | None = None,
    status: StdioStatus | None = None,
    spawned: Spawned | None = None,
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """Start ``command`` under the supervisor (or take ``spawned``, started early) and exchange newline-delimited JSON-RPC with it.

    The server's stderr goes to ``log_path`` (appended), or nowhere. ``status`` is filled in as
    things happen. Leaving the context closes stdin, waits :data:`EOF_GRACE` s, then has the
    supervisor end the whole tree (SIGTERM, SIGKILL after its grace); every wait is bounded and the
    shutdown is shielded from cancellation, so no process outlives the context.
    """
    status = status if status is not None else StdioStatus()
    status.log_path = log_path
    if spawned is None:
        spawned = await spawn(Launch(command, tuple(args), tuple((env if env is not None else os.environ).items()), None if cwd is None else str(cwd), log_path))
    process, status.stderr_start = spawned.process, spawned.stderr_start
    status.pid = process.pid
    answers = Answers(status.who, status.stray_ids)
    closing = False

    def junk(line: bytes | bytearray) -> None:
        text = bytes(line).decode("utf-8", "replace").strip()
        status.junk_lines += 1
        status.last_junk = text[:300]
        if status.junk_lines <= LOGGED_JUNK and log_path is not None:
            with contextlib.suppress(OSError), open(log_path, "a", encoding="utf-8") as fh:
                fh.write(f"[mcp2repl] not an MCP message on stdout: {shorten(text, 300)}\n")

    def parse(line: bytes | bytearray) -> SessionMessage | None:
        if not line or line.isspace():  # (strip() would copy a bytearray, a long line whole)
            return None
        value: Any = None
        try:
            if len(line) < BIG_LINE:
                value = from_json(line)
            else:  # the text of a big line alone, while the values are made: see BIG_LINE
                text = line.decode("utf-8")
                line = text[:300].encode()  # enough to log, if it is not JSON-RPC after all
                value = json.loads(text)
                del text
            # Parsed first, then validated: validating the JSON text against the message union
            # builds the values once per member tried, which for a 50 MB result took 4.4x the
            # payload more memory (and twice the time) than parsing once and validating that.
            message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
        except ValueError:  # not JSON, not UTF-8, not JSON-RPC (pydantic's ValidationError)
            if not answers.invalid(value, bytes(line[:300]).decode("utf-8", "replace").strip()):
                junk(line)
            return None
        # an answer nobody waits for (a wrong id: the requests waiting failed; or one given up on) is dropped
        return SessionMessage(message) if answers.valid(message) else None

    async def gone() -> None:
        if not closing:
            await wait_exit(process, STOP_WAIT)
            status.returncode = process.returncode

    def oversize(limit: int) -> None:
        status.oversize = limit  # the session sees the end; the connection says why

    assert process.stdin is not None and process.stdout is not None
    # no awaits before the task group: a cancellation in the gap would leak the process
    async with anyio.create_task_group() as tg:
        reader = _StdoutReader(process.stdout, parse, gone, oversize, tg, answers)
        writer = _StdinWriter(process.stdin, answers, reader)
        try:
            yield reader, writer  # type: ignore[misc]
        finally:
            closing = True
            with anyio.CancelScope(shield=True):
                reader.close()
                writer.close()
                tg.start_soon(reader.drain)  # as the server stops, what it still writes is read
                await stop(process, wait=not status.leaving)
                if status.returncode is None:
                    status.returncode = process.returncode
            tg.cancel_scope.cancel()
