"""Private parts of mini-racer: calls into V8 that never block the event loop, results taken quietly, and its ICU data shared."""

from __future__ import annotations

import asyncio
import ctypes
import threading
from collections.abc import Callable
from typing import Any


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

    def call(self, text: str, quiet: QuietResults | None = None, arrived: Callable[[asyncio.Future[Any]], None] | None = None) -> asyncio.Future[Any]:
        """Call the function with ``this`` = ``text``; cancellable like an eval."""
        if text == "":  # the outbox drain, twice per tool call: one string value, made once
            if self._empty is None:
                self._empty = self._ctx._python_to_value_handle("")
            this = self._empty
        else:
            this = self._ctx._python_to_value_handle(text)  # referenced by the task until V8 is done with it
        return start_v8_task(self._ctx, self._ctx._dll.mr_call_function, self._function.raw, this.raw, self._argv.raw, keep=this, quiet=quiet, arrived=arrived)


_PENDING = object()


class QuietResults:
    """Results of V8 tasks taken without waking the event loop.

    mini-racer hands every task's result to the loop with ``call_soon_threadsafe``, a wake-up of
    the loop's thread that costs more than a small task itself. A task whose result nobody needs
    before the next one's (a batch into V8, always followed by the outbox drain) is posted
    quietly: V8's thread keeps its result, and :meth:`release` hands it over once the task behind
    it answered (V8 runs a context's tasks in order). A result not there yet when released comes
    the usual way. V8's thread keeps its Python thread state (:func:`keep_thread_state`).
    Private names: the context looks ``handle_callback_from_v8`` up on itself for every result, so
    an attribute of the instance reroutes them; ``_wrap_raw_handle`` owns a result's memory;
    ``_active_cancelable_mr_task_callbacks`` holds each future's setter.
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


def start_v8_task(
    ctx: Any, method: Any, *args: Any, keep: Any, quiet: QuietResults | None = None, arrived: Callable[[asyncio.Future[Any]], None] | None = None
) -> asyncio.Future[Any]:
    """Post one cancellable task to V8 now and return the future of its result.

    mini-racer's own ``_run_cancelable_mr_task`` is a coroutine: each call into V8 then needs an
    asyncio task of its own to be posted before Python waits, and it asks V8 to cancel every task
    that already finished. On the path of every tool call (a batch into V8 and the drain behind it)
    those were two tasks and two foreign calls per round trip. Here the task is posted at once, the
    result arrives by the same callback mini-racer uses, and cancelling the future cancels the task
    in V8. ``keep`` (the argument's handle) stays referenced until the task is over. ``arrived``
    is called with the finished future in the loop turn the result comes in (done-callbacks and
    awaiting tasks run a turn later), unless the future was cancelled first.
    """
    future: asyncio.Future[Any] = ctx.event_loop.create_future()
    callbacks = ctx._active_cancelable_mr_task_callbacks
    callback_id = next(ctx._next_async_callback_id)

    def result(handle: Any) -> None:
        callbacks.pop(callback_id, None)
        if future.done():
            return
        try:
            future.set_result(_to_python(ctx, handle))
        except Exception as exc:  # noqa: BLE001 - JS errors become mini-racer's exceptions; anything else must not hang the caller
            future.set_exception(exc)
        if arrived is not None:
            arrived(future)

    callbacks[callback_id] = result
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


# ---- V8's copy of the ICU data ----------------------------------------------------------------

_PROT_READ, _PROT_WRITE, _MAP_PRIVATE, _MAP_FIXED = 1, 2, 2, 16
_MAP_FAILED = ctypes.c_void_p(-1).value


def share_icu_data() -> int:
    """Turn V8's private copy of ``icudtl.dat`` into a mapping of the file itself; returns the bytes mapped.

    V8's ``InitializeICU`` reads mini-racer's whole ``icudtl.dat`` (10.8 MB) into memory it
    allocated (``new char[size]``) and hands that to ICU, which only ever reads it: 10.5 MB of
    anonymous memory in every kernel, of which Intl, ``normalize`` or ``\\p{…}`` regexps touch a
    little. The copy is page-aligned (mini-racer's allocator maps it on its own) and byte-for-byte
    the file, so mapping the file over its whole pages (private, readable and writable, as the copy
    was) changes no byte V8 or ICU can see: its pages become the page cache's, shared by every
    kernel on the machine, and dropped from this process until read. Found by content: an anonymous
    mapping whose first page is the file's and whose pages all equal it; none found, nothing changes.
    """
    import mmap
    import os
    from pathlib import Path

    import py_mini_racer
    from py_mini_racer import _dll

    path = Path(py_mini_racer.__file__).parent / _dll._ICU_DATA_FILENAME
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:  # its first page only: reading the whole file would leave 10 MB behind
            head = f.read(mmap.PAGESIZE) if size >= mmap.PAGESIZE else b""
        with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as f:
            maps = f.read().splitlines()
    except OSError:
        return 0
    whole = size // mmap.PAGESIZE * mmap.PAGESIZE
    if not head or not whole:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mmap.restype = ctypes.c_void_p
    libc.munmap.argtypes, libc.memcmp.argtypes = [ctypes.c_void_p, ctypes.c_size_t], [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    for line in maps:
        fields = line.split()
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        if len(fields) != 5 or fields[1] != "rw-p" or hi - lo < size or ctypes.string_at(lo, len(head)) != head:
            continue
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            view = libc.mmap(None, whole, _PROT_READ, _MAP_PRIVATE, fd, 0)
            if view in (None, _MAP_FAILED):
                return 0
            same = libc.memcmp(lo, view, whole) == 0
            libc.munmap(view, whole)
            if same and libc.mmap(lo, whole, _PROT_READ | _PROT_WRITE, _MAP_PRIVATE | _MAP_FIXED, fd, 0) == lo:
                return whole
        finally:
            os.close(fd)
    return 0
