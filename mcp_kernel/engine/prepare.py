"""From what the user typed to what V8 runs: type stripping, the cell rewrite, and the syntax errors of both.

Every cell may be TypeScript: plain JavaScript is valid input and comes back from
:func:`strip_types` unchanged, so there is one kind of cell and no mode to choose. The steps keep
every position, so errors and stack frames name the user's own lines and columns and quote the
user's own text (the TypeScript, not its stripped form):

1. ``strip_types`` blanks type-only syntax (same length, same line breaks); TypeScript that would
   need generated code (``enum``, value ``namespace``…) becomes a SyntaxError naming the construct
   and what to write in JavaScript.
2. ``rewrite`` turns the JavaScript into an async step of the persistent context.
3. If tree-sitter rejects it, V8 compiles the cell: its error message is the one JS users know.
   If V8 accepts it, tree-sitter missed an automatic semicolon (``let t: string`` then a line
   starting with a template, see asi.py): the semicolon is written and the rewrite tried again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from py_mini_racer import JSParseException
from tree_sitter import Parser

from . import errors, nesting, treewalk, worker
from .asi import insert_semicolons
from .errors import JSError
from .rewrite import CellSyntaxError, Rewritten, SourceMap, rewrite
from .typestrip import TypeScriptError, strip_types
from .typestrip_support import language

#: Compiles JavaScript in V8 without running it; raises ``JSParseException`` for a syntax error.
Compile = Callable[[str], Awaitable[object]]
T = TypeVar("T")

_WRAPPER = "(async function(){"
log = logging.getLogger(__name__)


@dataclass
class Preparing:
    """A cell being prepared: :meth:`run` returns its outcome, or, the moment :meth:`end` is called
    (an interrupt, the time limit, shutdown), the error it ended with; ``stop`` then tells the
    worker thread (or child process) to give up at its next checkpoint, and its late result is dropped."""

    stopped: asyncio.Future[JSError]
    stop: threading.Event = field(default_factory=threading.Event)

    def end(self, name: str, message: str) -> None:
        self.stop.set()
        if not self.stopped.done():
            self.stopped.set_result(JSError(name, message, [f"{name}: {message}"]))

    async def run(self, code: str, cell: str, compile_js: Compile) -> Rewritten | JSError:
        work = asyncio.ensure_future(prepare(code, cell, compile_js, self.stop))
        try:
            await asyncio.wait({work, self.stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not work.done():
                self.stop.set()
                work.add_done_callback(lambda w: w.cancelled() or w.exception())
        if self.stopped.done():
            return self.stopped.result()
        try:
            return work.result()
        except treewalk.Stopped:
            return JSError("InterruptError", "Execution interrupted", ["InterruptError: Execution interrupted"])
        except Exception as exc:  # a bug in preparation must still end the cell, visibly
            log.exception("preparing %s failed", cell)
            message = f"the cell could not be prepared ({type(exc).__name__}); please report this with the cell"
            return JSError("InternalError", message, [f"InternalError: {message}"])


@dataclass
class _ForV8:
    """The rewrite failed: V8's verdict on the JavaScript decides what to report."""

    js: str
    failure: CellSyntaxError
    smap: SourceMap


