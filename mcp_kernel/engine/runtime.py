"""The engine: one persistent V8 context, its bridge to Python, timers, interrupts and limits.

No Jupyter here. The kernel (or a test, or a future CLI) gives the engine a :class:`Sink` for
what JavaScript prints and displays, registers async Python handlers that JS can call, and runs
cells with :meth:`Engine.run_cell`.

Why it is shaped like this (measured facts in docs/architecture.md): every synchronous
mini-racer call blocks its thread until V8 is idle, so after start-up the engine talks to V8
only through ``eval_cancelable``; JS reaches Python by posting to an outbox that the engine
drains after every eval; and code that spins after an ``await`` is stopped by a flag in shared
memory that injected checks read, so a stuck cell never freezes the asyncio loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Protocol

from py_mini_racer import JSOOMException, JSParseException, MiniRacer

from . import errors
from .errors import JSError
from .rewrite import CellSyntaxError, SourceMap, rewrite

log = logging.getLogger(__name__)

#: JS runtime files, evaluated in this order into every fresh context.
RUNTIME_FILES = ("inspect.js", "web.js", "bridge.js", "introspect.js")

Handler = Callable[[Any, "CallContext"], Awaitable[Any]]

_INTERRUPT = 1
_TIMEOUT = 2


class Sink(Protocol):
    """Where the engine sends what JS prints or displays, tagged with the originating cell."""

    def stream(self, cell: str, name: str, text: str) -> None: ...

    def display(self, cell: str, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None: ...

    def clear_output(self, cell: str, wait: bool) -> None: ...


class BridgeError(Exception):
    """Raised by a handler to reject the JS promise with an Error of the given name."""

    def __init__(self, name: str, message: str, **extra: str) -> None:
        super().__init__(message)
        self.name = name
        self.message = message
        self.extra = extra


@dataclass
class CallContext:
    """What a Python handler knows about the JS call it serves."""

    cell: str
    engine: Engine


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


@dataclass
class _State:
    """Everything tied to one V8 context; replaced wholesale when the context is rebuilt."""

    ctx: MiniRacer
    flag: memoryview
    timers: dict[int, asyncio.TimerHandle] = field(default_factory=dict)
    requests: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    evals: set[asyncio.Future[Any]] = field(default_factory=set)


def _js_string(text: str) -> str:
    """A JS string literal; JSON string syntax is a subset of JS string syntax."""
    return json.dumps(text, ensure_ascii=False)


class Engine:
    """A persistent JavaScript environment driven from an asyncio loop."""

    def __init__(self, sink: Sink, *, heap_limit_mb: int = 2048, interrupt_grace: float = 0.6) -> None:
        self.sink = sink
        self.heap_limit = heap_limit_mb * 1024 * 1024
        self.interrupt_grace = interrupt_grace
        self.handlers: dict[str, Handler] = {}
        self.scripts: list[tuple[str, str]] = []
        self.context_scripts: dict[str, str] = {}
        self.maps: dict[str, SourceMap] = {}
        self.declared: set[str] = set()
        self.global_names: set[str] = set()
        self._state: _State | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready: asyncio.Future[None] | None = None
        self._current: _Execution | None = None
        self._queue: deque[tuple[str, str]] = deque()
        self._pump: asyncio.Task[None] | None = None
        self._recovering: asyncio.Task[None] | None = None
        self._inflight = 0  # evals V8 has not finished: a spinning background timer counts too
        self.v8_version = ""
        self.rebuilds = 0

    # ---- life cycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Create the V8 context on the running loop (mini-racer binds to it) and load the runtime."""
        self._loop = asyncio.get_running_loop()
        self._ready = self._loop.create_future()
        try:
            self._state = await self._new_state()
            self._ready.set_result(None)
        except BaseException as exc:
            self._ready.set_exception(exc)
            raise

    async def _new_state(self) -> _State:
        ctx = MiniRacer()
        self.v8_version = ctx.v8_version
        ctx.set_hard_memory_limit(self.heap_limit)
        root = resources.files("mcp_kernel.engine") / "js"
        for name in RUNTIME_FILES:
            source = (root / name).read_text(encoding="utf-8")
            await ctx.eval_cancelable(f"{source}\n//# sourceURL=mcp2repl/{name}")
        for name, source in self.scripts:
            await ctx.eval_cancelable(f"{source}\n//# sourceURL=mcp2repl/{name}")
        for source in self.context_scripts.values():
            await ctx.eval_cancelable(source)
        flag = await ctx.eval_cancelable("__mcp2repl.flagBuffer")
        assert isinstance(flag, memoryview)
        names = await ctx.eval_cancelable("JSON.stringify(Object.getOwnPropertyNames(globalThis))")
        self.global_names = {n for n in json.loads(str(names)) if not n.startswith("__")}
        return _State(ctx=ctx, flag=flag)

    async def ready(self) -> None:
        if self._ready is None:
            await self.start()
        else:
            await asyncio.shield(self._ready)

    async def close(self) -> None:
        """Stop timers and requests and free V8; safe to call more than once."""
        state = self._state
        if state is None:
            return
        state.flag[0] = _INTERRUPT
        if self._recovering is not None and not self._recovering.done():
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(self._recovering), self.interrupt_grace + 0.5)
        self._state = None
        for task in (self._pump, self._recovering):
            if task is not None and not task.done():
                task.cancel()
        self._drop_pending(state)
        if self._current and not self._current.future.done():
            self._current.future.set_result(CellOutcome(error=JSError("InterruptError", "Kernel is shutting down")))
        state.ctx.close()

    def add_script(self, name: str, source: str) -> None:
        """JS evaluated into every context after the runtime (now and after a rebuild)."""
        self.scripts.append((name, source))

    def set_context_script(self, key: str, source: str) -> None:
        """JS state that every context must have (e.g. the tool catalog): run it now and after rebuilds."""
        self.context_scripts[key] = source
        if self._state is not None:
            self._enqueue("", source)

    @property
    def current_cell(self) -> str | None:
        return self._current.cell if self._current else None

    def register(self, name: str, handler: Handler) -> None:
        """Expose an async Python function to JS as ``__mcp2repl.call(name, args)``."""
        self.handlers[name] = handler

    # ---- cells --------------------------------------------------------------------------

    async def run_cell(self, code: str, cell: str, time_limit: float | None = None) -> CellOutcome:
        """Run one cell to completion (or interrupt, timeout, out-of-memory)."""
        await self.ready()
        if self._recovering is not None:
            await asyncio.shield(self._recovering)
        try:
            rewritten = rewrite(code, cell)
        except CellSyntaxError as exc:
            return CellOutcome(error=await self._syntax_error(code, cell, exc))
        self.maps[cell] = rewritten.source_map
        self.declared.update(rewritten.declared)
        loop = asyncio.get_running_loop()
        execution = _Execution(cell=cell, future=loop.create_future())
        self._current = execution
        # A timer, not wait_for: a cell spinning after an await blocks even the drain below.
        deadline = loop.call_later(time_limit, self.interrupt, True) if time_limit else None
        # Starting and draining can block behind spinning JS; the outcome arrives through the
        # future either way (done message, interrupt recovery, OOM), so wait on that alone.
        execution.starter = asyncio.ensure_future(self._start_cell(rewritten.code, execution, rewritten.source_map))
        try:
            return await execution.future
        finally:
            if deadline is not None:
                deadline.cancel()
            # Never cancel the starter: cancelling an eval asks V8 to terminate whatever runs
            # at that moment, which can be the next cell. It finishes once V8 is idle.
            if self._current is execution:
                self._current = None

    async def _start_cell(self, code: str, execution: _Execution, smap: SourceMap) -> None:
        try:
            await self._eval(code, raw=True)
        except JSParseException as exc:
            if not execution.future.done():
                execution.future.set_result(CellOutcome(error=errors.from_parse_exception(str(exc), execution.cell, smap)))
            return
        except JSOOMException:
            self._out_of_memory()
        except Exception as exc:  # noqa: BLE001 - anything else still ends the cell, visibly
            if not execution.future.done():
                err = JSError(type(exc).__name__, str(exc), [f"{type(exc).__name__}: {exc}"])
                execution.future.set_result(CellOutcome(error=err))
            return
        await self._drain()

    async def _syntax_error(self, code: str, cell: str, exc: CellSyntaxError) -> JSError:
        """Let V8 word the error: its messages are the ones JS users know."""
        wrapper = "(async function(){"
        smap = SourceMap.with_prefix(code, len(wrapper))
        if exc.message.startswith("'import'") or exc.message.startswith("'export'"):
            return errors.syntax_error(exc.message, cell, exc.line, exc.column, smap)
        probe = f"{wrapper}{code}\n}});0"
        try:
            await self._live().ctx.eval_cancelable(probe)
        except JSParseException as parse:
            return errors.from_parse_exception(str(parse), cell, smap)
        except Exception:  # noqa: BLE001 - fall back to the parser's own position
            pass
        return errors.syntax_error(exc.message, cell, exc.line, exc.column, smap)

    # ---- interrupts ---------------------------------------------------------------------

    def interrupt(self, timeout: bool = False) -> None:
        """Stop running JS. Thread-safe: the flag write needs no V8 lock and no loop."""
        state = self._state
        if state is None or self._loop is None:
            return
        state.flag[0] = _TIMEOUT if timeout else _INTERRUPT
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._begin_recovery(timeout)
        else:
            self._loop.call_soon_threadsafe(self._begin_recovery, timeout)

    def _begin_recovery(self, timeout: bool) -> None:
        state = self._state
        if state is None:
            return
        if self._current is None and self._inflight == 0:
            state.flag[0] = 0  # an idle interrupt (clients send one before every shutdown) is a no-op
            return
        if self._recovering is None or self._recovering.done():
            self._recovering = asyncio.ensure_future(self._recover(timeout))

    async def _recover(self, timeout: bool) -> None:
        """Make V8 idle again with globals intact; rebuild the context only as a last resort."""
        state = self._live()
        name, message = ("TimeoutError", "Cell time limit reached") if timeout else ("InterruptError", "Execution interrupted")
        self._drop_pending(state)
        abort = f"__mcp2repl.abort({_js_string(name)},{_js_string(message)})"
        rebuilt = False
        try:
            try:
                await asyncio.wait_for(asyncio.shield(self._eval(abort)), self.interrupt_grace)
                await self._drain()
            except TimeoutError:
                # Uninstrumented code (a builtin, eval'd source) still spins: start over.
                await self._rebuild()
                rebuilt = True
        finally:
            if not rebuilt:
                state.flag[0] = 0
            current = self._current
            if current is not None and not current.future.done():
                err = JSError(name, message, [f"{name}: {message}"])
                if rebuilt:
                    err.traceback.append("  The JavaScript context was restarted to stop the code: all globals were lost.")
                current.future.set_result(CellOutcome(error=err))

    async def _rebuild(self) -> None:
        old = self._state
        self.rebuilds += 1
        if old is not None:
            self._drop_pending(old)
            for task in old.evals:
                task.cancel()
            if old.evals:
                await asyncio.wait(old.evals, timeout=0.5)
            old.ctx.close()
        self._state = await self._new_state()
        self.declared.clear()
        cell = self._current.cell if self._current else ""
        self.sink.stream(cell, "stderr", "[mcp2repl] The JavaScript context was restarted to stop runaway code; all globals were lost.\n")

    def _drop_pending(self, state: _State) -> None:
        for handle in state.timers.values():
            handle.cancel()
        state.timers.clear()
        for task in state.requests.values():
            task.cancel()
        state.requests.clear()
        self._queue.clear()

    def _out_of_memory(self) -> None:
        state = self._live()
        state.ctx.set_hard_memory_limit(self.heap_limit)  # also clears the "reached" flag
        current = self._current
        mb = self.heap_limit // (1024 * 1024)
        msg = f"JavaScript heap out of memory: the cell needed more than the {mb} MB heap limit and was stopped"
        if current is not None and not current.future.done():
            current.future.set_result(CellOutcome(error=JSError("RangeError", msg, [f"RangeError: {msg}"])))
        else:
            self.sink.stream(current.cell if current else "", "stderr", f"[mcp2repl] {msg}\n")

    # ---- the bridge ---------------------------------------------------------------------

    def _live(self) -> _State:
        if self._state is None:
            raise RuntimeError("the JavaScript engine is closed")
        return self._state

    async def _eval(self, code: str, raw: bool = False) -> Any:
        """Every eval after start-up goes through here, so ``_inflight`` knows if V8 is busy.

        ``raw`` lets parse errors and OOM reach the caller, for cell starts.
        """
        state = self._live()
        self._inflight += 1
        # Its own task, so a rebuild can cancel it: a cancelled future makes mini-racer skip
        # converting a result that arrives from a context already closed.
        task = asyncio.ensure_future(state.ctx.eval_cancelable(code))
        state.evals.add(task)
        task.add_done_callback(state.evals.discard)
        try:
            result = await task
        except JSOOMException:
            if raw:
                raise
            self._out_of_memory()
            return None
        finally:
            self._inflight -= 1
        if state.ctx.was_hard_memory_limit_reached():
            self._out_of_memory()
        return result

    async def _drain(self) -> None:
        """Collect and act on everything JS posted since the last drain."""
        # One drain is enough: dispatching never runs JS, so nothing new is posted meanwhile.
        if self._state is None:
            return
        text = await self._eval("__mcp2repl.drain()")
        if text:
            for msg in json.loads(text):
                self._dispatch(msg)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg["t"]
        state = self._live()
        if kind == "out":
            self.sink.stream(msg["cell"], msg["name"], msg["text"])
        elif kind == "done":
            self._finish(msg)
        elif kind == "req":
            task = asyncio.ensure_future(self._serve(msg))
            state.requests[msg["id"]] = task
        elif kind == "timer":
            self._arm(state, msg["id"], msg["ms"], msg["repeat"], msg["cell"])
        elif kind == "clear":
            handle = state.timers.pop(msg["id"], None)
            if handle is not None:
                handle.cancel()
        elif kind == "display":
            self.sink.display(msg["cell"], msg["data"], msg["metadata"], msg["id"], msg["update"])
        elif kind == "clear_output":
            self.sink.clear_output(msg["cell"], msg["wait"])
        elif kind == "uncaught":
            err = errors.from_js(msg["error"], self.maps)
            if err.name in ("InterruptError", "TimeoutError"):
                return  # the interrupted cell already reports it
            self.sink.stream(msg["cell"], "stderr", "Uncaught " + "\n".join(err.traceback) + "\n")

    def _finish(self, msg: dict[str, Any]) -> None:
        current = self._current
        if current is None or current.cell != msg["cell"] or current.future.done():
            if not msg["ok"]:  # a cell that already ended (interrupted) failed later: say so
                err = errors.from_js(msg["error"], self.maps)
                if err.name not in ("InterruptError", "TimeoutError"):
                    self.sink.stream(msg["cell"], "stderr", "Uncaught " + "\n".join(err.traceback) + "\n")
            return
        if msg["ok"]:
            current.future.set_result(CellOutcome(data=msg["data"]))
        else:
            current.future.set_result(CellOutcome(error=errors.from_js(msg["error"], self.maps)))

    def _arm(self, state: _State, timer_id: int, ms: float, repeat: bool, cell: str) -> None:
        assert self._loop is not None

        def due() -> None:
            if repeat:
                state.timers[timer_id] = self._loop.call_later(ms / 1000, due)  # type: ignore[union-attr]
            else:
                state.timers.pop(timer_id, None)
            self._enqueue(cell, f"__mcp2repl.fire({timer_id})")

        state.timers[timer_id] = self._loop.call_later(ms / 1000, due)

    async def _serve(self, msg: dict[str, Any]) -> None:
        """Run one Python handler for JS and settle its promise."""
        request_id, cell, name = msg["id"], msg["cell"], msg["name"]
        state = self._live()
        handler = self.handlers.get(name)
        try:
            if handler is None:
                raise BridgeError("TypeError", f"no Python handler named {name!r}")
            result = await handler(json.loads(msg["args"]), CallContext(cell=cell, engine=self))
            entry = f"[{request_id},true,{_js_string('' if result is None else json.dumps(result, ensure_ascii=False))}]"
        except asyncio.CancelledError:
            return
        except BridgeError as exc:
            spec = {"name": exc.name, "message": exc.message, "extra": exc.extra}
            entry = f"[{request_id},false,{_js_string(json.dumps(spec))}]"
        except Exception as exc:
            log.debug("handler %s failed", name, exc_info=True)
            spec = {"name": "Error", "message": f"{type(exc).__name__}: {exc}"}
            entry = f"[{request_id},false,{_js_string(json.dumps(spec))}]"
        finally:
            state.requests.pop(request_id, None)
        if self._state is state:
            self._enqueue(cell, f"__mcp2repl.settle({_js_string(cell)},[{entry}])")

    def _enqueue(self, cell: str, code: str) -> None:
        """Queue JS to run; one pump batches whatever is queued for the same cell."""
        self._queue.append((cell, code))
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._run_pump())

    async def _run_pump(self) -> None:
        while self._queue and self._state is not None:
            cell = self._queue[0][0]
            batch: list[str] = []
            while self._queue and self._queue[0][0] == cell:
                batch.append(self._queue.popleft()[1])
            try:
                await self._eval(";".join(batch))
                await self._drain()
            except Exception:
                log.exception("engine pump failed")

    # ---- introspection (completion, inspection) ---------------------------------------------

    async def query(self, expression: str, wait: float = 0.25) -> Any:
        """Evaluate a side-effect-free runtime expression returning JSON text; None if V8 is busy."""
        if self._state is None or (self._recovering is not None and not self._recovering.done()):
            return None
        # Wait without cancelling (see run_cell): a late answer is simply dropped.
        task = asyncio.ensure_future(self._eval(expression))
        done, _ = await asyncio.wait({task}, timeout=wait)
        if not done or task.exception() is not None:
            task.add_done_callback(lambda t: t.exception())
            return None
        text = task.result()
        return json.loads(text) if isinstance(text, str) and text else None
