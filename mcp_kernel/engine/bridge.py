"""The Python half of the bridge: what JS posted is dispatched here, and what JS gets back is batched.

JS never calls Python. It appends messages to an outbox (the table is in ``js/bridge.js``) that
Python drains after every call into V8: output goes to the :class:`Sink`, requests to async
handlers (one task each, so calls run concurrently), timers to the asyncio clock. Everything
Python sends back — settled requests, due timers, context data — is queued as inbound items and
handed to V8 as one JSON text per batch, never as JS source.

Batches are per cell: items queued for one cell go together, so output produced while JS handles
them is attributed to that cell, and a cell's settle never runs with another cell current.
Handler results cross once: a handler may return :class:`JsonText` (JSON it already has as text,
such as a tool result serialised by pydantic), which is spliced into the batch as it is.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .context import V8, RoundTrip

log = logging.getLogger(__name__)


class Sink(Protocol):
    """Where the engine sends what JS prints or displays, tagged with the originating cell."""

    def stream(self, cell: str, name: str, text: str) -> None: ...

    def display(self, cell: str, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None: ...

    def clear_output(self, cell: str, wait: bool) -> None: ...

    def note(self, cell: str, text: str) -> None:
        """A message from the kernel about ``cell`` (a restart, an eviction): not the cell's own output."""
        ...


class JsonText(str):
    """A handler result that is already JSON text: sent to JS as is, not encoded again."""


@dataclass(frozen=True)
class JsonPieces:
    """A handler result that is JSON text in pieces, and big strings that travel beside it.

    The pieces are joined once, into the batch handed to V8: wrapping a big text at every layer
    would copy it each time, and a copy of a 50 MB result is 50 MB more of the kernel's peak memory.
    Each of ``texts`` (a path into the value, and the string that goes there) reaches V8 as a
    string of its own, handed over as data: never escaped into JSON by Python, never parsed out
    of it by V8 (a 50 MB text result would otherwise exist three times over in the two heaps).
    """

    pieces: tuple[str, ...]
    texts: tuple[tuple[list[str | int], str], ...] = ()


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


Handler = Callable[[Any, CallContext], Awaitable[Any]]
Note = Callable[[Any, CallContext], None]


#: Characters set aside by requests (since V8 last collected its garbage) from which V8 collects it
#: before they are taken. Such strings are mostly an artifact made from a big value (its text,
#: parsed, then stringified a few million characters a piece): the text, whatever the parse left
#: and the pieces already written are garbage by now, and taking a string costs two more copies
#: of it. Collecting first keeps them from being the kernel's peak (a 50 MB result printed: about
#: one payload less at the peak, and half the memory held after the cell), for a full GC's time
#: every 8 MB, which is small next to moving that much.
COLLECT_BEFORE_TAKING = 8 << 20


#: Answers under this many characters go to V8 from :meth:`Bridge._settle` itself when nothing else is pending.
EAGER_CHARS = 1 << 16


def _item(*parts: Any) -> str:
    return json.dumps(list(parts), ensure_ascii=False)