async def prepare(code: str, cell: str, compile_js: Compile, stop: threading.Event | None = None) -> Rewritten | JSError:
    """The rewritten cell, or the SyntaxError to report for it.

    The work runs off the loop (:func:`in_thread`; a cell of :data:`INLINE_CHARS` at most on it), so
    the event loop keeps serving requests while a big cell is prepared; ``stop`` ends it at the next
    checkpoint (treewalk.Stopped), for an interrupt or the cell's time limit.
    """
    first = await in_thread(stop, _first, code, cell)
    if not isinstance(first, _ForV8):
        return first
    js, failure, smap = first.js, first.failure, first.smap
    if failure.message.startswith(("'import'", "'export'")):
        return errors.syntax_error(failure.message, cell, failure.line, failure.column, smap)
    try:
        await compile_js(f"{_WRAPPER}{js}\n}});0")
    except JSParseException as parse:
        if nesting.V8_OVERFLOW in str(parse):
            return nesting.too_deep_error(smap, cell)
        return errors.from_parse_exception(str(parse), cell, smap)
    except Exception:  # noqa: BLE001 - without V8's verdict, report the parser's own position
        return errors.syntax_error(failure.message, cell, failure.line, failure.column, smap)
    # V8 compiles it, so only tree-sitter is wrong: add the semicolons V8 inserts by itself
    repaired = await in_thread(stop, _repaired, js, cell, code)
    return repaired if repaired is not None else errors.syntax_error(failure.message, cell, failure.line, failure.column, smap)


#: Inputs up to this many characters are prepared on the event loop itself: a one-line step takes
#: ~40 µs, the worst 256 characters found (``a<`` repeated, every ``<`` a possible type argument)
#: ~3 ms, while a worker thread costs two hand-offs between threads, ~0.1-0.4 ms of every cell on a
#: loaded 2-core machine (a tenth of a warm one). The first cell of a process also compiles the
#: parsers' queries here (~30 ms) unless the warm-up did; in a thread it held the GIL all the same.
INLINE_CHARS = 256


async def in_thread(stop: threading.Event | None, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread, as preparation that ``stop`` ends (see treewalk.checkpoint);
    for a big input in a child process instead (``fn`` at module level: see worker.py), and for a
    small one (:data:`INLINE_CHARS`) here, at once: nothing could stop it sooner than it ends."""
    size = worker.size(args)
    if size >= worker.THRESHOLD:
        return await worker.in_process(stop, fn, *args)
    if size <= INLINE_CHARS:
        return fn(*args)

    def call() -> T:
        with treewalk.stoppable(stop) if stop is not None else contextlib.nullcontext():
            return fn(*args)

    return await asyncio.to_thread(call)


def _first(code: str, cell: str) -> Rewritten | JSError | _ForV8:
    """Everything before V8's verdict: the nesting bound, type stripping, the rewrite."""
    deep = nesting.past_limit(code.encode("utf-8"), Parser(language()))
    if deep is not None:
        levels, (row, byte_column) = deep
        column = len(code.split("\n", row + 1)[row].encode("utf-8")[:byte_column].decode("utf-8", "replace")) + 1
        return errors.syntax_error(nesting.too_deep(levels), cell, row + 1, column, SourceMap(code))
    try:
        js = strip_types(code)
    except TypeScriptError as exc:
        return errors.syntax_error(exc.message, cell, exc.line, exc.column, SourceMap(code), extra={"construct": exc.construct})
    except treewalk.Stopped:
        raise
    except Exception:  # a stripper bug must not take the cell down: run it as written
        log.exception("type stripping failed on %s; running it unchanged", cell)
        js = code
    try:
        return rewrite(js, cell, shown=code)
    except CellSyntaxError as exc:
        return _ForV8(js, exc, SourceMap.with_prefix(js, len(_WRAPPER), shown=code))


def warm_up() -> None:
    """Build the parsers' compiled queries now, on a worker thread while V8 starts (``Engine.start``
    of a kernel, not of a one-shot run, whose first cell follows at once): compiling them costs
    ~20 ms once per process, which the first cell would otherwise wait for, and the two do not
    overlap (a one-shot's start took as much longer). The sample holds a token of every kind the
    queries look for. A failure is left to the first cell's own preparation, which reports it."""
    with contextlib.suppress(Exception):
        _first("let warm: number = (1) as number; return warm", "warm-up")


def _repaired(js: str, cell: str, code: str) -> Rewritten | None:
    repaired = insert_semicolons(js)
    if repaired is not None:
        try:
            return rewrite(repaired, cell, shown=code)
        except CellSyntaxError:
            pass
    return None
