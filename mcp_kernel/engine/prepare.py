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

import logging
from collections.abc import Awaitable, Callable

from py_mini_racer import JSParseException

from . import errors
from .asi import insert_semicolons
from .errors import JSError
from .rewrite import CellSyntaxError, Rewritten, SourceMap, rewrite
from .typestrip import TypeScriptError, strip_types

#: Compiles JavaScript in V8 without running it; raises ``JSParseException`` for a syntax error.
Compile = Callable[[str], Awaitable[object]]

_WRAPPER = "(async function(){"
log = logging.getLogger(__name__)


async def prepare(code: str, cell: str, compile_js: Compile) -> Rewritten | JSError:
    """The rewritten cell, or the SyntaxError to report for it."""
    try:
        js = strip_types(code)
    except TypeScriptError as exc:
        return errors.syntax_error(exc.message, cell, exc.line, exc.column, SourceMap(code), extra={"construct": exc.construct})
    except Exception:  # a stripper bug must not take the cell down: run it as written
        log.exception("type stripping failed on %s; running it unchanged", cell)
        js = code
    try:
        return rewrite(js, cell, shown=code)
    except CellSyntaxError as exc:
        failure = exc
    smap = SourceMap.with_prefix(js, len(_WRAPPER), shown=code)
    if failure.message.startswith(("'import'", "'export'")):
        return errors.syntax_error(failure.message, cell, failure.line, failure.column, smap)
    try:
        await compile_js(f"{_WRAPPER}{js}\n}});0")
    except JSParseException as parse:
        return errors.from_parse_exception(str(parse), cell, smap)
    except Exception:  # noqa: BLE001 - without V8's verdict, report the parser's own position
        return errors.syntax_error(failure.message, cell, failure.line, failure.column, smap)
    # V8 compiles it, so only tree-sitter is wrong: add the semicolons V8 inserts by itself
    repaired = insert_semicolons(js)
    if repaired is not None:
        try:
            return rewrite(repaired, cell, shown=code)
        except CellSyntaxError:
            pass
    return errors.syntax_error(failure.message, cell, failure.line, failure.column, smap)
