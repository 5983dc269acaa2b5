"""The engine: one persistent JavaScript environment that runs cells, and stops them when asked.

No Jupyter, no MCP, no display here. Whoever drives the engine (the Session) gives it a :class:`Sink`
for what JS prints and displays, scripts to load after the runtime, handlers JS can call, and context
data; then runs cells with :meth:`Engine.run_cell`. A cell may be TypeScript (prepare.py strips it).

Interrupts: code that spins after an ``await`` runs in V8's microtask checkpoint, which no
cancellation reaches. So the rewriter puts a check of a shared-memory flag into every loop and
function body, and an interrupt is one byte written from any thread (control thread, signal
handler, a timeout). Recovery then rejects pending requests and drops timers, with every global
kept; only when V8 stays busy (a regex backtracking, a huge builtin call) is the context rebuilt.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from py_mini_racer import JSOOMException, JSParseException

from . import cellmaps, errors, memory, nesting
from .bridge import Bridge, Handler, Note, Sink
from .context import V8, JSTerminated, configure_v8
from .errors import JSError
from .prepare import Preparing, warm_up
from .rewrite import Rewritten, SourceMap

#: Values of the interrupt flag (``__mk$f[0]`` in bridge.js; 3 and 4 are memory.LOOK and memory.STOP).
INTERRUPT, TIMEOUT = 1, 2
#: Errors of cells that were stopped; they are reported on the cell, never again as "uncaught".
STOPPED = ("InterruptError", "TimeoutError")
log = logging.getLogger(__name__)


@dataclass
class CellOutcome:
    """A finished cell: a MIME bundle (or None for ``undefined``), or an error."""

    data: dict[str, Any] | None = None
    error: JSError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class _Execution:
    cell: str
    future: asyncio.Future[CellOutcome]
    starter: asyncio.Future[None] | None = None
    declared: list[str] = field(default_factory=list)  # the cell's top-level names


@dataclass
class _Setup:
    """What every context gets, so a rebuilt one is like the first: scripts, then context data."""

    scripts: list[tuple[str, str]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


class Engine:
    """A persistent JavaScript environment driven from an asyncio loop."""

    def __init__(self, sink: Sink, *, heap_limit_mb: int = 2048, interrupt_grace: float = 0.6) -> None:
        self.sink = sink
        configure_v8()
        self.heap_limit_asked = heap_limit_mb * 1024 * 1024
        self.heap_limit = self.heap_limit_asked
        self.interrupt_grace = interrupt_grace
        self.bridge = Bridge(sink, self._finish, self._uncaught, self._broken)
        self.maps = cellmaps.CellMaps()  # of past cells, while their code may still throw
        self.declared: set[str] = set()
        self.global_names: set[str] = set()
        self.v8_version = ""
        self.rebuilds = 0
        self._setup = _Setup()
        self._v8: V8 | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready: asyncio.Future[None] | None = None
        self._current: _Execution | None = None
        self._preparing: Preparing | None = None
        self._recovering: asyncio.Task[None] | None = None
        self._late: list[str] = []  # uncaught errors that came while no cell ran, for the next cell

    # ---- set-up -------------------------------------------------------------------------

    def add_script(self, name: str, source: str) -> None:
        """JS evaluated into every context after the runtime (call before :meth:`start`)."""
        self._setup.scripts.append((name, source))

    def register(self, name: str, handler: Handler) -> None:
        """Expose an async Python function to JS as ``__mcp2repl.call(name, args)``."""
        self.bridge.register(name, handler)

    def register_note(self, name: str, handler: Note) -> None:
        """Receive ``__mcp2repl.notify(name, args)``."""
        self.bridge.register_note(name, handler)

    def set_data(self, key: str, value: Any) -> None:
        """Context data for ``__mcp2repl.onData(key, fn)``: sent now and again after every rebuild."""
        self._setup.data[key] = value
        if self._v8 is not None:
            self.bridge.send_data(key, value)

    def post(self, cell: str, key: str, value: Any) -> None:
        """An event for ``__mcp2repl.onData(key, fn)`` that belongs to ``cell`` (its output goes there); JS runs
        it when free, between cells too, like a timer. Not kept for a rebuilt context, unlike :meth:`set_data`."""
        if self._v8 is not None:
            self.bridge.enqueue(cell, json.dumps(["data", key, value], ensure_ascii=False))

    # ---- life cycle ---------------------------------------------------------------------

    async def start(self, warm: bool = True) -> None:
        """Create the V8 context on the running loop, load the runtime and scripts (``warm``: and prepare.warm_up meanwhile)."""
        self._loop = asyncio.get_running_loop()
        self._ready = self._loop.create_future()
        if warm:
            self._loop.run_in_executor(None, warm_up)
        try:
            await self._open()
            self._ready.set_result(None)
        except BaseException as exc:
            self._ready.set_exception(exc)
            raise

    async def _open(self) -> None:
        v8 = V8(self.heap_limit_asked, self._out_of_memory, lambda: self._begin_recovery(False))  # array buffers past the limit
        await v8.open(self._setup.scripts)
        self._v8 = v8
        self.heap_limit = v8.heap_limit  # what V8 can really hold (see usable_heap_limit)
        self.v8_version = v8.version
        self.global_names = v8.global_names
        self.bridge.attach(v8)
        for key, value in self._setup.data.items():
            self.bridge.send_data(key, value)

    async def ready(self) -> None:
        if self._ready is None:
            await self.start()
        else:
            await asyncio.shield(self._ready)

    async def close(self) -> None:
        """Stop timers and requests and free V8; safe to call more than once."""
        v8 = self._v8
        if v8 is None:
            return
        if v8.flag is not None:
            v8.flag[0] = INTERRUPT
        if self._recovering is not None and not self._recovering.done():
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self._recovering), self.interrupt_grace + 0.5)
        self._v8 = None
        self.bridge.attach(None)
        self.bridge.cancel_pump()
        if self._recovering is not None and not self._recovering.done():
            self._recovering.cancel()
        self.bridge.drop_pending()
        if self._current and not self._current.future.done():
            self._current.future.set_result(CellOutcome(error=JSError("InterruptError", "Kernel is shutting down")))
        if self._preparing is not None:
            self._preparing.end("InterruptError", "Kernel is shutting down")
        v8.close()

    async def idle(self) -> None:
        """Wait until an interrupt's recovery is over: what is posted before then may be dropped."""
        await self.ready()
        if self._recovering is not None:
            await asyncio.wait({self._recovering})

    async def give_back_memory(self, largest: int, quiet: Callable[[], bool]) -> bool:
        """Between cells (``quiet()`` says still so): :meth:`V8.give_back` (False without it: a cell runs, V8 is closed)."""
        v8, busy = self._v8, self._current is not None or (self._recovering is not None and not self._recovering.done())
        return False if v8 is None or v8.closed or busy else await v8.give_back(largest, quiet)

    @property
    def current_cell(self) -> str | None:
        return self._current.cell if self._current else None

    # ---- cells --------------------------------------------------------------------------

    async def run_cell(self, code: str, cell: str, time_limit: float | None = None) -> CellOutcome:
        """Run one cell to completion (or interrupt, timeout, out-of-memory)."""
        await self.ready()
        if self._recovering is not None:
            await asyncio.shield(self._recovering)
        loop = asyncio.get_running_loop()
        # A timer, not wait_for (a cell spinning after an await blocks even the drain below), set before preparation: the cell's time.
        deadline = loop.call_later(time_limit, self.interrupt, True) if time_limit else None
        self._preparing = preparing = Preparing(loop.create_future())
        try:
            rewritten = await preparing.run(code, cell, self._compile)
            self._preparing = None
            return CellOutcome(error=rewritten) if isinstance(rewritten, JSError) else await self._run(rewritten, cell)
        except Exception as exc:  # a bug must still end the cell with an answer, which every face replies with
            log.exception("running %s failed", cell)
            failed = f"the cell failed in the kernel ({type(exc).__name__}); please report it"
            return CellOutcome(error=JSError("InternalError", failed, [f"InternalError: {failed}"]))
        finally:
            if self._preparing is preparing:
                self._preparing = None
            if deadline is not None:
                deadline.cancel()

    async def _run(self, rewritten: Rewritten, cell: str) -> CellOutcome:
        code = cellmaps.forget(rewritten.code, self.maps.keep(cell, rewritten.source_map, rewritten.lasting))
        self.declared.update(rewritten.declared)
        loop = asyncio.get_running_loop()
        execution = _Execution(cell=cell, future=loop.create_future(), declared=rewritten.declared)
        self._current = execution
        self._live().watch_cell()
        while self._late:
            self.sink.stream(cell, "stderr", self._late.pop(0))
        # Starting and draining can block behind spinning JS; the outcome arrives through the
        # future either way (done message, interrupt recovery, OOM), so wait on that alone.
        execution.starter = asyncio.ensure_future(self._start_cell(code, execution, rewritten.source_map))
        try:
            return await execution.future
        finally:
            # Never cancel the starter: that asks V8 to end whatever runs then (the next cell?). It ends once V8 is idle.
            if self._current is execution:
                self._current = None

    async def _start_cell(self, code: str, execution: _Execution, smap: SourceMap) -> None:
        for attempt in (1, 2):
            try:
                await self._live().eval_then_drain(code, self.bridge.handle, raw=True)
                return
            except JSTerminated:
                v8 = self._live()
                if v8.memory_limit_reached():  # this cell hit the heap limit
                    self._out_of_memory()
                    break
                if attempt == 2 or v8.flag is None or v8.flag[0] in (INTERRUPT, TIMEOUT, memory.STOP):
                    self._fail(execution, "InterruptError", "Execution interrupted")
                    return
                # A termination left pending by an earlier out-of-memory stop fires at the first
                # JS of this cell, before any of it ran: consume it and start the cell again.
                v8.settle_after_oom()
                await v8.settled()
            except JSParseException as exc:
                if not execution.future.done():
                    error = nesting.too_deep_error(smap, execution.cell) if nesting.V8_OVERFLOW in str(exc) else None
                    execution.future.set_result(CellOutcome(error=error or errors.from_parse_exception(str(exc), execution.cell, smap)))
                return
            except JSOOMException:
                self._out_of_memory()
                break
            except Exception as exc:  # noqa: BLE001 - anything else still ends the cell, visibly
                if nesting.V8_OVERFLOW in str(exc):  # compiling the cell's body (lazily, as it starts) overflowed
                    if not execution.future.done():
                        execution.future.set_result(CellOutcome(error=nesting.too_deep_error(smap, execution.cell)))
                    return
                self._fail(execution, "InternalError", f"the cell could not be started: {type(exc).__name__}: {exc}")
                return
        await self.bridge.drain()

    @staticmethod
    def _fail(execution: _Execution, name: str, message: str) -> None:
        if not execution.future.done():
            execution.future.set_result(CellOutcome(error=JSError(name, message, [f"{name}: {message}"])))

    async def _compile(self, js: str) -> object:
        """Compile (never run) a probe, for prepare() to learn V8's verdict on a cell's syntax."""
        return await self._live().eval(js, raw=True)

    def _finish(self, msg: dict[str, Any]) -> None:
        """A "done" message from JS."""
        current = self._current
        held = self._v8 is not None and self._v8.buffers_stop  # a memory stop reports itself (_recover)
        if current is None or current.cell != msg["cell"] or current.future.done() or held:
            if not msg["ok"] and not held:  # a cell that already ended (interrupted) failed later: say so
                self._uncaught(msg)
            return
        if msg["ok"]:
            current.future.set_result(CellOutcome(data=msg["data"]))
        else:
            current.future.set_result(CellOutcome(error=errors.from_js(msg["error"], self.maps)))

    def _broken(self, cell: str, message: str) -> None:
        """Something JS posted could not be handled: the running cell (or the message's) fails with why."""
        current = self._current
        if current is not None and not current.future.done() and cell in ("", current.cell):
            current.future.set_result(CellOutcome(error=JSError("InternalError", message, [f"InternalError: {message}"])))
        else:
            self.sink.note(cell, f"[mcp2repl] {message}\n")

    def _uncaught(self, msg: dict[str, Any]) -> None:
        """An error nobody caught (a timer callback, an unawaited rejection): on stderr like Node, on its cell
        while that runs, else on the next cell (a finished cell's output may no longer be listened to)."""
        err = errors.from_js(msg["error"], self.maps)
        if err.name in STOPPED:  # the interrupted cell already reports it
            return
        cell = msg["cell"]
        head = "Uncaught (in promise) " if msg.get("promise") else "Uncaught "
        current = self._current.cell if self._current else None
        if current is None or cell == current:
            text = head + "\n".join(err.traceback) + "\n"
            if current is None:
                self._late.append(f"[mcp2repl] from {cell or 'an earlier cell'}: {text}")
            else:
                self.sink.stream(cell, "stderr", text)
        else:
            self.sink.stream(current, "stderr", f"[mcp2repl] from {cell or 'the runtime'}: {head}" + "\n".join(err.traceback) + "\n")

    # ---- interrupts ---------------------------------------------------------------------

    def interrupt(self, timeout: bool = False) -> None:
        """Stop running JS. Thread-safe: the flag write needs no V8 lock and no loop."""
        v8 = self._v8
        if v8 is None or v8.flag is None or self._loop is None:
            return
        v8.flag[0] = TIMEOUT if timeout else INTERRUPT
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._begin_recovery(timeout)
        else:
            self._loop.call_soon_threadsafe(self._begin_recovery, timeout)

    def _begin_recovery(self, timeout: bool) -> None:
        v8 = self._v8
        if v8 is None or v8.flag is None:
            return
        if self._preparing is not None and not v8.buffers_stop:  # the cell is still being prepared: it ends now
            self._preparing.end(*(("TimeoutError", "Cell time limit reached") if timeout else ("InterruptError", "Execution interrupted")))
        if self._current is None and v8.inflight == 0:
            v8.flag[0] = 0  # an idle interrupt (clients send one before every shutdown) is a no-op
            return
        if self._recovering is None or self._recovering.done():
            self._recovering = asyncio.ensure_future(self._recover(timeout))

    async def _recover(self, timeout: bool) -> None:
        """Make V8 idle again with globals intact; rebuild the context only as a last resort."""
        v8 = self._live()
        name, message = ("TimeoutError", "Cell time limit reached") if timeout else ("InterruptError", "Execution interrupted")
        if buffers := v8.buffers_stop:
            name, message = "RangeError", memory.buffers_message(self.heap_limit, None)
        self.bridge.drop_pending()
        abort = json.dumps({"cell": self._current.cell if self._current else "", "items": [["abort", name, message]]})
        rebuilt = False
        try:
            try:
                await asyncio.wait_for(asyncio.shield(v8.receive(abort)), self.interrupt_grace)
                await self.bridge.drain()
            except TimeoutError:
                # Uninstrumented code (a builtin, eval'd source) still spins: start over.
                await self._rebuild()
                rebuilt = True
        finally:
            current = self._current
            if buffers and not rebuilt and current is not None and not current.future.done():  # free what it holds
                message = memory.buffers_message(self.heap_limit, names := sorted(set(current.declared)))
                await v8.receive(json.dumps({"cell": current.cell, "items": [["forget", names]]}))
            if not rebuilt and v8.flag is not None:
                v8.flag[0] = 0
            if current is not None and not current.future.done():
                err = JSError(name, message, [f"{name}: {message}"])
                if rebuilt:
                    err.traceback.append("  The JavaScript context was restarted to stop the code: all globals were lost.")
                current.future.set_result(CellOutcome(error=err))

    async def _rebuild(self) -> None:
        old = self._v8
        self.rebuilds += 1
        self.bridge.drop_pending()
        if old is not None:
            for task in old.tasks:
                task.cancel()
            if old.tasks:
                await asyncio.wait(old.tasks, timeout=0.5)
            old.close()
        await self._open()
        self.declared.clear()
        cell = self._current.cell if self._current else ""
        self.sink.note(cell, "[mcp2repl] The JavaScript context was restarted to stop runaway code; all globals were lost.\n")

    def _out_of_memory(self) -> None:
        v8 = self._v8
        current = self._current
        running = current is not None and not current.future.done()
        names = sorted(set(current.declared)) if running and current is not None else []
        if v8 is not None:
            v8.reset_memory_limit()
            forget = json.dumps({"cell": current.cell, "items": [["forget", names]]}) if names and current is not None else None
            v8.settle_after_oom(forget)
        msg = memory.heap_message(self.heap_limit, self.heap_limit_asked, names if running else None)
        if running and current is not None:
            current.future.set_result(CellOutcome(error=JSError("RangeError", msg, [f"RangeError: {msg}"])))
        else:
            self.sink.note(current.cell if current else "", f"[mcp2repl] {msg}\n")

    def _live(self) -> V8:
        if self._v8 is None:
            raise RuntimeError("the JavaScript engine is closed")
        return self._v8

    # ---- introspection (completion, inspection) ---------------------------------------------

    async def query(self, expression: str, wait: float = 0.25) -> Any:
        """Evaluate a side-effect-free runtime expression returning JSON text; None if V8 is busy."""
        if self._v8 is None or (self._recovering is not None and not self._recovering.done()):
            return None
        # Wait without cancelling (see run_cell): a late answer is simply dropped.
        task = asyncio.ensure_future(self._v8.eval(expression))
        done, _ = await asyncio.wait({task}, timeout=wait)
        if not done or task.exception() is not None:
            task.add_done_callback(lambda t: t.exception())
            return None
        text = task.result()
        return json.loads(text) if isinstance(text, str) and text else None
