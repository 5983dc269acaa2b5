"""JavaScript errors as users see them: ``Name: message`` and frames in their own cells.

V8 reports positions in the rewritten code (``cell[3]:2:17``); the rewriter's source maps turn
them back into the user's line and column, and frames from the kernel's own runtime are dropped
because they are noise to the user.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .rewrite import SourceMap

# "    at f (cell[3]:2:17)" | "    at cell[3]:2:17" | "    at async f (cell[3]:2:17)"
_FRAME = re.compile(r"^\s*at (?:async )?(?:(?P<fn>.+?) \()?(?P<file>[^()\s]+):(?P<line>\d+):(?P<col>\d+)\)?\s*$")
#: the user's code: cells, and files installed with api.load or --load (api/agent.py)
_CELL = re.compile(r"^(?:cell\[-?\d+\]|load\[[^\]\s()]+\])$")


@dataclass
class JSError:
    """A failed cell: what goes into the ``error`` message and the error ``execute_reply``."""

    name: str
    message: str
    traceback: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def headline(self) -> str:
        """``Name: message``, with the error's ``context`` (e.g. the tool, ``demo.get_book``) before the message."""
        context = self.extra.get("context")
        message = f"{context}: {self.message}" if context and not self.message.startswith(f"{context}:") else self.message
        return f"{self.name}: {message}" if message else self.name


def cell_frames(stack: str, maps: Mapping[str, SourceMap]) -> list[str]:
    """The user's frames of a stack (already in cell positions: see stacks.js), with the source line."""
    lines: list[str] = []
    for raw in stack.splitlines():
        m = _FRAME.match(raw)
        if not m or not _CELL.match(m["file"]):
            continue
        smap = maps.get(m["file"])
        line, col = int(m["line"]), int(m["col"])
        fn = m["fn"] or ""
        fn = fn.removeprefix("async ")
        where = f"{m['file']} line {line}, col {col}"
        if fn and fn not in ("Object.<anonymous>",) and not fn.startswith("__mcp2repl"):
            where += f", in {fn}"
        lines.append(f"  at {where}")
        if smap is not None:
            lines += _excerpt(smap.source_line(line), col)
    return lines


#: Characters of a source line quoted under an error (a minified or generated line can be megabytes).
EXCERPT = 160


def _excerpt(source: str, col: int) -> list[str]:
    """The source line, dedented like Python's tracebacks, with a caret under ``col``; a long line
    is cut to the part around ``col``."""
    text = source.rstrip()
    if not text.strip():
        return []
    indent = len(text) - len(text.lstrip())
    text, col = text[indent:], max(col - indent, 1)
    if len(text) > EXCERPT:
        start = max(0, min(col - 1 - EXCERPT // 2, len(text) - EXCERPT))
        lead, tail = ("…" if start else ""), ("…" if start + EXCERPT < len(text) else "")
        text, col = lead + text[start : start + EXCERPT] + tail, col - start + len(lead)
    return [f"    {text}", "    " + " " * (col - 1) + "^"]


#: How the words of an error a server caused (its ``extra`` names the server: a ToolError) are
#: shown: the layer that knows servers sets it (api/tools.py: servers/shown.py's ``neutral``).
_server_text: Callable[[str, str], str] | None = None


def show_server_text(shown: Callable[[str, str], str]) -> None:
    """Show a server's error text through ``shown(text, server)`` in every error built from now on.

    A terminal runs the ANSI and OSC escapes it prints, so the message and traceback (what faces
    show) are escaped; the error object in JS keeps the server's text as sent (``e.message``).
    """
    global _server_text
    _server_text = shown


def from_js(spec: Mapping[str, object], maps: Mapping[str, SourceMap]) -> JSError:
    """Build a :class:`JSError` from the description bridge.js posts."""
    name = str(spec.get("name") or "Error")
    message = str(spec.get("message") or "")
    extra = {str(k): str(v) for k, v in dict(spec.get("extra") or {}).items()}  # type: ignore[call-overload]
    server = extra.get("server")
    if server and _server_text is not None:
        message = _server_text(message, server)
        if "context" in extra:
            extra["context"] = _server_text(extra["context"], server).replace("\n", "\\n")
    err = JSError(name=name, message=message, extra=extra)
    err.traceback = [*err.headline.split("\n"), *cell_frames(str(spec.get("stack") or ""), maps)]
    return err


def syntax_error(message: str, cell: str, line: int, col: int, smap: SourceMap | None, extra: dict[str, str] | None = None) -> JSError:
    """A SyntaxError pointing at the user's line and column (``extra``: e.g. the TypeScript construct refused)."""
    err = JSError(name="SyntaxError", message=message, extra=dict(extra or {}))
    err.traceback = [err.headline, f"  at {cell} line {line}, col {col}"]
    if smap is not None:
        err.traceback += _excerpt(smap.source_line(line), col)
    return err


_PARSE = re.compile(r"^[^\n]*?:(?P<line>\d+): SyntaxError: (?P<msg>[^\n]*)\n(?P<src>[^\n]*)\n(?P<caret>\s*)\^", re.S)


def from_parse_exception(text: str, cell: str, smap: SourceMap | None) -> JSError:
    """Turn mini-racer's ``<anonymous>:LINE: SyntaxError: msg`` + caret into a cell position."""
    m = _PARSE.match(text)
    if not m:
        first = text.strip().splitlines()[0] if text.strip() else "Invalid or unexpected token"
        msg = first.split("SyntaxError: ", 1)[-1]
        return syntax_error(msg, cell, 1, 1, smap)
    line = int(m["line"])
    col = len(m["caret"]) + 1
    message = m["msg"]
    if smap is not None:
        line, col = smap.original(line, col)
        if line > len(smap.lines):
            # V8 stumbled on the wrapper's closing "})" after the user's code: the cell ended early
            # (``foo(``, ``const a =``). Say so where the user stopped, not on a line they never wrote.
            message = "Unexpected end of input"
            line = max((i for i, text in enumerate(smap.lines, 1) if text.strip()), default=1)
            col = len(smap.source_line(line).rstrip()) + 1
    return syntax_error(message, cell, line, col, smap)
