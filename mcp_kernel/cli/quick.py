"""The fast client of a warm step: ``mcp2repl --session NAME -e CODE|- [--json] [--trace] [--timeout S]``.

Each step of an agent pays the client's start-up: importing the ZMQ client, checking the session's
files, a kernel_info round trip cost ~150 ms a step, 7x a bare ``python -c pass``. The session's
kernel listens on ``.mcp2repl/sessions/NAME.sock`` (cli/stepsocket.py) and runs the step there
through the same code (cli/served.py), so this client only recognises the command line, checks
the socket and its peer, sends one line and prints the answer. It imports socket, os, sys and
json, nothing of mcp2repl. Whenever anything is not as expected (other options, no socket, a
file or link or another user's socket in its place, a peer that is not the session's kernel) it
answers None and the command runs the usual way, which says what is wrong, if anything is.
``MCP2REPL_STEP_SOCKET=0`` always takes the usual way (to compare the two).
"""

from __future__ import annotations

import _signal  # signal.py imports enum: the handler needs none of it
import _socket  # socket.py imports enum, selectors…: 5-20 ms a step; the connection needs none of it
import os
import stat
import sys
from _collections_abc import Callable, Iterator  # loaded by os already (collections.abc imports collections)

#: Flags that take a value, and flags that do not, of the commands served through the socket.
VALUED = {"--session", "-e", "--eval", "--timeout"}
FLAGS = {"--json", "--trace"}
#: The framing's version: the first field of every request (a kernel of another version falls back).
VERSION = b"mcp2repl-step-1"


def pack(fields: list[bytes]) -> bytes:
    """Netstrings (``LEN:BYTES``): json costs the client ``re`` and ``enum`` (10-40 ms a step)."""
    return b"".join(b"%d:%s" % (len(field), field) for field in fields)


def netstrings(read: Callable[[int], bytes], limit: int) -> Iterator[bytes]:
    """The netstrings ``read`` (as ``recv``: b"" at the end) brings, until it ends or one is malformed or past ``limit``."""
    buf, pos = bytearray(), 0
    while True:
        colon = buf.find(b":", pos)
        if colon < 0:
            if len(buf) - pos > 20:
                return
        else:
            head = bytes(buf[pos:colon])
            if not head.isdigit() or int(head) > limit:
                return
            end = colon + 1 + int(head)
            if len(buf) >= end:
                yield bytes(buf[colon + 1 : end])
                pos = end
                continue
        more = read(65536)
        if not more:
            return
        buf += more


def unpack(read: Callable[[int], bytes], count: int, limit: int) -> list[bytes] | None:
    """``count`` netstrings from ``read``, or None if cut short, malformed or past ``limit``."""
    fields = []
    for field in netstrings(read, limit):
        fields.append(field)
        if len(fields) == count:
            return fields
    return None


def request(argv: list[str], cwd: str, stdin: bytes | None, env: dict[str, str]) -> bytes:
    """One step's request, as cli/stepsocket.py reads it: one netstring (read whole, then split) of the version,
    the working folder, stdin (whether given, and what), argv and the MCP2REPL_* environment."""
    pairs = [os.fsencode(f"{k}={v}") for k, v in env.items() if k.startswith("MCP2REPL_")]
    head = [VERSION, os.fsencode(cwd), b"%d" % (stdin is not None), stdin or b"", b"%d" % len(argv), b"%d" % len(pairs)]
    return pack([pack(head + [os.fsencode(a) for a in argv] + pairs)])


def recognised(argv: list[str]) -> str | None:
    """The session a plain step names (None: not a plain step; the parser will read it the usual way)."""
    name, evals, i = None, 0, 0
    while i < len(argv):
        arg = argv[i]
        if arg in FLAGS:
            i += 1
            continue
        if arg not in VALUED or i + 1 >= len(argv):
            return None
        value = argv[i + 1]
        if value.startswith("-") and value != "-":
            return None  # what the parser makes of it is its business
        if arg == "--session":
            if name is not None:
                return None
            name = value
        evals += arg in ("-e", "--eval")
        i += 2
    return name if name and evals else None