class Bridge:
    """Outbox dispatch, request serving, timers and the inbound pump for one engine."""

    def __init__(
        self,
        sink: Sink,
        on_done: Callable[[dict[str, Any]], None],
        on_uncaught: Callable[[dict[str, Any]], None],
        on_broken: Callable[[str, str], None],
    ) -> None:
        self.sink = sink
        self.handlers: dict[str, Handler] = {}
        self.notes: dict[str, Note] = {}
        self._on_done = on_done
        self._on_uncaught = on_uncaught
        self._on_broken = on_broken  # (cell, what happened): a message could not be handled
        self.v8: V8 | None = None
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._requests: dict[int, asyncio.Task[None]] = {}
        self._queue: deque[tuple[str, str | tuple[str, ...], tuple[str, ...]]] = deque()
        self._pump: asyncio.Task[None] | None = None
        self._apart_chars = 0  # set aside since V8 last collected (see COLLECT_BEFORE_TAKING)

    def attach(self, v8: V8 | None) -> None:
        """Talk to this context from now on (a rebuilt one, or None once closed)."""
        self.v8 = v8

    # ---- draining ---------------------------------------------------------------------------

    async def drain(self) -> None:
        """Collect and act on everything JS posted since the last drain."""
        # One drain is enough: dispatching never runs JS, so nothing new is posted meanwhile.
        v8 = self.v8
        if v8 is None or v8.closed:
            return
        self.handle(await v8.drain())

    def handle(self, text: Any) -> None:
        """Act on one drained batch (JSON text; empty or None: nothing was posted)."""
        if not text:
            return
        try:
            messages = json.loads(text)
        except (ValueError, RecursionError) as exc:
            # JS bounds what it sends; if a batch still cannot be read, its cell must hear of it
            self._on_broken("", f"mcp2repl could not read what the JavaScript side sent ({type(exc).__name__}: {exc})")
            return
        for msg in messages:
            try:
                self._dispatch(msg)
            except Exception as exc:
                log.exception("could not handle %r", msg.get("t") if isinstance(msg, dict) else msg)
                cell = msg.get("cell", "") if isinstance(msg, dict) else ""
                kind = msg.get("t") if isinstance(msg, dict) else "?"
                self._on_broken(cell, f'mcp2repl could not handle a "{kind}" message ({type(exc).__name__}: {exc})')

    def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg["t"]
        if kind == "out":
            self.sink.stream(msg["cell"], msg["name"], msg["text"])
        elif kind == "done":
            self._on_done(msg)
        elif kind == "req":
            self._requests[msg["id"]] = asyncio.ensure_future(self._serve(msg))
        elif kind == "note":
            self._note(msg)
        elif kind == "timer":
            self._arm(msg["id"], msg["ms"], msg["repeat"], msg["cell"])
        elif kind == "clear":
            handle = self._timers.pop(msg["id"], None)
            if handle is not None:
                handle.cancel()
        elif kind == "display":
            self.sink.display(msg["cell"], msg["data"], msg["metadata"], msg["id"], msg["update"])
        elif kind == "clear_output":
            self.sink.clear_output(msg["cell"], msg["wait"])
        elif kind == "uncaught":
            self._on_uncaught(msg)

    # ---- requests -----------------------------------------------------------------------------

    def register(self, name: str, handler: Handler) -> None:
        """Expose an async Python function to JS as ``__mcp2repl.call(name, args)``."""
        self.handlers[name] = handler

    def register_note(self, name: str, handler: Note) -> None:
        """Receive ``__mcp2repl.notify(name, args)`` messages (no answer goes back)."""
        self.notes[name] = handler

    def _note(self, msg: dict[str, Any]) -> None:
        handler = self.notes.get(msg["name"])
        if handler is None:
            return
        try:
            handler(msg["args"], CallContext(cell=msg["cell"]))
        except Exception:
            log.exception("note handler %s failed", msg["name"])

    async def _serve(self, msg: dict[str, Any]) -> None:
        """Run one Python handler for JS and settle its promise."""
        request_id, cell, name = msg["id"], msg["cell"], msg["name"]
        v8 = self.v8
        handler = self.handlers.get(name)
        item: str | tuple[str, ...]
        texts: tuple[str, ...] = ()
        try:
            if handler is None:
                raise BridgeError("TypeError", f"no Python handler named {name!r}")
            args = msg["args"]
            self._apart_chars += msg.get("apartChars", 0)
            if v8 is not None and self._apart_chars >= COLLECT_BEFORE_TAKING:
                self._apart_chars = 0
                await v8.collect_garbage()
            for key in msg.get("apart", ()):  # big strings JS kept out of the JSON: one string each
                if v8 is not None:
                    args[key] = await v8.take(f"{request_id}/{key}")
            result = await handler(args, CallContext(cell=cell))
            if result is None:
                item = f"[\"settle\",{request_id},true]"
            elif isinstance(result, JsonText):
                item = f"[\"settle\",{request_id},true,{result}]"
            elif isinstance(result, JsonPieces):
                paths = json.dumps([path for path, _ in result.texts]) if result.texts else ""
                item = (f"[\"settle\",{request_id},true,", *result.pieces, f",{paths}]" if paths else "]")
                texts = tuple(text for _, text in result.texts)
            else:
                item = _item("settle", request_id, True, result)
            del result  # the item holds the text now: one copy of a big result, not two
        except asyncio.CancelledError:
            return
        except BridgeError as exc:
            item = _item("settle", request_id, False, {"name": exc.name, "message": exc.message, "extra": exc.extra})
        except Exception as exc:
            log.debug("handler %s failed", name, exc_info=True)
            item = _item("settle", request_id, False, {"name": "Error", "message": f"{type(exc).__name__}: {exc}"})
        finally:
            self._requests.pop(request_id, None)
        if self.v8 is v8:
            self._settle(cell, item, texts)

    # ---- timers -------------------------------------------------------------------------------

    def _arm(self, timer_id: int, ms: float, repeat: bool, cell: str) -> None:
        loop = asyncio.get_running_loop()

        def due() -> None:
            if repeat:
                self._timers[timer_id] = loop.call_later(ms / 1000, due)
            else:
                self._timers.pop(timer_id, None)
            self.enqueue(cell, _item("fire", timer_id))

        self._timers[timer_id] = loop.call_later(ms / 1000, due)

    def drop_pending(self) -> None:
        """Forget timers, in-flight requests and queued items (interrupt, rebuild, shutdown)."""
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for task in self._requests.values():
            task.cancel()
        self._requests.clear()
        self._queue.clear()

    # ---- the inbound pump ---------------------------------------------------------------------

    def enqueue(self, cell: str, item: str | tuple[str, ...], texts: tuple[str, ...] = ()) -> None:
        """Queue an inbound item (JSON text, or its pieces, and strings sent beside it); one pump
        batches whatever is queued for the same cell."""
        self._queue.append((cell, item, texts))
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._run_pump())

    def _settle(self, cell: str, item: str | tuple[str, ...], texts: tuple[str, ...]) -> None:
        """Queue a request's answer; with nothing else pending, post it to V8 at once.

        With the pump idle and no other request in flight nothing else is about to be queued: a
        small answer goes to V8 now, not a loop turn later when a pump task starts (the next call
        of a sequential loop starts that much sooner). Answers that settle together (a
        ``Promise.all``) still go as one batch, and a big one waits for the pump too: the caller
        still holds it here, and joined into a batch now it would be held twice.
        """
        v8 = self.v8
        idle = self._pump is None or self._pump.done()
        small = not texts and (len(item) if isinstance(item, str) else sum(map(len, item))) < EAGER_CHARS
        if not (idle and small and not self._requests and v8 is not None and not v8.closed and not v8.settling):
            self.enqueue(cell, item, texts)
            return
        self._queue.append((cell, item, texts))
        batch, beside = self._next_batch()
        try:
            first = v8.post_receive_then_drain(batch, self.handle, beside)
        except Exception:
            log.exception("engine pump failed")
            first = None
        self._pump = asyncio.ensure_future(self._run_pump(first))

    def send_data(self, key: str, value: Any) -> None:
        """Context data for JS (``__mcp2repl.onData(key, fn)``); not tied to a cell."""
        text = value if isinstance(value, JsonText) else json.dumps(value, ensure_ascii=False)
        self.enqueue("", f"[\"data\",{json.dumps(key)},{text}]")

    def _next_batch(self) -> tuple[str, list[str]]:
        """The queued items of the first item's cell, as one batch, and the texts that go beside it."""
        cell = self._queue[0][0]
        pieces = [f'{{"cell":{json.dumps(cell)},"items":[']
        texts: list[str] = []
        while self._queue and self._queue[0][0] == cell:
            _, item, beside = self._queue.popleft()
            if len(pieces) > 1:
                pieces.append(",")
            if isinstance(item, str):
                pieces.append(item)
            else:
                pieces.extend(item)
            texts.extend(beside)
        pieces.append(f'],"texts":{len(texts)}}}')
        return "".join(pieces), texts  # only the batch holds a big result while V8 reads it

    async def _run_pump(self, posted: RoundTrip | None = None) -> None:
        """Hand V8 what is queued, a batch per cell, until nothing is; ``posted``: a batch already on its way."""
        while posted is not None or (self._queue and self.v8 is not None and not self.v8.closed):
            try:
                if posted is not None:
                    await posted.result()
                else:
                    assert self.v8 is not None
                    batch, texts = self._next_batch()
                    await self.v8.receive_then_drain(batch, self.handle, texts)
            except Exception:
                log.exception("engine pump failed")
            posted = None

    def cancel_pump(self) -> None:
        if self._pump is not None and not self._pump.done():
            self._pump.cancel()

    @property
    def busy(self) -> bool:
        """Are requests or timers still pending (so JS may run again without a new cell)?"""
        return bool(self._requests or self._timers or self._queue)
