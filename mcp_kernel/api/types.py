"""``api.types()``: the TypeScript declarations of this kernel's globals, as one ``.d.ts`` text.

Agents and editors that type-check cells offline need the tools' types as real declarations,
not as the docs ``api.library`` shows. The tool types are the ones the docs use
(``servers/typescript.py: tool_declaration``), so the two never disagree; the ``api`` object is
declared from the JSDoc of its own JS files (jsdoc.py). Nothing here runs at cell time: types
are erased before a cell runs and never checked by the kernel.

Shape of the text: ``mcp2repl.*`` helper types, then ``declare namespace mcp`` with a namespace
per server (a function per tool, with a second overload for ``{ raw: true }``), ``mcp.call``,
``mcp.tools[…]``, ``declare namespace tools`` (aliases of the same functions), ``declare
namespace api`` and the runtime's other globals (``sleep``, ``emit``, ``ToolError``…).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..engine import BridgeError, CallContext, Engine
from . import SCRIPTS
from .tools import Servers

if TYPE_CHECKING:  # the TypeScript and JSDoc machinery loads with the first api.types(), not with every session
    from ..servers.catalog import ToolEntry
    from ..servers.typescript import ToolDeclaration
    from .jsdoc import Declaration

#: Globals the runtime defines besides what ES and the DOM library declare (setTimeout, console,
#: URL, TextEncoder… are in TypeScript's "dom" lib, which the header tells users to add).
RUNTIME = """\
declare namespace mcp2repl {
  /** Options of a tool call: `timeout` in seconds for this call. */
  interface CallOptions {
    timeout?: number;
    /** `true` returns the whole MCP result (see RawCallOptions). */
    raw?: false;
  }
  /** `{ raw: true }`: the call returns the whole MCP result, not its unwrapped value. */
  interface RawCallOptions {
    timeout?: number;
    raw: true;
  }
  /** One item of a tool result's `content`. */
  type ContentItem =
    | { type: "text"; text: string }
    | { type: "image"; data: string; mimeType: string }
    | { type: "audio"; data: string; mimeType: string }
    | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
    | { type: "resource_link"; uri: string; name: string; mimeType?: string; description?: string };
  /** An MCP CallToolResult, as a call with `{ raw: true }` returns it. */
  interface CallToolResult {
    content: ContentItem[];
    structuredContent?: { [key: string]: unknown };
    isError?: boolean;
    _meta?: { [key: string]: unknown };
  }
  /** A tool function not known when the declarations were made (`mcp.tools[name]`). */
  type AnyTool = (...args: any[]) => Promise<any>;
  /** What `tools.call` returns: it never throws. */
  type CallOutcome = { ok: true; data: any } | { ok: false; error: { code: string; message: string } };
  /** `mcp.<server>.resources`. */
  interface ServerResources {
    list(): Promise<{ uri: string; name: string; mimeType?: string; description?: string }[]>;
    templates(): Promise<{ uriTemplate: string; name: string; mimeType?: string; description?: string }[]>;
    /** A resource's contents: text (parsed when JSON), a blob item, or a list when several. */
    read(uri: string): Promise<any>;
    /** Run `onUpdate` on each update of the resource the server sends; `unsubscribe()` stops it. */
    subscribe(uri: string, onUpdate: (event: { server: string; uri: string }) => unknown): Promise<{ uri: string; unsubscribe(): Promise<boolean> }>;
  }
  /** `mcp.<server>.prompts`. */
  interface ServerPrompts {
    list(): Promise<{ name: string; description?: string; arguments?: { name: string; description?: string; required?: boolean }[] }[]>;
    get(name: string, args?: { [key: string]: string }): Promise<{ description?: string; messages: { role: "user" | "assistant"; content: ContentItem }[] }>;
  }
}

