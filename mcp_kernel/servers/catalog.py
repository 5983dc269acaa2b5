"""The tool catalog: every exposed tool, its JS names, name resolution and argument checks.

JS names are made once, deterministically, so a notebook that calls ``tools.get_weather_v2``
keeps working across kernel restarts: characters outside ``[A-Za-z0-9_$]`` become ``_``, a
leading digit gets ``_``, reserved words get a trailing ``_``. A name that is already an
identifier keeps it; a mangled name that another tool (or a name the runtime uses) also wants
gets ``_`` and the first hex digits of its real name's SHA-1 (``wipe-all`` beside ``wipe_all``:
``wipe_all_8c29``). So each name depends only on its own tool, never on which tools came first:
the old ``_2`` suffixes went to whichever name sorted first, and ``wipe_all`` lost its own name to
``wipe-all`` (whose name then ran the other tool).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..lean_imports import import_jsonschema
from .plain_check import plain_check

if TYPE_CHECKING:  # importing the MCP types costs ~0.3 s; the kernel loads them off its start-up path
    import mcp_types as types

RESERVED = set(
    "break case catch class const continue debugger default delete do else enum export extends false finally for "
    "function if import in instanceof new null return super switch this throw true try typeof var void while with "
    "yield let static implements interface package private protected public await arguments eval undefined NaN Infinity "
    "constructor prototype __proto__ toString valueOf hasOwnProperty then call apply bind".split()
)


def bounded_validator(schema: Any) -> Any:
    """A jsonschema validator for ``schema`` whose ``pattern`` and ``patternProperties`` checks have a
    time bound: a pattern that backtracks forever (``^(a+)+$``) is skipped, and the server checks it."""
    import regex

    from .schema import PATTERN_SECONDS

    jsonschema = import_jsonschema()
    base = jsonschema.validators.validator_for(schema)

    def search(pattern: str, text: str) -> bool | None:
        try:
            return regex.search(pattern, text, timeout=PATTERN_SECONDS) is not None
        except (regex.error, TimeoutError):
            return None

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        if validator.is_type(instance, "string") and search(patrn, instance) is False:
            yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                if search(patrn, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    bounded = jsonschema.validators.extend(base, {"pattern": pattern, "patternProperties": pattern_properties})
    return bounded(schema, registry=local_registry())


def local_registry() -> Any:
    """A registry that never fetches: jsonschema's default one retrieves remote ``$ref``s, so a
    server's schema could make the kernel request any URL each time a cell calls its tool. A ``$ref``
    that does not resolve within the schema itself accepts anything here: the server checks it."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    return Registry(retrieve=lambda uri: Resource.from_contents({}, default_specification=DRAFT202012))  # type: ignore[call-arg]


def safe_identifier(name: str) -> str:
    ident = re.sub(r"[^A-Za-z0-9_$]", "_", name) or "_"
    if ident[0].isdigit():
        ident = "_" + ident
    if ident in RESERVED:
        ident += "_"
    return ident


def js_names(names: Iterable[str], reserved: Iterable[str] = ()) -> dict[str, str]:
    """A distinct JS name for each real name, none of them in ``reserved``, in the order given (see the module's docstring)."""
    wanted = {name: safe_identifier(name) for name in dict.fromkeys(names)}
    taken = set(reserved)
    out = {name: ident for name, ident in wanted.items() if ident == name and ident not in taken}  # identifiers keep theirs
    taken |= set(out.values())
    mangled = sorted(name for name in wanted if name not in out)
    claims = Counter(wanted[name] for name in mangled)
    for name in mangled:
        ident = wanted[name]
        if ident not in taken and claims[ident] == 1:
            out[name] = ident
        else:
            digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()
            out[name] = next(c for n in range(4, 41, 2) if (c := f"{ident}_{digest[:n]}") not in taken)
        taken.add(out[name])
    return {name: out[name] for name in wanted}


@dataclass
class ToolEntry:
    server: str
    name: str  # the upstream tool name
    tool: types.Tool
    server_safe: str = ""  # mcp.<server_safe>
    tool_safe: str = ""  # mcp.<server_safe>.<tool_safe>
    safe: str = ""  # tools.<safe>; "" when the short name is ambiguous across servers
    _validator: Any = field(default=None, repr=False)
    _plain: Any = field(default=False, repr=False)  # plain_check of the input schema; False: not made yet
    _signature: str | None = field(default=None, repr=False)

    @property
    def qualified(self) -> str:
        return f"{self.server}.{self.name}"

    @property
    def call_path(self) -> str:
        return f"mcp.{self.server_safe}.{self.tool_safe}"

    @property
    def signature(self) -> str:
        """The one-line TypeScript signature, rendered the first time an error message needs it."""
        if self._signature is None:
            try:
                from .typescript import signature

                self._signature = signature(self.call_path, self.tool.model_dump(by_alias=True, exclude_none=True))
            except Exception:  # noqa: BLE001 - a message must never fail to build
                props = (self.tool.input_schema or {}).get("properties", {})
                self._signature = f"{self.call_path}({{ {', '.join(props)} }})"
        return self._signature

    def summary(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "name": self.name,
            "qualified": self.qualified,
            "serverSafe": self.server_safe,
            "toolSafe": self.tool_safe,
            "safe": self.safe,
            "description": (self.tool.description or "").strip().split("\n")[0][:200],
        }


