"""A hint on the TypeErrors V8 raises for tool names the catalog does not have.

Unknown names on ``mcp``, ``mcp.<server>`` and ``tools`` are ``undefined``, so feature detection
works (``tools.x?.()``, ``typeof mcp.fs``). Calling one anyway fails the JavaScript way —
``mcp.echo.ech is not a function``, or ``Cannot read properties of undefined (reading 'add')``
for an unknown server — and this module adds what the catalog knows: close names, the servers
there are, the config problem that kept a server away. V8's name and message stay first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..engine import JSError
from ..servers.catalog import Catalog, ToolLookupError
from ..servers.config import problems_note

_NOT_A_FUNCTION = re.compile(r"^(?P<root>mcp|tools)\.(?P<rest>.+) is not a function$")
_UNDEFINED_READ = re.compile(r"^Cannot read properties of undefined \(reading '(?P<prop>[^']*)'\)$")
_FRAME = re.compile(r"^  at \S+ line (?P<line>\d+), col (?P<col>\d+)")
#: `mcp.<server>.` or `mcp["<server>"].` (optional chaining too) just before the property V8 points at
_SERVER_BEFORE = re.compile(r"""\bmcp\s*(?:\?\.)?(?:\.\s*(?P<name>[A-Za-z_$][\w$]*)|\[\s*(?P<q>["'])(?P<quoted>.*?)(?P=q)\s*\])\s*\??\.\s*$""")


def explain(error: JSError, code: str, catalog: Catalog, problems: Sequence[str] = ()) -> None:
    """Append the catalog's hint to a TypeError about an unknown tool or server (in place)."""
    if error.name != "TypeError":
        return
    target = _target(error, code)
    if target is None:
        return
    try:
        catalog.resolve(target)
        return  # it exists now (a server became ready after the lookup): nothing to add
    except ToolLookupError as exc:
        hint = str(exc)
    hint += problems_note(problems)
    error.message = f"{error.message}. {hint}"
    if error.traceback:
        error.traceback[0] = f"{error.name}: {error.message}"


def _target(error: JSError, code: str) -> dict[str, str] | None:
    m = _NOT_A_FUNCTION.match(error.message)
    if m:
        rest = m["rest"]
        if m["root"] == "tools":
            return {"safe": rest} if "." not in rest else None
        server, _, tool = rest.partition(".")
        return {"serverSafe": server, "toolSafe": tool} if tool and server not in ("tools", "call") else None
    m = _UNDEFINED_READ.match(error.message)
    if m is None:
        return None
    frame = next((f for f in map(_FRAME.match, error.traceback) if f), None)
    if frame is None:
        return None
    lines = code.split("\n")
    line, col = int(frame["line"]), int(frame["col"])
    if not 0 < line <= len(lines):
        return None
    before = _SERVER_BEFORE.search(lines[line - 1][: col - 1])
    if before is None:
        return None
    return {"serverSafe": before["name"] or before["quoted"], "toolSafe": m["prop"]}
