"""A small Jupyter client over ZMQ: just what a step needs, signed as the messaging spec says.

Why not jupyter_client: importing it costs ~0.3 s and its blocking client hops through threads,
while a warm step from the shell has a 100 ms budget and a step from Python 5 ms. The protocol a
step uses is small — execute, interrupt, kernel_info, shutdown, and the IOPub stream of one
request — so it is spoken here directly with pyzmq (which jupyter_client itself uses).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import zmq

from .result import NO_DATA, Collector, StepResult
from .stopping import INTERRUPT, WAIT, StopClock
from .trust import SCHEME

DELIM = b"<IDS|MSG>"
#: Sees each IOPub message of a step as it comes: (msg_type, content).
OnOutput = Callable[[str, dict[str, Any]], None]
PROTOCOL = "5.3"


def new_id() -> str:
    """A random message or session id, 32 hex digits like ``uuid4().hex``: uuid and datetime are
    imports a warm step from the shell would pay for on every step, for one id and one date."""
    return os.urandom(16).hex()


def _utc_now() -> str:
    """Now in ISO 8601, UTC, with microseconds (as ``datetime.now(UTC).isoformat()`` writes it)."""
    now = time.time()
    whole = int(now)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((now - whole) * 1e6):06d}+00:00"


def header(session: str, msg_type: str) -> dict[str, Any]:
    """A Jupyter message header (the same for the ZMQ wire and the gateway's websocket)."""
    return {
        "msg_id": new_id(),
        "session": session,
        "username": os.environ.get("USER", "mcp2repl"),
        "date": _utc_now(),
        "msg_type": msg_type,
        "version": PROTOCOL,
    }


def step_request(code: str) -> dict[str, Any]:
    """The execute_request content of one step: kept in history, never asking for stdin, never aborting later steps."""
    return {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False, "stop_on_error": False}
def step_metadata(data: Any = NO_DATA, options: StepOptions | None = None, client: str = "step-api") -> dict[str, Any]:
    """The execute_request metadata of a step (kernel/steps.py): the value comes back as data; ``data``
    is bound for the step; the step's own time and output limits, and whether it wants its call trace;
    ``client`` is who the session's record says stepped it (cli, step-api, serve)."""
    own: dict[str, Any] = {"value": True, "client": client}
    if data is not NO_DATA:
        own["data"] = data
    if options is not None:
        own.update(options.metadata())
    return {"mcp2repl": own}


@dataclass
class StepOptions:
    """What one step asks beyond its code: limits of its own (the session's otherwise) and its trace."""

    timeout: float | None = None
    max_output_chars: int | None = None
    trace: bool = False

    def metadata(self) -> dict[str, Any]:
        own: dict[str, Any] = {"trace": True} if self.trace else {}
        if self.timeout:
            own["timeout"] = self.timeout
        if self.max_output_chars:
            own["max_output_chars"] = self.max_output_chars
        return own


POLL_MS = 50


class KernelDied(RuntimeError):
    """The kernel process went away while a request waited for it."""


class KernelConnection:
    """Shell, control and IOPub sockets to one kernel, from its connection info."""

    def __init__(self, info: dict[str, Any], alive: Callable[[], bool] = lambda: True) -> None:
        self.info = info
        self.alive = alive
        # Every message is verified (_recv): with no key, anything on the port could answer for the kernel.
        self.key = str(info.get("key") or "").encode()
        if not self.key:
            raise ValueError("the connection info has no key: messages could not be verified")
        if info.get("signature_scheme", SCHEME) != SCHEME:
            raise ValueError(f"the connection info signs with {info.get('signature_scheme')!r}, not {SCHEME}")
        self.session = new_id()
        self.ctx = zmq.Context.instance()
        url = f"{info.get('transport', 'tcp')}://{info['ip']}:"
        self.shell = self._socket(zmq.DEALER, url + str(info["shell_port"]))
        self.control = self._socket(zmq.DEALER, url + str(info["control_port"]))
        self.iopub = self._socket(zmq.SUB, url + str(info["iopub_port"]))
        self.iopub.setsockopt(zmq.SUBSCRIBE, b"")
        self.poller = zmq.Poller()
        self.poller.register(self.shell, zmq.POLLIN)
        self.poller.register(self.iopub, zmq.POLLIN)
        self._subscribed = False
        self.interrupt_requested = threading.Event()
        self.client = "step-api"  # what the session's record names this client (KernelSession sets it)

    def _socket(self, kind: int, url: str) -> zmq.Socket:
        sock = self.ctx.socket(kind)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(url)
        return sock

    def close(self) -> None:
        for sock in (self.shell, self.control, self.iopub):
            sock.close(0)

    # ---- messages -------------------------------------------------------------------------------

    def _sign(self, parts: list[bytes]) -> bytes:
        mac = hmac.new(self.key, digestmod=hashlib.sha256)
        for part in parts:
            mac.update(part)
        return mac.hexdigest().encode()

    def send(self, sock: zmq.Socket, msg_type: str, content: dict[str, Any], metadata: dict[str, Any] | None = None) -> str:
        head = header(self.session, msg_type)
        parts = [json.dumps(p).encode() for p in (head, {}, metadata or {}, content)]
        sock.send_multipart([DELIM, self._sign(parts), *parts])
        return str(head["msg_id"])

    def _recv(self, sock: zmq.Socket) -> dict[str, Any] | None:
        frames = sock.recv_multipart()
        try:
            at = frames.index(DELIM)
        except ValueError:
            return None
        sig, *parts = frames[at + 1 : at + 6]
        if len(parts) != 4 or not hmac.compare_digest(sig, self._sign(parts)):
            return None  # unsigned, or not signed with this kernel's key: dropped, as jupyter_client refuses it
        try:
            header, parent, metadata, content = (json.loads(p) for p in parts)
        except ValueError:
            return None
        if not all(isinstance(p, dict) for p in (header, parent, metadata, content)):
            return None
        return {"header": header, "parent_header": parent, "metadata": metadata, "content": content, "msg_type": header.get("msg_type")}

    # ---- requests -------------------------------------------------------------------------------

    def wait_ready(self, timeout: float) -> dict[str, Any]:
        """kernel_info until IOPub is known to reach us too (XPUB's welcome, or the request's status)."""
        deadline = time.monotonic() + timeout
        while True:
            msg_id = self.send(self.shell, "kernel_info_request", {})
            reply = None
            step_end = min(deadline, time.monotonic() + 1.0)
            while time.monotonic() < step_end:
                for sock, _ in self.poller.poll(POLL_MS):
                    msg = self._recv(sock)
                    if msg is None:
                        continue
                    if sock is self.iopub and (msg["msg_type"] == "iopub_welcome" or msg["parent_header"].get("msg_id") == msg_id):
                        self._subscribed = True
                    elif sock is self.shell and msg["parent_header"].get("msg_id") == msg_id:
                        reply = msg["content"]
                if reply is not None and self._subscribed:
                    return reply
                if not self.alive():
                    raise KernelDied("the kernel process ended while starting")
            if time.monotonic() >= deadline:
                raise TimeoutError(f"the kernel did not answer within {timeout:g} s")

    def kernel_info(self, timeout: float = 5.0) -> dict[str, Any] | None:
        """The kernel's info (served even while a cell runs), or None when it does not answer in time."""
        msg_id = self.send(self.shell, "kernel_info_request", {})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.shell.poll(POLL_MS):
                msg = self._recv(self.shell)
                if msg and msg["parent_header"].get("msg_id") == msg_id:
                    return msg["content"]
        return None

    def interrupt(self) -> None:
        """Ask the running step to stop (thread-safe: the step's own loop sends the request)."""
        self.interrupt_requested.set()

    def shutdown(self, timeout: float = 3.0) -> bool:
        msg_id = self.send(self.control, "shutdown_request", {"restart": False})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.control.poll(POLL_MS):
                msg = self._recv(self.control)
                if msg and msg["parent_header"].get("msg_id") == msg_id:
                    return True
        return False

    def execute(
        self, code: str, timeout: float | None = None, on_output: OnOutput | None = None, data: Any = NO_DATA, options: StepOptions | None = None
    ) -> StepResult:
        """Run one step; ``timeout`` is its time limit (TimeoutError); :meth:`interrupt` stops it (InterruptError).

        ``data`` (any JSON) is the step's global ``data``; ``on_output`` sees each IOPub message as it comes;
        ``options`` the step's own output limit and whether it wants its call trace.
        """
        started = time.monotonic()
        if not self._subscribed:
            self.wait_ready(30)
        self.interrupt_requested.clear()
        options = StepOptions(timeout, options.max_output_chars if options else None, bool(options and options.trace))
        msg_id = self.send(self.shell, "execute_request", step_request(code), step_metadata(data, options, self.client))
        got = Collector()
        got.result.traced = options.trace
        replied = idle = False
        began = False  # the step runs: the kernel's IOPub speaks of it (see StopClock)
        clock = StopClock(started, timeout, self.interrupt_requested)
        quiet_since = time.monotonic()
        while not (replied and idle):
            events = self.poller.poll(POLL_MS)
            for sock, _ in events:
                msg = self._recv(sock)
                if msg is None or msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if sock is self.shell:
                    got.reply(msg["content"], msg["metadata"])
                    replied = True
                elif msg["msg_type"] == "status":
                    idle = msg["content"].get("execution_state") == "idle"
                    began = True
                else:
                    began = True
                    got.iopub(msg["msg_type"], msg["content"])
                    if on_output is not None:
                        on_output(msg["msg_type"], msg["content"])
            now = time.monotonic()
            if events:
                quiet_since = now
            act = clock.tick(now, began or replied)
            if act is INTERRUPT:
                self.send(self.control, "interrupt_request", {})
            elif act is not WAIT:  # a StepError: stop waiting
                got.result.error = act
                break
            if now - quiet_since > 0.5:
                quiet_since = now
                if not self.alive():
                    raise KernelDied("the kernel process ended during the step")
        result = got.finish((time.monotonic() - started) * 1000)
        return clock.outcome(result)
