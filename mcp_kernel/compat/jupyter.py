"""Private parts of ipykernel and jupyter_client."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

# ---- ipykernel -------------------------------------------------------------------------------


def skip_empty_flush(stream: Any) -> None:
    """Make ipykernel's per-request stdout/stderr flushes free when nothing was printed.

    Each flush is a round trip to the IOPub thread; the kernel calls four per cell, and JS
    output never goes through sys.stdout, so they were most of a trivial cell's latency.
    """
    buffers = getattr(stream, "_buffers", None)
    lock = getattr(stream, "_buffer_lock", None)
    if buffers is None or lock is None:
        return
    flush = stream.flush

    def flush_if_needed() -> None:
        with lock:
            pending = any(buf.tell() for buf in stream._buffers.values())
        if pending:
            flush()

    stream.flush = flush_if_needed


class FileIpFirst:
    """Mixin for ipykernel's ``IPKernelApp``: the connection file's ``ip`` without a scan of every interface.

    jupyter_client's ``load_connection_info`` reads ``info.get("ip", self._ip_default())``: the
    default is worked out even when the file names the ip, and that is ``localhost()``, which lists
    the machine's network interfaces with psutil (~1 MB of an idle kernel's memory, ~8 ms) to
    throw the answer away. Here the default is the file's ip when it has one; a file without one
    still gets jupyter_client's own default, scan and all.
    """

    _file_ip: str | None = None

    def load_connection_info(self, info: dict[str, Any]) -> None:
        ip = info.get("ip")
        self._file_ip = ip if isinstance(ip, str) else None
        super().load_connection_info(info)  # type: ignore[misc]

    def _ip_default(self) -> str:
        return self._file_ip if self._file_ip is not None else super()._ip_default()  # type: ignore[misc]


def end_kernel_process(app: Any) -> None:
    """End a kernel process whose event loop stopped (a shutdown request): output sent, no teardown race.

    ipykernel's own exit (``IPKernelApp.close``, an ``atexit`` handler) stops the IOPub thread and
    closes every thread's wake-up socket while the control thread may still be publishing the
    shutdown request's "idle": that thread saw IOPub alive an instant before, sends on a closed
    socket, and tornado prints a ``ZMQError: Socket operation on non-socket`` traceback (or libzmq
    aborts on a signaler assertion) into the output of whoever started the kernel. Seen in 4 of 54
    ``mcp2repl run`` exits on a loaded machine. So the control thread is stopped first, then IOPub
    (which sends what it holds), then the other ``atexit`` handlers run (the run folder, a
    connection file the kernel wrote itself), and the process leaves without closing sockets one
    by one: nothing is left to send, and the kernel's own state was closed by ``do_shutdown``.
    """
    from .interpreter import exit_now

    atexit.unregister(app.close)
    for thread in (getattr(app, "control_thread", None), getattr(app, "shell_channel_thread", None)):
        if thread is not None and thread.is_alive():
            thread.stop()
            thread.join(timeout=5)
    iopub = getattr(app, "iopub_thread", None)
    if iopub is not None:
        atexit.unregister(iopub.stop)
        with contextlib.suppress(Exception):  # a stuck IOPub thread (TimeoutError): leave anyway
            iopub.stop()
    exit_now(0, (sys.__stdout__, sys.__stderr__))  # ipykernel's own streams go to IOPub, stopped by now


def shell_busy(kernel: Any) -> bool:
    """Is a shell request (a cell) being handled right now? ipykernel serialises them with a private lock."""
    lock = getattr(kernel, "_main_asyncio_lock", None)
    return bool(lock is not None and lock.locked())


async def dispatch_beside(kernel: Any, msg: Any, header: dict[str, Any], spawn: Callable[[Any], Awaitable[None]]) -> None:
    """Serve one shell request while a cell runs, with its own busy/idle pair.

    ipykernel would queue it behind the cell; ``spawn`` runs the base ``dispatch_shell`` in a
    task with a copy of the context. The shell parent of the running cell is restored after.
    """
    shell_parent = kernel.get_parent("shell")
    shell_ident = kernel._get_shell_context_var(kernel._shell_parent_ident)
    parent = {"header": header}
    try:
        kernel._publish_status("busy", "shell", parent)
        await spawn(msg)
        kernel._publish_status("idle", "shell", parent)
    finally:
        kernel.set_parent(shell_ident, shell_parent, channel="shell")


def submit_shell(kernel: Any, frames: list[bytes]) -> concurrent.futures.Future[None]:
    """Hand the kernel a signed shell request (``Session.serialize``'s frames) as if its shell socket had brought it.

    The session kernel's own step socket (kernel/direct.py) would otherwise talk ZMQ to its own
    process. ipykernel 7.4's shell-channel thread passes each request to ``shell_main(None, frames)``
    on the kernel's loop (frames as ``zmq.Frame``, since it receives with ``copy=False``): the same
    call, from any thread, keeps the shell's order, lock, busy/idle and handlers. The future ends
    when the request was handled (its reply sent: to ``frames``' identity, which no peer has).
    """
    import zmq

    loop = kernel.io_loop.asyncio_loop  # the kernel's main loop, where ipykernel runs the main shell
    return asyncio.run_coroutine_threadsafe(kernel.shell_main(None, [zmq.Frame(f) for f in frames]), loop)


def input_request(kernel: Any, prompt: str, password: bool = False, stop: threading.Event | None = None) -> str:
    """Ask the frontend for a line of input (Jupyter's input_request) and wait for the reply.

    ipykernel's public ``raw_input`` refuses unless the kernel set the private ``_allow_stdin``
    (IPython's kernel does in its own do_execute); the caller here has checked ``allow_stdin``.
    Blocking: run it in a thread. With ``stop``, the wait ends (EOFError) once it is set: ipykernel's
    own ``_input_request`` waits for ever, so a question abandoned by an interrupted cell would
    keep polling the stdin socket and take the answer meant for the next question.
    """
    ident = kernel._get_shell_context_var(kernel._shell_parent_ident)
    if stop is None:
        return str(kernel._input_request(str(prompt), ident, kernel.get_parent("shell"), password=password))
    import zmq

    socket, session = kernel.stdin_socket, kernel.session
    parent = kernel.get_parent("shell")
    with _STDIN:  # a zmq socket is not thread-safe: a question still being abandoned finishes first
        with contextlib.suppress(zmq.Again):  # stale replies, as _input_request purges them
            while True:
                socket.recv_multipart(zmq.NOBLOCK)
        session.send(socket, "input_request", {"prompt": str(prompt), "password": password}, parent, ident=ident)
        while not stop.is_set():
            readable, _, failed = zmq.select([socket], [], [socket], 0.05)
            if readable or failed:
                _, reply = session.recv(socket)
                if reply is not None:
                    value = str((reply.get("content") or {}).get("value", ""))
                    if value == "\x04":
                        raise EOFError
                    return value
    raise EOFError("the question was abandoned")


_STDIN = threading.Lock()


async def iopub_sent(socket: Any, timeout: float = 10.0) -> None:
    """Wait until ipykernel's IOPub thread has sent every message queued before this call.

    ``session.send(kernel.iopub_socket, …)`` only queues a message for the IOPub thread, while the
    shell reply goes out at once from the shell's thread. On a busy machine the reply could overtake
    the cell's output, and ``jupyter console`` printed the next prompt before ``console.log``'s line.
    ipykernel orders them by flushing ``sys.stdout`` before each reply, a flush :func:`skip_empty_flush`
    makes free when nothing went through it, which is always so for a cell's JS output. The thread
    runs its queue in order, so a marker scheduled now runs after those messages were handed to zmq.
    Waiting on it is a loop turn, never a blocked loop; a thread that is gone (shutdown) is not waited for.
    """
    io_thread = getattr(socket, "io_thread", None)
    thread = getattr(io_thread, "thread", None)
    if io_thread is None or thread is None or not thread.is_alive():
        return
    loop = asyncio.get_running_loop()
    sent = loop.create_future()

    def mark() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits any more
            loop.call_soon_threadsafe(lambda: sent.done() or sent.set_result(None))

    io_thread.schedule(mark)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(sent, timeout)


def protocol_version() -> str:
    """The messaging protocol ipykernel implements (it has no public name for it)."""
    from ipykernel._version import kernel_protocol_version

    return str(kernel_protocol_version)


class AbortBeforeReply:
    """A kernel mixin: queued cells start being aborted before an error's execute_reply goes out.

    ipykernel 7.4's ``execute_request`` sends the reply first and only then calls ``_abort_queues``,
    which raises the aborting flag and has the shell-channel thread queue a "stop aborting" marker
    behind the requests already waiting. A client that answers the reply at once (an agent's next
    step) can have its next request queued ahead of that marker: it was sent after the error, yet
    it is aborted. ``do_execute`` calls :meth:`abort_before_reply` for an error instead, so the
    marker is queued before anyone has the reply, and ipykernel's own call is skipped once.
    """

    _abort_started = False

    def abort_before_reply(self) -> None:
        parent = self.get_parent("shell")  # type: ignore[attr-defined]
        if not (parent.get("content") or {}).get("stop_on_error", True):
            return
        self._abort_started = True
        super()._abort_queues(parent.get("header", {}).get("subshell_id"))  # type: ignore[misc]

    def _abort_queues(self, subshell_id: str | None = None) -> None:
        if self._abort_started:
            self._abort_started = False
            return
        super()._abort_queues(subshell_id)  # type: ignore[misc]


# ---- jupyter_client -----------------------------------------------------------------------------


def made_by_jupyter_client(header: dict[str, Any]) -> bool:
    """Whether a request came from a jupyter_client ``Session`` (its message ids are ``SESSION_PID_N``).

    A terminal client (jupyter console, also with --simple-prompt) ignores display updates, so the
    live progress display must go to stderr for it. Among interactive clients (stdin allowed), the
    terminal ones are built on jupyter_client, while browser front ends number messages with UUIDs.
    """
    session = str(header.get("session", ""))
    return bool(session) and str(header.get("msg_id", "")).startswith(f"{session}_")


def no_reply_sleep() -> Any:
    """ipykernel sleeps 0.5 ms before every execute reply; assign this to ``_execute_sleep`` in the class body."""
    from traitlets import Float

    return Float(0.0).tag(config=True)