/** A tool returned an error result, or its server failed. */
declare class ToolError extends Error {
  server?: string;
  tool?: string;
  code?: string;
  /** `server.tool`, shown before the message. */
  context?: string;
  /** The result's structuredContent, when the error had one. */
  data?: unknown;
}
/** A promise that resolves after `ms` milliseconds. */
declare function sleep(ms: number): Promise<void>;
declare function setImmediate(callback: (...args: any[]) => void, ...args: any[]): number;
declare function clearImmediate(id: number | undefined): void;
"""
#: Runtime globals declared from a JS function of the API files (name -> the function's name there).
GLOBAL_FUNCTIONS = ("emit",)
#: Names a server namespace has for itself (mcp.js): a tool of that name is reachable as mcp.tools[…] only.
SERVER_MEMBERS = ("resources", "prompts")
_WORD = r"(?<![\w$.]){}(?![\w$])(?!\s*\??:)"  # a type's name, not a property key of that name


class TypesApi:
    """``api.types(options)``: waits for servers still starting, like the other discovery calls."""

    def __init__(self, servers: Servers) -> None:
        self.servers = servers

    def register(self, engine: Engine) -> None:
        engine.register("api.types", self.types)

    async def types(self, params: dict[str, Any], ctx: CallContext) -> str:
        manager = await self.servers.get()
        entries = await manager.settled_entries()
        server = (params.get("options") or {}).get("server")
        safe = manager.catalog.server_safe
        if server:
            if server not in safe and server not in safe.values():
                known = ", ".join(f'"{name}"' for name in safe) or "none"
                raise BridgeError("TypeError", f'api.types: no server "{server}" (servers: {known})')
            entries = [e for e in entries if server in (e.server, e.server_safe)]
        return render(entries, safe, manager.observed)


def render(entries: Sequence[ToolEntry], server_safe: Mapping[str, str], observed: Mapping[tuple[str, str], str]) -> str:
    """The whole ``.d.ts`` for these catalog entries (``observed``: result shapes seen so far)."""
    api = api_declarations()
    servers = sorted({e.server for e in entries}, key=list(server_safe).index)
    out = [_header(servers), RUNTIME]
    out += _mcp(entries, server_safe, observed)
    out += _tools(entries)
    out.append("declare namespace api {")
    out += [decl.render() for key, decl in api.items() if key.startswith("api.")]
    out.append("}")
    for name in GLOBAL_FUNCTIONS:
        if name in api:
            out.append(api[name].render(indent="").replace("function ", "declare function ", 1))
    return "\n".join(out) + "\n"


@lru_cache(maxsize=1)
def api_declarations() -> dict[str, Declaration]:
    """Declarations read from every API script, in load order (later files add members); the
    files are part of the package, so they are read once."""
    from .jsdoc import declarations

    found: dict[str, Declaration] = {}
    root = resources.files("mcp_kernel.api")
    for name in SCRIPTS:
        found.update(declarations((root / name).read_text(encoding="utf-8")))
    return found


def _header(servers: list[str]) -> str:
    return f"""\
