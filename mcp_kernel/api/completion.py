"""Completion and inspection of MCP names (``mcp.``, ``tools.``, argument objects), from the catalog.

This answers from Python alone, so it is instant and works while a cell keeps V8 busy. Anything
that is not about tools falls through to the engine's own completion (globals, properties).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..engine.introspection import Completion
from ..servers.catalog import Catalog, ToolEntry
from ..servers.typescript import signature, tool_doc

_IDENT = r"[A-Za-z_$][\w$]*"
#: TypeScript type arguments between a callee and its ``(`` (``tools.call<Book>(…``), erased at run time
_TYPE_ARGS = r"(?:\s*<[^();]*>)?"
#: ``mcp["chrome-devtools"]``: a server by its real name
_QUOTED_SERVER = r"""mcp\[\s*["'][^"'\]]+["']\s*\]"""
_SERVER_MEMBERS = {"resources": "module", "prompts": "module"}
_MCP_MEMBERS = {"call": "function", "tools": "module", "servers": "function"}


_SIGNATURES: dict[tuple[int, str, str | None], str] = {}


def _sig(entry: ToolEntry, observed: dict[tuple[str, str], str] | None = None) -> str:
    """The one-line signature, cached: `tools.` on a big catalog would otherwise render them all."""
    seen = (observed or {}).get((entry.server, entry.name))
    key = (id(entry.tool), entry.call_path, seen)
    cached = _SIGNATURES.get(key)
    if cached is None:
        try:
            cached = signature(entry.call_path, _tool_dict(entry), observed=seen)
        except Exception:  # noqa: BLE001 - a signature is a nicety; never fail completion
            cached = f"{entry.call_path}(args)"
        if len(_SIGNATURES) > 20000:
            _SIGNATURES.clear()
        _SIGNATURES[key] = cached
    return cached


def _tool_dict(entry: ToolEntry) -> dict[str, Any]:
    return entry.tool.model_dump(by_alias=True, exclude_none=True)


def _rows(rows: list[tuple[str, str, str]], start: int, cursor: int) -> Completion:
    rows.sort(key=lambda r: r[0].lower())
    return Completion(
        matches=[r[0] for r in rows],
        start=start,
        end=cursor,
        types=[{"start": start, "end": cursor, "text": n, "type": t, "signature": s} for n, t, s in rows],
    )


#: Only this much text before the cursor is searched: the patterns below are bounded by it, so a
#: 100,000-character line cannot make completion slow.
WINDOW = 2000


def complete(code: str, cursor: int, catalog: Catalog, observed: dict[tuple[str, str], str] | None = None) -> Completion | None:
    """Tool-aware completion at ``cursor`` (code points), or None to let the engine answer."""
    before = code[max(0, cursor - WINDOW) : cursor]
    by_safe = {safe: server for server, safe in catalog.server_safe.items()}

    m = re.search(r"""mcp\.tools\[\s*(["'])([^"'\]]*)$""", before)
    if m:  # mcp.tools["na|
        prefix = m.group(2)
        names = {e.qualified for e in catalog.entries} | {e.name for e in catalog.entries if e.safe}
        return _rows([(n, "function", "") for n in names if n.startswith(prefix)], cursor - len(prefix), cursor)

    m = re.search(r"""(?<![\w$.])mcp\[\s*(["'])([^"'\]]*)$""", before)
    if m:  # mcp["chrome-dev|: servers by their real names
        prefix = m.group(2)
        rows = [(server, "module", f"MCP server {server}") for server in catalog.server_safe if server.startswith(prefix)]
        return _rows(rows, cursor - len(prefix), cursor)

    m = re.search(rf"""(?<![\w$.])mcp\[\s*(["'])([^"'\]]+)\1\s*\]\s*\.({_IDENT})?$""", before)
    if m:  # mcp["chrome-devtools"].|
        server = catalog.server_named(m.group(2))
        if server is None:
            return None
        prefix = m.group(3) or ""
        return _rows(_server_rows(catalog, server, prefix, observed), cursor - len(prefix), cursor)

    m = re.search(rf"(?<![\w$.])(mcp|tools)\.(?:({_IDENT})\.)?({_IDENT})?$", before)
    if m:
        root, middle, prefix = m.group(1), m.group(2), m.group(3) or ""
        start = cursor - len(prefix)
        rows: list[tuple[str, str, str]] = []
        if root == "tools" and middle is None:
            rows = [(e.safe, "function", _sig(e, observed)) for e in catalog.entries if e.safe and e.safe.startswith(prefix)]
            rows.append(
                ("call", "function", "tools.call(name, args): Promise<{ ok: true, data } | { ok: false, error: { code, message } }>")
            )
        elif root == "mcp" and middle is None:
            rows = [(safe, "module", f"MCP server {server}") for server, safe in catalog.server_safe.items() if safe.startswith(prefix)]
            rows += [(n, t, "") for n, t in _MCP_MEMBERS.items() if n.startswith(prefix)]
        elif root == "mcp" and middle in by_safe:
            rows = _server_rows(catalog, by_safe[middle], prefix, observed)
        else:
            return None
        rows = [r for r in rows if r[0].startswith(prefix)]
        return _rows(rows, start, cursor)

    entry, inside = _call_object(before, catalog)
    if entry is not None:  # tools.search_books({ qu|
        m = re.search(rf"({_IDENT})?$", before)
        prefix = m.group(1) or "" if m else ""
        props = (entry.tool.input_schema or {}).get("properties", {})
        required = set((entry.tool.input_schema or {}).get("required", []))
        present = set(re.findall(rf"({_IDENT})\s*:", inside))
        rows = []
        for name, schema in props.items():
            if name.startswith(prefix) and name not in present:
                opt = "" if name in required else "?"
                rows.append((name, "property", f"{name}{opt}: {_short_type(schema)}"))
        return _rows(rows, cursor - len(prefix), cursor)
    return None


def _server_rows(catalog: Catalog, server: str, prefix: str, observed: dict[tuple[str, str], str] | None) -> list[tuple[str, str, str]]:
    """What ``mcp.<server>.`` offers: the server's tools by JS name, then its resources and prompts."""
    rows = [(e.tool_safe, "function", _sig(e, observed)) for e in catalog.entries if e.server == server and e.tool_safe.startswith(prefix)]
    return rows + [(n, t, "") for n, t in _SERVER_MEMBERS.items() if n.startswith(prefix)]


def _short_type(schema: Any) -> str:
    try:
        from ..servers.typescript import schema_to_ts

        return schema_to_ts(schema)
    except Exception:  # noqa: BLE001
        return "unknown"


def _call_object(before: str, catalog: Catalog) -> tuple[ToolEntry | None, str]:
    """The tool whose argument object literal the cursor is in: ``callee({ … |``."""
    m = re.search(
        rf"((?:mcp|tools)(?:\.{_IDENT})+|{_QUOTED_SERVER}\.{_IDENT}|mcp\.tools\[\s*[\"'][^\"']+[\"']\s*\]|mcp\.call\(\s*[\"'][^\"']+[\"']\s*,){_TYPE_ARGS}\s*\(?\s*\{{([^{{}}]*)$",
        before,
    )
    if not m:
        return None, ""
    callee, inside = m.group(1), m.group(2)
    return _entry_for(callee, catalog), inside


def _entry_for(callee: str, catalog: Catalog) -> ToolEntry | None:
    m = re.match(r"""mcp\.(?:tools\[\s*|call\(\s*)["']([^"']+)["']""", callee)
    quoted = re.fullmatch(rf"""mcp\[\s*["']([^"']+)["']\s*\]\.({_IDENT})""", callee)
    target: dict[str, Any]
    if m:
        target = {"name": m.group(1)}
    elif quoted:
        target = {"serverSafe": quoted.group(1), "toolSafe": quoted.group(2)}
    else:
        parts = callee.split(".")
        if parts[0] == "tools" and len(parts) == 2:
            target = {"safe": parts[1]}
        elif parts[0] == "mcp" and len(parts) == 3:
            target = {"serverSafe": parts[1], "toolSafe": parts[2]}
        else:
            return None
    try:
        return catalog.resolve(target)
    except Exception:  # noqa: BLE001 - unknown names simply get no completion
        return None


def inspect(code: str, cursor: int, catalog: Catalog, observed: dict[tuple[str, str], str] | None = None) -> dict[str, str] | None:
    """The generated TypeScript doc of the tool at (or called around) the cursor."""
    right = re.match(r"[\w$]*", code[cursor : cursor + WINDOW])
    end = cursor + (len(right.group(0)) if right else 0)
    before = code[max(0, end - WINDOW) : end]
    m = re.search(rf"((?:mcp|tools)(?:\.{_IDENT})+|{_QUOTED_SERVER}\.{_IDENT})$", before) or re.search(
        rf"((?:mcp|tools)(?:\.{_IDENT})+|{_QUOTED_SERVER}\.{_IDENT}){_TYPE_ARGS}\s*\([^()]*$", code[max(0, cursor - WINDOW) : cursor]
    )
    entry = _entry_for(m.group(1), catalog) if m else None
    if entry is None:
        entry, _ = _call_object(code[max(0, cursor - WINDOW) : cursor], catalog)
    if entry is None:
        return None
    doc = tool_doc(entry.call_path, _tool_dict(entry), observed=(observed or {}).get((entry.server, entry.name)))
    head = f"{entry.call_path} — tool {json.dumps(entry.name)} on server {json.dumps(entry.server)}"
    return {
        "text/plain": f"{head}\n\n{doc}",
        "text/markdown": f"**{entry.call_path}** — tool `{entry.name}` on server `{entry.server}`\n\n```ts\n{doc}\n```",
    }