def _private(path: str, kind: int) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _recorded_pid(path: str) -> int | None:
    """The kernel's pid in the session's record (``"pid": N``, as registry.py writes it with json.dumps)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(65536)
    except OSError:
        return None
    _, sep, rest = text.partition(b'"pid": ')
    digits = rest[: len(rest) - len(rest.lstrip(b"0123456789"))]
    return int(digits) if sep and digits else None


def _connect(name: str) -> _socket.socket | None:
    """A connection to session ``name``'s own kernel, checked, or None."""
    if "/" in name or name.startswith("."):
        return None
    folder = os.path.join(os.getcwd(), ".mcp2repl", "sessions")
    path = os.path.join(folder, name + ".sock")
    if not (_private(folder, stat.S_IFDIR) and _private(path, stat.S_IFSOCK)):
        return None
    pid = _recorded_pid(os.path.join(folder, name + ".meta.json"))
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
        cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    except OSError:
        sock.close()
        return None
    peer_pid, uid = int.from_bytes(cred[0:4], sys.byteorder), int.from_bytes(cred[4:8], sys.byteorder)
    if uid != os.getuid() or peer_pid != pid:  # only the session's recorded kernel, running as this user
        sock.close()
        return None
    return sock


def run(argv: list[str]) -> int | None:
    """The step's exit status, its output printed; None: run the command the usual way."""
    name = recognised(argv)
    if name is None or not hasattr(_socket, "SO_PEERCRED") or os.environ.get("MCP2REPL_STEP_SOCKET") == "0":
        return None
    sock = _connect(name)
    if sock is None:
        return None
    stdin = None
    if any(argv[i] in ("-e", "--eval") and argv[i + 1] == "-" for i in range(len(argv) - 1)):
        stdin = sys.stdin.buffer.read()
    sent: list[bool] = []

    def hang_up(signum: int, frame: object) -> None:
        """Ctrl-C: once the request is out, close our side (the kernel interrupts the step, cli/stepsocket.py)
        and read the rest, so the step's own InterruptError is what is said; before, or a second time: leave."""
        if len(sent) != 1:
            raise KeyboardInterrupt
        sent.append(True)
        try:
            sock.shutdown(_socket.SHUT_WR)
        except OSError:
            pass

    previous = _signal.signal(_signal.SIGINT, hang_up)  # a handler, not KeyboardInterrupt: it can land anywhere
    try:
        try:
            sock.sendall(request(argv, os.getcwd(), stdin, dict(os.environ)))
        except ConnectionError:  # reset before the request was out: nothing ran
            reply = None
        else:
            sent.append(True)
            reply = _answer(sock)
    finally:
        _signal.signal(_signal.SIGINT, previous)
        sock.close()
    if reply is None:
        if stdin is not None:  # the usual way reads it again
            import io

            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    return reply


def _answer(sock: _socket.socket) -> int | None:
    """The step's output as it comes (frames ``o``/``e`` TEXT), then its status (``x`` N); None: ``f`` (fall back)
    or no answer. Ctrl-C closed our side (run's handler), which interrupts the step; the rest is still read."""

    fields, said = netstrings(sock.recv, 1 << 40), False
    try:
        for kind in fields:
            payload = next(fields, None)
            if payload is None or kind == b"f":
                break
            said = True
            if kind == b"x":
                return int(payload)
            stream = sys.stdout if kind == b"o" else sys.stderr
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
            stream.write(payload.decode("utf-8", "surrogatepass"))
            stream.flush()
    except ConnectionError:  # reset, as by a SIGKILLed kernel's socket, still queued: the same as its end
        pass
    if said:  # the step ran: never again the usual way
        sys.stderr.write("mcp2repl: error: the session's kernel closed the step's connection before its end (did it die?)\n")
        return 2
    return None