// TypeScript declarations of an mcp2repl {__version__} kernel: the tools of {", ".join(servers) or "no server"},
// the api object and the runtime's globals. Generated by `await api.types()`; the tools' types are
// those of api.library (argument schemas; results from the output schema, or from results seen).
// Type-check cells offline: put them, in order, into a .ts file beside this one, then
//   tsc --noEmit --strict --target esnext --lib esnext,dom --module esnext --moduleDetection force mcp2repl.d.ts cells.ts
// (cells use top-level await; a cell's bare last expression is fine, a top-level `return` is not TypeScript).
"""


def _mcp(entries: Sequence[ToolEntry], server_safe: Mapping[str, str], observed: Mapping[tuple[str, str], str]) -> list[str]:
    from ..servers.typescript import tool_declaration

    out = ["declare namespace mcp {"]
    for server, safe in server_safe.items():
        mine = [e for e in entries if e.server == server]
        if not mine:
            continue
        out.append(f"  /** The tools of MCP server {json.dumps(server)}. */")
        out.append(f"  namespace {safe} {{")
        named: dict[str, str] = {}
        tools: list[str] = []
        for entry in mine:
            if entry.tool_safe in SERVER_MEMBERS:
                continue
            tool = entry.tool.model_dump(by_alias=True, exclude_none=True)
            decl = _unique_types(tool_declaration(entry.call_path, tool, observed=observed.get((entry.server, entry.name))), named)
            tools.append(_tool(entry, decl))
        out += [f"    type {name} = {_indent(text, 4)};" for name, text in named.items()]
        out += tools
        out += ["    const resources: mcp2repl.ServerResources;", "    const prompts: mcp2repl.ServerPrompts;", "  }"]
    out += [
        "  /** Call a tool by name: `\"server.tool\"`, or a tool name only one server has. */",
        "  function call(name: string, args?: { [key: string]: unknown }, options?: mcp2repl.CallOptions): Promise<any>;",
        "  function call(name: string, args: { [key: string]: unknown } | undefined, options: mcp2repl.RawCallOptions): Promise<mcp2repl.CallToolResult>;",
        "  /** Every tool by its real name, `mcp.tools[\"server.tool\"]` or `mcp.tools[\"tool\"]`; unknown names are undefined. */",
        "  const tools: {",
    ]
    for entry in entries:
        if entry.tool_safe in SERVER_MEMBERS:
            continue
        ref = f"typeof mcp.{entry.server_safe}.{entry.tool_safe}"
        out.append(f"    readonly {json.dumps(entry.qualified)}: {ref};")
        if entry.safe:
            out.append(f"    readonly {json.dumps(entry.name)}: {ref};")
    out += [
        "    readonly [name: string]: mcp2repl.AnyTool | undefined;",
        "  };",
        "  /** The state of every server (same as api.servers()). */",
        "  function servers(): ReturnType<typeof api.servers>;",
        "}",
    ]
    return out


def _tool(entry: ToolEntry, decl: ToolDeclaration) -> str:
    doc = [*decl.doc, f" * @example {decl.example}"]
    comment = ["    /**", *(f"    {line}".rstrip() for line in doc), "     */"]
    args = _indent(decl.args, 4) or "args?: Record<string, never>"  # no parameters: options still come second
    returns = _indent(decl.returns, 4)
    signature = f"    function {entry.tool_safe}({args}, options?: mcp2repl.CallOptions): Promise<{returns}>;"
    raw_args = f"args: {args.removeprefix('args?: ')} | undefined" if args.startswith("args?: ") else args
    raw = f"    function {entry.tool_safe}({raw_args}, options: mcp2repl.RawCallOptions): Promise<mcp2repl.CallToolResult>;"
    return "\n".join([*comment, signature, raw])


def _tools(entries: Sequence[ToolEntry]) -> list[str]:
    out = ["/** Every tool whose name only one server has, by its JS name (tools.<name>). */", "declare namespace tools {"]
    for entry in entries:
        if entry.safe and entry.tool_safe not in SERVER_MEMBERS:
            out.append(f"  export import {entry.safe} = mcp.{entry.server_safe}.{entry.tool_safe};")
    out += [
        "  /** Call a tool by name and never throw: `{ ok: true, data }` or `{ ok: false, error: { code, message } }`. */",
        "  function call(name: string, args?: { [key: string]: unknown }, options?: mcp2repl.CallOptions): Promise<mcp2repl.CallOutcome>;",
        "}",
    ]
    return out


def _unique_types(decl: ToolDeclaration, named: dict[str, str]) -> ToolDeclaration:
    """Recursive types go to the server's namespace; a name taken by another definition is renamed."""
    renames: dict[str, str] = {}
    for name, text in decl.types.items():
        new = name if name not in _TYPE_KEYWORDS else f"{name}_"
        n = 2
        while new in named and named[new] != text:
            new, n = f"{name}_{n}", n + 1
        if new != name:
            renames[name] = new
    if not renames:
        named.update({k: v for k, v in decl.types.items() if k not in named})
        return decl

    def fix(text: str) -> str:
        for old, new in renames.items():
            text = re.sub(_WORD.format(re.escape(old)), new, text)
        return text

    types = {renames.get(k, k): fix(v) for k, v in decl.types.items()}
    for k, v in types.items():
        named.setdefault(k, v)
    from ..servers.typescript import ToolDeclaration

    return ToolDeclaration(decl.name, types, decl.doc, fix(decl.args), fix(decl.returns), decl.example)


def _indent(text: str, spaces: int) -> str:
    return text.replace("\n", "\n" + " " * spaces)


#: Names a type alias cannot have.
_TYPE_KEYWORDS = frozenset(
    "any unknown never void undefined null string number boolean bigint symbol object this true false "
    "break case catch class const continue debugger default delete do else enum export extends finally for "
    "function if import in instanceof new return super switch throw try typeof var while with".split()
)
