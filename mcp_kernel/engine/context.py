"""One V8 context: created on the running loop, loaded with the runtime, reached only by awaitable calls.

Every synchronous mini-racer operation blocks its thread until V8 is idle, so one on the kernel's
event loop while a cell spins would freeze the kernel (no interrupt, no shutdown). After
start-up this class therefore talks to V8 only through ``eval_cancelable`` and one cancellable
function call (``receive``, see :class:`mcp_kernel.compat.V8Function`) that takes its input as
data. It also counts what V8 has not finished, so the engine knows whether JS may be running.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from py_mini_racer import JSOOMException, MiniRacer

from ..compat import ExternalMemory, QuietResults, V8Function, start_eval, terminated_exception
from .memory import STOP, BufferWatch

JSTerminated = terminated_exception()
log = logging.getLogger(__name__)

#: The engine's own JS, evaluated in this order into every fresh context, before other scripts.
RUNTIME_FILES = (
    "buffers.js",
    "intrinsics.js",
    "stacks.js",
    "inspect.js",
    "table.js",
    "web.js",
    "clone.js",
    "url-host.js",
    "url-parse.js",
    "url.js",
    "apart.js",
    "errors.js",
    "bridge.js",
    "console.js",
    "promises.js",
    "introspect.js",
)


def configure_v8() -> None:
    """Give V8 the largest old space it can have, before the first context exists.

    V8 aborts the whole process ("Fatal JavaScript out of memory: Reached heap limit") when its
    old space is full, and by default that is ~1.4 GB: below the engine's 2 GB default, so a runaway
    allocation would kill the kernel instead of failing the cell. Flags are per process and fixed at
    the first context, so they are set once for any limit; the engine's own limit (mini-racer's hard
    limit, see ``usable_heap_limit``) is the one cells meet.
    """
    from py_mini_racer import DEFAULT_V8_FLAGS, init_mini_racer

    # the gc extension under a name buffers.js takes and hides: the check of array buffer memory collects first
    flags = (*DEFAULT_V8_FLAGS, f"--max-old-space-size={V8_OLD_SPACE_MB}", "--expose-gc-as=__mk$gc")
    init_mini_racer(flags=flags, ignore_duplicate_init=True)


#: above V8's ceiling with pointer compression (4 GB), so the ceiling is what applies
V8_OLD_SPACE_MB = 8192

#: what a cell may still allocate between mini-racer's check (after a GC) and V8's own ceiling
HEAP_HEADROOM = 512 * 1024 * 1024


def usable_heap_limit(wanted: int, ceiling: int) -> int:
    """The engine's limit in bytes: ``wanted``, unless V8 cannot hold it.

    V8 builds with pointer compression (mini-racer's do) hold at most 4 GB whatever the flags say, and
    reaching that ceiling aborts the process. mini-racer stops a cell only after a GC sees the heap over
    its limit, so the limit must stay a headroom below the ceiling for the stop to come first.
    """
    return max(min(wanted, ceiling - HEAP_HEADROOM), 16 * 1024 * 1024)


def runtime_scripts() -> list[tuple[str, str]]:
    """``(name, source)`` of the engine's JS files."""
    root = resources.files("mcp_kernel.engine") / "js"
    return [(f"engine/{name}", (root / name).read_text(encoding="utf-8")) for name in RUNTIME_FILES]


def joined_scripts(scripts: Sequence[tuple[str, str]]) -> str:
    """All of a context's scripts as one: one compile and one round trip instead of ~25 (~5-9 ms of
    every start). Each file is sloppy at its top level (its ``"use strict"`` is inside its own
    function), so joining changes no meaning; the ``;`` keeps a file without a final semicolon
    from running into the next, and each file's name stays on the line above it."""
    parts = [f";// ---- {name}\n{source}\n" for name, source in scripts]
    return "".join(parts) + "//# sourceURL=mcp2repl/runtime.js"


class V8:
    """A mini-racer context and what the engine needs from it: evals, ``receive`` and the interrupt flag."""

    def __init__(self, heap_limit: int, on_oom: Callable[[], None], on_buffers: Callable[[], None] = lambda: None) -> None:
        self.heap_limit = heap_limit
        self._on_oom = on_oom
        self._on_buffers = on_buffers  # array buffers past the limit (called on the loop)
        self._watch: BufferWatch | None = None
        self._racer: MiniRacer | None = None
        self._receive: V8Function | None = None
        self._drain: V8Function | None = None
        self._stash: V8Function | None = None
        self._take: V8Function | None = None
        self._eval: Callable[..., asyncio.Future[Any]] | None = None
        self._quiet: QuietResults | None = None  # batches whose results wait for the drain's
        self._alive = 0  # heap in use after the last collection (give_back), or after the runtime's start
        self.flag: memoryview | None = None
        self.global_names: set[str] = set()
        self.version = ""
        #: calls V8 has not finished: a spinning background timer counts too
        self.inflight = 0
        self.tasks: set[asyncio.Future[Any]] = set()
        #: after an out-of-memory stop: consuming a termination V8 may still have pending
        self._settling: asyncio.Task[None] | None = None

    async def open(self, scripts: Sequence[tuple[str, str]]) -> None:
        """Create the context on the running loop (mini-racer binds to it) and evaluate ``scripts``."""
        racer = MiniRacer()
        self._racer = racer
        self.version = racer.v8_version
        self.heap_limit = usable_heap_limit(self.heap_limit, int(racer.heap_stats()["heap_size_limit"]))
        racer.set_hard_memory_limit(self.heap_limit)
        await racer.eval_cancelable(joined_scripts([*runtime_scripts(), *scripts]))
        # every script has added its part: from now on the runtime's namespace cannot change; one
        # array buffer may hold at most the heap limit (buffers.js)
        flag = await racer.eval_cancelable(f"__mk$L({self.heap_limit}); Object.freeze(__mcp2repl).flagBuffer")
        assert isinstance(flag, memoryview)
        self.flag, self._alive = flag, int(racer.heap_stats()["used_heap_size"])  # the runtime, and its start's garbage
        external = ExternalMemory(racer)
        await external.attach(racer)
        loop = asyncio.get_running_loop()
        stop = lambda: loop.call_soon_threadsafe(self._on_buffers)  # noqa: E731 - from the watcher's thread
        self._watch = BufferWatch(external, flag, self.heap_limit, lambda: self.inflight > 0, stop)
        receive = await racer.eval_cancelable("__mcp2repl.receive")
        argv = await racer.eval_cancelable("[]")
        self._receive = V8Function(racer, receive, argv)
        self._drain = V8Function(racer, await racer.eval_cancelable("__mcp2repl.drain"), argv)
        self._stash = V8Function(racer, await racer.eval_cancelable("__mcp2repl.stash"), argv)
        self._take = V8Function(racer, await racer.eval_cancelable("__mcp2repl.take"), argv)
        self._eval = start_eval(racer)
        self._quiet = QuietResults(racer)
        names = await racer.eval_cancelable("JSON.stringify(Object.getOwnPropertyNames(globalThis))")
        self.global_names = {n for n in json.loads(str(names)) if not n.startswith("__")}

    @property
    def closed(self) -> bool:
        return self._racer is None

    @property
    def buffers_stop(self) -> bool:
        """Is running code being stopped for holding too much array buffer memory (memory.py)?"""
        return self.flag is not None and self.flag[0] == STOP

    def watch_cell(self) -> None:
        """A cell starts: the array buffers held now are earlier cells' (see memory.BufferWatch)."""
        if self._watch is not None:
            self._watch.cell_started()

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
        racer, self._racer = self._racer, None
        if racer is not None:
            racer.close()

    async def eval(self, code: str, raw: bool = False) -> Any:
        """Evaluate ``code``. ``raw`` lets parse errors, termination and out-of-memory reach the caller (cell starts)."""
        await self.settled()
        self._live()
        assert self._eval is not None
        return await self._track(self._eval(code), raw)

    async def receive(self, batch: str) -> Any:
        """Hand a JSON batch to ``__mcp2repl.receive`` as data (see bridge.js for its items)."""
        await self.settled()
        self._live()
        assert self._receive is not None
        return await self._track(self._receive.call(batch), False)

    async def drain(self) -> Any:
        """``__mcp2repl.drain()``: what JS posted, as one JSON text ("" for nothing)."""
        await self.settled()
        self._live()
        assert self._drain is not None
        return await self._track(self._drain.call(""), False)

    async def collect_garbage(self) -> None:
        """A full GC, in a thread: mini-racer's call waits for the isolate to be idle, the loop must not."""
        racer = self._racer
        if racer is not None:
            await asyncio.to_thread(racer.low_memory_notification)

    async def give_back(self, largest: int, quiet: Callable[[], bool], guess: int = 4) -> bool:
        """Collect and shrink the heap, in a thread, if at most ``largest`` bytes of it are alive; collected?

        V8's collection for low memory (full passes, then empty pages released) costs about what is
        alive, so a big live heap is left to V8. What is in use counts garbage too, which V8 leaves
        long (a 4 MB cell's text grew the heap 4 MB a cell): a heap up to ``guess`` times ``largest``
        is collected when what was alive after the last collection was within it (a wrong guess costs
        one such collection). ``quiet()`` is asked again in the thread right before: no cell began.
        """
        racer = self._racer
        if racer is None:
            return False

        def collect() -> bool:
            used = int(racer.heap_stats()["used_heap_size"])
            if not (used <= largest or (self._alive <= largest and used <= guess * largest)) or not quiet():
                return False
            racer.low_memory_notification()
            self._alive = int(racer.heap_stats()["used_heap_size"])
            return True

        return await asyncio.to_thread(collect)

    async def take(self, key: str) -> str:
        """A big string a request set aside (``__mcp2repl.take``, ``key`` = "id/name"), handed over as one string."""
        await self.settled()
        self._live()
        assert self._take is not None
        text = await self._track(self._take.call(key), False)
        return text if isinstance(text, str) else ""

    async def eval_then_drain(self, code: str, drained: Callable[[Any], None], raw: bool = False) -> Any:
        """:meth:`eval` ``code``, with ``__mcp2repl.drain()`` queued right behind it; see :meth:`then_drain`."""
        await self.settled()
        self._live()
        assert self._eval is not None
        return await self.then_drain(self._eval(code, self._quiet), drained, raw).result()

    async def receive_then_drain(self, batch: str, drained: Callable[[Any], None], texts: list[str]) -> Any:
        """:meth:`receive` ``batch``, with ``__mcp2repl.drain()`` queued right behind it; see :meth:`then_drain`."""
        await self.settled()
        return await self.post_receive_then_drain(batch, drained, texts).result()

    def post_receive_then_drain(self, batch: str, drained: Callable[[Any], None], texts: list[str]) -> RoundTrip:
        """Post what :meth:`receive_then_drain` posts, now, when nothing has to wait (not :attr:`settling`).

        ``texts`` go first, each as a string of its own (``__mcp2repl.stash``): the batch takes them
        where its items say. They are posted in this same step, so nothing else runs in V8 between.
        The list is emptied as they go: once V8 has a big text, Python holds no copy of it.
        """
        self._live()
        assert self._receive is not None and self._stash is not None
        texts.reverse()
        while texts:
            self._post(self._stash.call(texts.pop()))
        return self.then_drain(self._receive.call(batch, self._quiet), drained, False)

    @property
    def settling(self) -> bool:
        """Is V8 being made usable after an out-of-memory stop (nothing may be posted meanwhile)?"""
        return self._settling is not None and not self._settling.done()

    def then_drain(self, first: asyncio.Future[Any], drained: Callable[[Any], None], raw: bool) -> RoundTrip:
        """Post the outbox drain right behind ``first`` (already posted, quietly): see :class:`RoundTrip`."""
        return RoundTrip(self, self._post(first), drained, raw)

    def settle_after_oom(self, forget: str | None = None) -> None:
        """Make V8 usable again after an out-of-memory stop, before anything else runs in it.

        The heap is still full, and mini-racer stops any JS that allocates while it is over the limit,
        so the limit is raised for a moment: a termination still pending from the stop (it fires when
        the limit is reached while no JS runs) is consumed, ``forget`` (a ``receive`` batch that drops
        the stopped cell's globals) runs, a full GC gives the memory back, and the limit is restored.
        """
        if self._settling is None or self._settling.done():
            self._settling = asyncio.ensure_future(self._recover_memory(forget))

    async def settled(self) -> None:
        if self._settling is not None and not self._settling.done() and asyncio.current_task() is not self._settling:
            await asyncio.shield(self._settling)

    async def _recover_memory(self, forget: str | None) -> None:
        racer = self._racer
        if racer is None:
            return
        racer.set_hard_memory_limit(self.heap_limit * 2)
        try:
            for _ in range(3):
                try:
                    await racer.eval_cancelable("0")
                    break
                except JSTerminated:
                    continue
            if forget is not None and self._receive is not None:
                await self._receive.call(forget)
            await self.collect_garbage()
        except Exception:  # noqa: BLE001 - e.g. closed meanwhile; the limit is restored below
            pass
        finally:
            if self._racer is racer:
                racer.set_hard_memory_limit(self.heap_limit)

    async def _track(self, call: asyncio.Future[Any], raw: bool) -> Any:
        return await self._outcome(self._post(call), raw)

    def _post(self, call: asyncio.Future[Any]) -> asyncio.Future[Any]:
        """Count a V8 task already posted (see :func:`mcp_kernel.compat.start_v8_task`) until it is over.

        A rebuild cancels what is still in ``tasks``: a cancelled future makes mini-racer skip
        converting a result that arrives from a context already closed.
        """
        self.inflight += 1
        self.tasks.add(call)

        def done(t: asyncio.Future[Any]) -> None:
            self.inflight -= 1
            self.tasks.discard(t)

        call.add_done_callback(done)
        return call

    async def _outcome(self, task: asyncio.Future[Any], raw: bool) -> Any:
        """The call's result; an out-of-memory or termination stop reported to the engine instead (unless ``raw``)."""
        try:
            await task
        except Exception:  # noqa: BLE001 - looked at below
            pass
        return self._outcome_now(task, raw)

    def _outcome_now(self, task: asyncio.Future[Any], raw: bool, check_memory: bool = True) -> Any:
        try:
            result = task.result()
        except JSOOMException:
            if raw:
                raise
            self._on_oom()
            return None
        except JSTerminated:
            if raw:
                raise
            racer = self._racer
            if racer is not None and racer.was_hard_memory_limit_reached():
                self._on_oom()
            return None
        racer = self._racer
        if check_memory and racer is not None and racer.was_hard_memory_limit_reached():
            self._on_oom()
        return result

    def memory_limit_reached(self) -> bool:
        return self._racer is not None and self._racer.was_hard_memory_limit_reached()

    def reset_memory_limit(self) -> None:
        """After an out-of-memory stop: clear the "reached" flag (setting a limit does)."""
        racer = self._racer
        if racer is not None:
            racer.set_hard_memory_limit(self.heap_limit)

    def _live(self) -> MiniRacer:
        if self._racer is None:
            raise RuntimeError("the JavaScript engine is closed")
        return self._racer


class RoundTrip:
    """A task posted to V8 and the outbox drain posted right behind it: :meth:`result` waits for both.

    V8 runs the microtask checkpoint between tasks, so the drain sees everything the first task
    led to (a settled tool call's continuation posting the next call) without Python waiting for
    the first before asking. The first was posted quietly (:class:`~mcp_kernel.compat.QuietResults`):
    its result is taken when the drain's arrives, so a round trip wakes the event loop once, not
    twice (the kernel's largest fixed cost per tool call). And the drained text is handled in that
    same loop turn, inside the callback that brings it, not a turn later when the waiting task
    resumes: the requests it holds start one turn sooner. ``drained`` gets the text (None if it
    was stopped) whatever happened to the first task, unless the drain was cancelled.
    """

    def __init__(self, v8: V8, head: asyncio.Future[Any], drained: Callable[[Any], None], raw: bool) -> None:
        assert v8._drain is not None and v8._quiet is not None
        self._v8 = v8
        self._quiet = v8._quiet
        self._head = head
        self._drained = drained
        self._raw = raw
        self._outcome: tuple[bool, Any] | None = None
        self._tail = v8._post(v8._drain.call("", arrived=self._arrived))  # in the same loop turn as ``head``

    def _arrived(self, tail: asyncio.Future[Any]) -> None:
        head = self._head
        self._quiet.release(head)  # V8 ran it before the drain: its result is here
        try:
            text = self._v8._outcome_now(tail, False)
        except Exception as exc:  # noqa: BLE001 - raised by result()
            head.cancel()
            self._outcome = (False, exc)
            return
        try:  # V8 ran the first task before the drain, so its result was kept and is released by now
            self._outcome = (True, self._v8._outcome_now(head, self._raw, check_memory=False))  # the drain's checked
        except (Exception, asyncio.CancelledError) as exc:  # noqa: BLE001 - raised by result()
            self._outcome = (False, exc)
        try:
            self._drained(text)
        except Exception as exc:  # noqa: BLE001 - raised by result(): this callback's caller is the event loop, which would only log it
            self._outcome = (False, exc)

    async def result(self) -> Any:
        """The first task's result (an out-of-memory stop reported instead, unless ``raw``)."""
        try:
            await self._tail
        except BaseException as exc:
            if self._outcome is None:  # the drain was cancelled (or the context closed) before it answered
                self._head.cancel()
                raise
            if not isinstance(exc, Exception):  # this task itself was cancelled
                raise
        finally:
            self._quiet.release(self._head)
        assert self._outcome is not None  # _arrived ran: the drain answered
        ok, value = self._outcome
        if ok:
            return value
        raise value

