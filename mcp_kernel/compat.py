"""Every use of a dependency's private API, in one place, each pinned by ``tests/test_compat.py``.

Why each exists is said beside it. When a dependency upgrade removes one of these, the pinning
test fails with the name of the attribute, rather than a cell hanging somewhere far away.
This module imports nothing from mcp_kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Awaitable, Callable
from typing import Any

# ---- mini-racer -----------------------------------------------------------------------------


class V8Function:
    """A JS function of one context that Python calls with one string, passed as data.

    mini-racer's public ``JSFunction.cancelable()`` builds its argument array with synchronous
    calls, which block the calling thread while JS runs (a spinning cell would freeze the
    kernel's event loop). Here the string travels as the call's ``this`` value, made by an
    allocation that never waits for the isolate, and the argument array is one made once at
    start-up. The string is UTF-8 bytes handed to V8: no JS source is written, nothing is
    escaped, and V8 parses nothing but what the function itself does with it.
    """

    def __init__(self, racer: Any, function: Any, argv: Any) -> None:
        self._ctx = racer._ctx
        self._function = self._ctx._python_to_value_handle(function)
        self._argv = self._ctx._python_to_value_handle(argv)
        self._empty: Any = None

    def call(self, text: str, quiet: QuietResults | None = None) -> asyncio.Future[Any]:
        """Call the function with ``this`` = ``text``; cancellable like an eval."""
        if text == "":  # the outbox drain, twice per tool call: one string value, made once
            if self._empty is None:
                self._empty = self._ctx._python_to_value_handle("")
            this = self._empty
        else:
            this = self._ctx._python_to_value_handle(text)  # referenced by the task until V8 is done with it
        return start_v8_task(self._ctx, self._ctx._dll.mr_call_function, self._function.raw, this.raw, self._argv.raw, keep=this, quiet=quiet)


_PENDING = object()


class QuietResults:
    """Results of V8 tasks taken without waking the event loop.

    mini-racer hands every task's result to the loop with ``call_soon_threadsafe``, a wake-up of
    the loop's thread that costs more than a small task itself. A task whose result nobody needs
    before the next one's (a batch into V8, always followed by the outbox drain) is posted
    quietly: V8's thread keeps its result, and :meth:`release` hands it over once the task behind
    it answered (V8 runs a context's tasks in order). A result not there yet when released comes
    the usual way. V8's thread keeps its Python thread state (:func:`keep_thread_state`). Private names: the context looks ``handle_callback_from_v8`` up on itself for
    every result, so an attribute of the instance reroutes them; ``_wrap_raw_handle`` owns a
    result's memory; ``_active_cancelable_mr_task_callbacks`` holds each future's setter.
    """

    def __init__(self, racer: Any) -> None:
        ctx = racer._ctx
        self._ctx = ctx
        self._lock = threading.Lock()  # V8's thread stores, the loop's takes
        self._waiting: dict[int, Any] = {}  # callback id -> its value handle, or _PENDING
        self._ids: dict[asyncio.Future[Any], int] = {}
        loud = ctx.handle_callback_from_v8
        thread = threading.local()

        def arrived(callback_id: int, raw: Any) -> None:  # on V8's thread
            if not hasattr(thread, "kept"):
                keep_thread_state()
                thread.kept = True
            with self._lock:
                if callback_id in self._waiting:
                    self._waiting[callback_id] = ctx._wrap_raw_handle(raw)
                    return
            loud(callback_id, raw)

        object.__setattr__(ctx, "handle_callback_from_v8", arrived)  # a frozen dataclass

    def expect(self, future: asyncio.Future[Any], callback_id: int) -> None:
        """Keep the result of the task ``future`` stands for when it arrives (called before it is posted)."""
        with self._lock:
            self._waiting[callback_id] = _PENDING
        self._ids[future] = callback_id

    def release(self, future: asyncio.Future[Any]) -> None:
        """Hand over ``future``'s result if it came; if not, it comes the usual way."""
        callback_id = self._ids.pop(future, None)
        if callback_id is None:
            return
        with self._lock:
            handle = self._waiting.pop(callback_id, _PENDING)
        if handle is not _PENDING:
            setter = self._ctx._active_cancelable_mr_task_callbacks.get(callback_id)
            if setter is not None:
                setter(handle)


def keep_thread_state() -> None:
    """Keep the Python thread state of the foreign thread that runs this (V8's, calling back).

    ctypes enters Python from a thread Python did not start with ``PyGILState_Ensure`` and leaves
    with ``PyGILState_Release``, which creates a thread state and deletes it again on every call:
    two of each per tool call (the batch's result and the drain's), ~50 µs of a ~300 µs bridge
    round trip on a 2-core machine. One more ``Ensure``, never released, keeps the thread's state
    alive; the calls after it only take and give back the GIL. Called with the GIL held, inside a
    callback. Public C API, reached through ctypes: the state lives as long as the thread.
    """
    import ctypes

    ctypes.pythonapi.PyGILState_Ensure()


#: Strings at least this long (in bytes of UTF-8) leave V8 without mini-racer's extra copy (see below).
BIG_STRING = 1 << 20
#: mini-racer's type tag of a UTF-8 string value (``_MiniRacerTypes.str_utf8``).
_STR_UTF8 = 5


def _to_python(ctx: Any, handle: Any) -> Any:
    """A value V8 sent; a big string is decoded straight from the library's buffer.

    mini-racer slices the buffer into bytes and decodes those: for a 50 MB artifact that is 50 MB
    more at the kernel's peak. The buffer is freed with the handle, right after.
    """
    raw = handle.raw.contents
    if raw.type == _STR_UTF8 and raw.len >= BIG_STRING:
        import ctypes

        address = ctypes.cast(raw.value.bytes_val, ctypes.c_void_p).value
        return str(memoryview((ctypes.c_char * raw.len).from_address(address)), "utf-8")
    return ctx._value_handle_to_python(handle)


def start_eval(racer: Any) -> Callable[..., asyncio.Future[Any]]:
    """``eval_cancelable`` as a function that returns a plain future (see :func:`start_v8_task`)."""
    ctx = racer._ctx

    def start(code: str, quiet: QuietResults | None = None) -> asyncio.Future[Any]:
        handle = ctx._python_to_value_handle(code)
        return start_v8_task(ctx, ctx._dll.mr_eval, handle.raw, keep=handle, quiet=quiet)

    return start


def start_v8_task(ctx: Any, method: Any, *args: Any, keep: Any, quiet: QuietResults | None = None) -> asyncio.Future[Any]:
    """Post one cancellable task to V8 now and return the future of its result.

    mini-racer's own ``_run_cancelable_mr_task`` is a coroutine: each call into V8 then needs an
    asyncio task of its own to be posted before Python waits, and it asks V8 to cancel every task
    that already finished. On the path of every tool call (a batch into V8 and the drain behind it)
    those were two tasks and two foreign calls per round trip. Here the task is posted at once, the
    result arrives by the same callback mini-racer uses, and cancelling the future cancels the task
    in V8. ``keep`` (the argument's handle) stays referenced until the task is over.
    """
    future: asyncio.Future[Any] = ctx.event_loop.create_future()
    callbacks = ctx._active_cancelable_mr_task_callbacks
    callback_id = next(ctx._next_async_callback_id)

    def arrived(handle: Any) -> None:
        callbacks.pop(callback_id, None)
        if future.done():
            return
        try:
            future.set_result(_to_python(ctx, handle))
        except Exception as exc:  # noqa: BLE001 - JS errors become mini-racer's exceptions; anything else must not hang the caller
            future.set_exception(exc)

    callbacks[callback_id] = arrived
    if quiet is not None:
        quiet.expect(future, callback_id)
    task_id = method(ctx._ctx, *args, callback_id)

    def over(done: asyncio.Future[Any]) -> None:
        nonlocal keep
        if quiet is not None:
            quiet.release(done)
        if done.cancelled() and callbacks.pop(callback_id, None) is not None:
            ctx._dll.mr_cancel_task(ctx._ctx, task_id)
        keep = None

    future.add_done_callback(over)
    return future


def terminated_exception() -> type[Exception]:
    """mini-racer's exception for JS stopped by TerminateExecution (not exported by the package).

    A hard memory limit reached while no JS runs leaves a termination pending, which then stops
    whatever runs next; the engine needs to recognise that exception to keep it off user cells.
    """
    from py_mini_racer._exc import JSTerminatedException

    return JSTerminatedException


def v8_version() -> str:
    """V8's version without creating a context (for the banner before the engine is up)."""
    from py_mini_racer import init_mini_racer

    return str(init_mini_racer(ignore_duplicate_init=True).mr_v8_version().decode())


# ---- anyio ------------------------------------------------------------------------------------


def pipe_closing(stream: Any) -> bool:
    """Has the pipe under anyio's process stdin stream been closed by a failed write?

    A write to a pipe nobody reads fails inside asyncio's transport, which then closes itself; the
    writer learns of it only two loop turns later, and anyio's ``send`` may return normally before
    that. A line written then is lost, and the request behind it would wait for its whole timeout.
    """
    writer = getattr(stream, "_stream", None)
    return writer is not None and writer.is_closing()


async def send_now(stream: Any, data: bytes) -> None:
    """``stream.send(data)`` for anyio's process stdin, without a loop turn when nothing has to wait.

    anyio's ``send`` ends with a checkpoint, a turn of the event loop, on every message (one per
    tool call: ~15-25 µs on a 2-core machine). Here the bytes go to the asyncio writer under it
    and ``drain`` waits only when the pipe is full, as anyio's does. A pipe already closing
    raises ``BrokenPipeError`` instead of dropping the bytes without a word.
    """
    writer = getattr(stream, "_stream", None)
    if writer is None:
        await stream.send(data)
        return
    if writer.is_closing():
        raise BrokenPipeError("the server's stdin is closed")
    writer.write(data)
    await writer.drain()


# ---- MCP SDK ---------------------------------------------------------------------------------


def session_closed(session: Any) -> bool:
    """Has the SDK's reader noticed that the server went away?

    ``ClientSession`` records end-of-stream only on its private dispatcher; without this a crashed
    server looks alive until the next call fails.
    """
    dispatcher = getattr(session, "_dispatcher", None)
    return bool(getattr(dispatcher, "_closed", False))


async def send_unvalidated(session: Any, request: Any) -> dict[str, Any]:
    """Send a typed request and return its raw result, skipping the SDK's per-method result check.

    A ``tools/call`` with ``task`` is answered by a ``CreateTaskResult``, but ``send_request``
    checks every ``tools/call`` answer against ``CallToolResult`` and rejects it (mcp 2.3 has task
    types and no client support for them). The caller validates the result itself. Done as
    ``send_request`` does it: the session's stamp (protocol-version header), then its dispatcher.
    """
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: dict[str, Any] = {}
    session._stamp(data, opts)
    return dict(await session._dispatcher.send_raw_request(data["method"], data.get("params"), opts))


@functools.cache
def _call_tool_parts() -> tuple[Any, ...]:
    """What :func:`call_tool` uses of the SDK, imported once (the SDK is loaded off the start-up path)."""
    import mcp_types as types
    from mcp.client import session as sdk
    from mcp.client.extension import UnexpectedClaimedResult
    from mcp.shared.inbound import MCP_NAME_HEADER, encode_header_value
    from mcp_types import methods

    return types, sdk, methods, UnexpectedClaimedResult, MCP_NAME_HEADER, encode_header_value


async def call_tool(session: Any, name: str, arguments: dict[str, Any], timeout: float | None, progress: Any) -> Any:
    """``session.call_tool(name, arguments, timeout, progress)``, without its per-call model round trip.

    The SDK builds a ``CallToolRequest`` model to dump it straight back to a dict, and validates
    the result twice (against the negotiated version's schema, then as the result type): ~55 µs
    of a ~760 µs sequential call in the kernel. Here the dict goes through the session's own stamp
    and dispatcher and the result is validated once, as the result type, with everything else
    ``send_request`` and ``call_tool`` do around it: the ``Mcp-Name`` header, the session's read
    timeout, the TTL clamp, dropping a later revision's fields, the output-schema check, and the
    refusal of input-required and claimed results.
    """
    types, sdk, methods, UnexpectedClaimedResult, MCP_NAME_HEADER, encode_header_value = _call_tool_parts()
    data: dict[str, Any] = {"method": "tools/call", "params": {"name": name, "arguments": arguments}}
    opts: dict[str, Any] = {}
    session._stamp(data, opts)
    headers = opts.setdefault("headers", {})
    if MCP_NAME_HEADER not in headers:
        headers[MCP_NAME_HEADER] = encode_header_value(name)
    limit = timeout if timeout is not None else session._session_read_timeout_seconds
    if limit is not None:
        opts["timeout"] = limit
    if progress is not None:
        opts["on_progress"] = progress
    raw = await session._dispatcher.send_raw_request("tools/call", data.get("params"), opts)
    sdk._clamp_inbound_ttl(raw)
    version = session._negotiated_version or "2025-11-25"
    foreign = sdk._later_revision_fields("tools/call", version)
    checked = {key: value for key, value in raw.items() if key not in foreign} if not foreign.isdisjoint(raw) else raw
    try:
        result = session._call_tool_adapter.validate_python(checked, by_name=False)
    except ValueError:
        methods.validate_server_result("tools/call", version, raw)  # the SDK's first check words it better
        raise
    if isinstance(result, types.CallToolResult):
        if not result.is_error:
            await session.validate_tool_result(name, result)
        return result
    if isinstance(result, types.InputRequiredResult):
        raise sdk._input_required_unexpected("call_tool")
    raise UnexpectedClaimedResult(result)


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