class ToolLookupError(Exception):
    """An unknown or ambiguous tool name; the message lists what the user can write instead."""


class Catalog:
    """All tools of all ready servers, in a stable order."""

    def __init__(self) -> None:
        self.entries: list[ToolEntry] = []
        self.server_safe: dict[str, str] = {}
        self._by_server: dict[str, dict[str, ToolEntry]] = {}
        self._by_safe: dict[str, ToolEntry] = {}
        self._by_short: dict[str, list[ToolEntry]] = {}

    def rebuild(self, servers: Iterable[tuple[str, list[types.Tool]]], all_server_names: Iterable[str] = ()) -> None:
        """Recompute every name from scratch (servers in config order)."""
        old_validators = {(e.server, e.name): (e.tool, e._validator, e._signature, e.call_path) for e in self.entries}
        self.entries = []
        self.server_safe = {}
        self._by_server, self._by_safe, self._by_short = {}, {}, {}
        servers = list(servers)
        self.server_safe = js_names([*all_server_names, *(server for server, _ in servers)], ("call", "tools", "servers", "listTools"))
        for server, tools in servers:
            tool_safe = js_names((t.name for t in tools), ("resources", "prompts"))
            per_server: dict[str, ToolEntry] = {}
            for tool in sorted(tools, key=lambda t: t.name):
                entry = ToolEntry(server=server, name=tool.name, tool=tool, server_safe=self.server_safe[server])
                entry.tool_safe = tool_safe[tool.name]
                cached = old_validators.get((server, tool.name))
                if cached and cached[0] == tool:
                    entry._validator = cached[1]
                    entry._signature = cached[2] if cached[3] == entry.call_path else None
                per_server[tool.name] = entry
                self.entries.append(entry)
                self._by_short.setdefault(tool.name, []).append(entry)
            self._by_server[server] = per_server
        # tools.<name>: names one server has; tools.call, .search and .describe are the runtime's
        unique = [entry for entry in self.entries if len(self._by_short[entry.name]) == 1]
        safe = js_names((entry.name for entry in unique), ("call", "search", "describe"))
        for entry in unique:
            entry.safe = safe[entry.name]
            self._by_safe[entry.safe] = entry

    # ---- resolution -------------------------------------------------------------------------

    def get(self, server: str, name: str) -> ToolEntry | None:
        return self._by_server.get(server, {}).get(name)

    def resolve(self, target: dict[str, Any]) -> ToolEntry:
        """The tool a JS call means. One rule for every form: each name may be the real one or its JS name.

        ``{server, tool}`` / ``{serverSafe, toolSafe}`` come from ``mcp.<server>.<tool>``,
        ``api.callTool(server, tool)`` and ``api.describeTool(server, tool)``; ``{name}`` / ``{safe}``
        from ``mcp.call(…)``, ``mcp.tools[…]``, ``tools.<name>`` and ``api.describeTool(name)``, where
        the name is a tool's name or ``server.tool``.
        """
        server = target.get("server", target.get("serverSafe"))
        if server is not None:
            tool = str(target.get("tool", target.get("toolSafe", "")))
            shown = f"mcp.{server}.{tool}" if "serverSafe" in target else f"{server}.{tool}"
            real = self.server_named(str(server))
            if real is None or real not in self._by_server:
                label = f"mcp.{server}" if "serverSafe" in target else f'"{server}"'
                raise ToolLookupError(f"Unknown MCP server {label}. {self._servers_hint()}")
            entry = self._on_server(real, tool)
            if entry is None:
                raise ToolLookupError(self._unknown(shown, tool, real))
            return entry
        name = str(target.get("name", target.get("safe", "")))
        return self._resolve_name(name, f"tools.{name}" if "safe" in target else name)

    def server_named(self, name: str) -> str | None:
        """The real name of a server given by its real or its JS name."""
        if name in self.server_safe:
            return name
        return next((real for real, safe in self.server_safe.items() if safe == name), None)

    def _on_server(self, server: str, tool: str) -> ToolEntry | None:
        tools = self._by_server.get(server, {})
        return tools.get(tool) or next((e for e in tools.values() if e.tool_safe == tool), None)

    def _resolve_name(self, name: str, shown: str) -> ToolEntry:
        found = self._by_short.get(name, [])
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            choices = ", ".join(f"{e.call_path}(…)" for e in found)
            raise ToolLookupError(
                f'"{name}" is ambiguous: {len(found)} servers have it. Call one of: {choices}, or mcp.call("server.{name}", …)'
            )
        if name in self._by_safe:
            return self._by_safe[name]
        # "server.tool", either part real or JS; both may hold dots, so try every split
        dot = name.find(".")
        while dot > 0:
            server = self.server_named(name[:dot])
            entry = self._on_server(server, name[dot + 1 :]) if server is not None else None
            if entry is not None:
                return entry
            dot = name.find(".", dot + 1)
        matches = [e for e in self.entries if e.tool_safe == name]
        if len(matches) == 1:
            return matches[0]
        raise ToolLookupError(self._unknown(shown, name, None))

    def _unknown(self, shown: str, name: str, server: str | None) -> str:
        prefix = ""
        if server is None:  # they may have written server.tool: suggest tools of that server, in that form
            dot = name.find(".")
            while dot > 0 and server is None:
                server = self.server_named(name[:dot])
                if server is not None:
                    prefix, name = name[: dot + 1], name[dot + 1 :]
                dot = name.find(".", dot + 1)
        pool = [e for e in self.entries if server is None or e.server == server]
        names = [e.name for e in pool] + [e.safe for e in pool if e.safe] + [e.tool_safe for e in pool]
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(dict.fromkeys(prefix + c for c in close))}?" if close else ""
        where = f' on server "{server}"' if server and not prefix else ""
        return f"Unknown MCP tool {shown}{where}.{hint} Use api.searchTools(query) or api.listTools() to find tools."

    def _servers_hint(self) -> str:
        names = ", ".join(f"mcp.{safe}" for safe in self.server_safe.values())
        return f"Servers: {names}." if names else "No MCP servers are connected."

    # ---- argument checks ----------------------------------------------------------------------

    def check_arguments(self, entry: ToolEntry, args: Any) -> None:
        """Raise ValueError naming the field, the expected type and the signature (the caller's TypeError)."""
        if not isinstance(args, dict):
            raise ValueError(f"{entry.call_path} expects one argument object, got {type(args).__name__}.\n  Signature: {entry.signature}")
        schema = entry.tool.input_schema
        if not schema:
            return
        if entry._plain is False:
            entry._plain = plain_check(schema)
        if entry._plain is not None and entry._plain(args):
            return
        if entry._validator is None:
            entry._validator = bounded_validator(schema)
        problems = [_describe(entry, e) for e in sorted(entry._validator.iter_errors(args), key=lambda e: (len(e.path), str(e.path)))]
        # Unknown top-level keys are almost always typos of optional arguments, which servers
        # would silently ignore; refuse them unless the schema explicitly allows extra keys.
        props = schema.get("properties") or {}
        if props and schema.get("additionalProperties") in (None, False):
            for key in args:
                if key not in props and not any("unknown argument" in p and repr(key) in p for p in problems):
                    close = difflib.get_close_matches(key, list(props), n=1, cutoff=0.6)
                    hint = f"did you mean {close[0]!r}? " if close else ""
                    problems.append(f"{entry.call_path}: unknown argument {key!r} ({hint}allowed: {', '.join(props)})")
        if problems:
            first, *rest = problems
            more = "".join(f"\n  also: {p.split(': ', 1)[1]}" for p in rest[:4])
            raise ValueError(f"{first}{more}\n  Signature: {entry.signature}")


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _describe(entry: ToolEntry, error: Any) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    field_name = f'"{path}"' if path else "the argument object"
    shown = json.dumps(error.instance)[:80] if error.instance is not None else "null"
    kind = error.validator
    if kind == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        name = f"{path}.{missing[0]}" if path and missing else (missing[0] if missing else "?")
        return f'{entry.call_path}: missing required argument "{name}"'
    if kind == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"{entry.call_path}: argument {field_name} must be {expected}, got {_type_name(error.instance)} {shown}"
    if kind == "enum":
        allowed = " | ".join(json.dumps(v) for v in error.validator_value)
        return f"{entry.call_path}: argument {field_name} must be one of {allowed}, got {shown}"
    if kind == "additionalProperties":
        extra = re.findall(r"'([^']+)'", error.message)
        allowed = ", ".join(sorted((error.schema.get("properties") or {}).keys()))
        return f"{entry.call_path}: unknown argument {', '.join(repr(x) for x in extra)} (allowed: {allowed})"
    return f"{entry.call_path}: argument {field_name} is invalid: {error.message}"
