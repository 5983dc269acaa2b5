"""A step of the session kernel's step socket run on this kernel's own shell, with no ZMQ in between (issue 28).

The socket's steps (cli/stepsocket.py) used to reach their own kernel as any Jupyter client
would: three ZMQ sockets to itself, a kernel_info round trip until IOPub was known to be
subscribed, every message signed, sent, routed and parsed on both sides — half of a warm step's
time in the kernel. Here the same execute_request, signed with the kernel's own key, is handed to
ipykernel's shell dispatch as if the shell socket had brought it (compat.submit_shell), so
everything a cell is stays as it was: one request at a time with every other client's (the shell's
lock, a queue behind a person's running cell), busy/idle, execute_input and the cell's output on
IOPub for any attached frontend, the session's record (as ``cli``), abort after an error. Only
where the step hears its cell changes: the cell's output and reply come here in-process (the
kernel's :meth:`~mcp_kernel.kernel.kernel.MCPKernel.finish_metadata` and ``do_execute`` tee them),
JSON-packed and unpacked as the wire would, into the same :class:`~mcp_kernel.client.result.Collector`
the ZMQ client uses. The reply's shell message goes to an identity no socket has, and ZMQ drops it.

A :class:`Direct` is a ``Channel`` (client/kernel_session.py): KernelSession's lock, timeouts and
interrupts are the same as for a ZMQ connection. Interrupts and timeouts follow client/wire.py:
the interrupt reaches the engine only once this step's cell began (until then the shell runs
another client's cell, which must not be stopped).
"""

from __future__ import annotations

import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from .. import compat
from ..client.result import NO_DATA, Collector, StepResult
from ..client.stopping import INTERRUPT, WAIT, StopClock
from ..client.wire import OnOutput, StepOptions, header, new_id, step_metadata, step_request

if TYPE_CHECKING:
    from .kernel import MCPKernel
    from .parent_output import Tee
    from .recording import Recording

#: The routing identity of a direct step's request: no peer of the shell socket has it, so its reply is dropped.
IDENT = b"mcp2repl-step-socket"
POLL = 0.05

_running: list[MCPKernel] = []  # the kernel of this process once its loop runs (MCPKernel._boot)


def started(kernel: MCPKernel) -> None:
    """The kernel's shell loop runs: steps can be handed to it from now on."""
    _running[:] = [kernel]


def channel() -> Direct | None:
    """A channel to this process's kernel, or None before its loop runs (the step then takes the ZMQ path)."""
    return Direct(_running[0]) if _running else None


class Heard:
    """What the kernel tells one direct step, in order, from its loop: began, each output, the reply, done."""

    def __init__(self) -> None:
        self.events: queue.SimpleQueue[tuple[str, Any, Any]] = queue.SimpleQueue()

    def began(self) -> None:
        self.events.put(("began", None, None))

    def output(self, msg_type: str, content: dict[str, Any]) -> None:
        self.events.put(("output", msg_type, content))

    def reply(self, content: dict[str, Any], metadata: dict[str, Any]) -> None:
        self.events.put(("reply", content, metadata))

    def done(self, _: object = None) -> None:
        self.events.put(("done", None, None))


def _heard(kernel: MCPKernel, parent: dict[str, Any]) -> Heard | None:
    return kernel.direct_steps.get(str(parent.get("header", {}).get("msg_id", "")))


def _as_sent(kernel: MCPKernel, part: dict[str, Any]) -> Any:
    """A message part as the wire brings it (packed and unpacked: lists for tuples, dates as text…)."""
    return kernel.session.unpack(kernel.session.pack(part))


def tee(kernel: MCPKernel, parent: dict[str, Any], recording: Recording | None) -> Tee | None:
    """Who hears a cell's output besides IOPub (parent_output.py): the record, and the direct step that sent it."""
    own = recording.output if recording else None
    if (heard := _heard(kernel, parent)) is None:
        return own
    heard.began()

    def both(key: str, msg_type: str, content: dict[str, Any]) -> None:
        if own is not None:
            own(key, msg_type, content)
        heard.output(msg_type, _as_sent(kernel, content))

    return both


def replied(kernel: MCPKernel, parent: dict[str, Any], content: dict[str, Any], metadata: dict[str, Any]) -> None:
    """A cell's reply (kernel.finish_metadata, also for an aborted request), to the direct step that sent it."""
    if (heard := _heard(kernel, parent)) is not None:
        heard.reply(_as_sent(kernel, content), _as_sent(kernel, metadata))


class Direct:
    """Steps on this process's kernel, through its shell dispatch (see the module's docstring)."""

    def __init__(self, kernel: MCPKernel) -> None:
        self.kernel = kernel
        self.session = new_id()
        self.client = "step-api"  # what the session's record names this client (KernelSession sets it)
        self.interrupt_requested = threading.Event()

    def interrupt(self) -> None:
        """Ask the running step to stop (thread-safe: the waiting step interrupts the engine once its cell began)."""
        self.interrupt_requested.set()

    def close(self) -> None:
        """Nothing is held between steps."""

    def execute(
        self, code: str, timeout: float | None = None, on_output: OnOutput | None = None, data: Any = NO_DATA, options: StepOptions | None = None
    ) -> StepResult:
        """Run one step as client/wire.py's ``KernelConnection.execute`` does, on this kernel's shell."""
        started_at = time.monotonic()
        self.interrupt_requested.clear()
        kernel = self.kernel
        options = StepOptions(timeout, options.max_output_chars if options else None, bool(options and options.trace))
        head = header(self.session, "execute_request")
        msg = kernel.session.msg("execute_request", step_request(code), header=head, metadata=step_metadata(data, options, self.client))
        heard = Heard()
        kernel.direct_steps[head["msg_id"]] = heard
        got = Collector()
        got.result.traced = options.trace
        began = replied = False
        clock = StopClock(started_at, timeout, self.interrupt_requested)
        try:
            compat.submit_shell(kernel, kernel.session.serialize(msg, ident=IDENT)).add_done_callback(heard.done)
            while True:
                try:
                    kind, first, second = heard.events.get(timeout=POLL)
                except queue.Empty:
                    kind = ""
                if kind == "began":
                    began = True
                elif kind == "output":
                    got.iopub(first, second)
                    if on_output is not None:
                        on_output(first, second)
                elif kind == "reply":
                    got.reply(first, second)
                    replied = True
                elif kind == "done":
                    if not replied:  # dispatch ended without a reply: the request could not be read
                        got.reply({"status": "aborted"}, {})
                    break
                act = clock.tick(time.monotonic(), began or replied)
                if act is INTERRUPT:
                    kernel.shell_session.interrupt()
                elif act is not WAIT:  # a StepError: stop waiting
                    got.result.error = act
                    break
        finally:
            kernel.direct_steps.pop(head["msg_id"], None)
        result = got.finish((time.monotonic() - started_at) * 1000)
        return clock.outcome(result)

