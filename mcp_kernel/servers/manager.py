"""All MCP servers of one kernel: start them, keep the catalog current, serve calls from JS.

This is the Python side of ``mcp.*``, ``tools.*`` and the server functions of ``api.*``
(see ``mcp_kernel/api/mcp.js``). It has no Jupyter imports: the kernel gives it an engine and a
way to tell the user things (a line on the running cell's stderr).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..calltrace import CellTrace
from ..engine import BridgeError, CallContext, Engine
from . import discovery
from .catalog import Catalog, ToolEntry, ToolLookupError, import_jsonschema
from .config import DEMO_NAME, LoadedConfig, ServerSpec, banner_lines, effective_servers, parse_spec
from .connection import Events, ServerConnection, ServerUnavailable
from .typescript import Shape, observe

import_jsonschema()  # this module loads off the kernel's start-up path; pay for jsonschema here

Tell = Callable[[str | None, str], None]  # (cell or None for "the running cell", text)


class ServerManager:
    """Owns every ServerConnection and the catalog built from their tools."""

    def __init__(self, engine: Engine, tell: Tell) -> None:
        self.engine = engine
        self.tell = tell
        self.config: LoadedConfig | None = None
        self.source = "none"
        self.connections: dict[str, ServerConnection] = {}
        self.catalog = Catalog()
        self.log_dir = Path(tempfile.mkdtemp(prefix="mcp2repl-logs-"))
        #: the kernel's CellTrace for a cell (None outside cells): call records and live display
        self.trace_for: Callable[[str], CellTrace | None] = lambda cell: None
        #: TypeScript shapes of results seen per (server, tool), for docs and describeTool
        self.observed: dict[tuple[str, str], str] = {}
        self._shapes: dict[tuple[str, str], tuple[str, Shape]] = {}
        self.index = discovery.ToolIndex()  # built on first search after a catalog change
        self._register()

    # ---- start-up -----------------------------------------------------------------------------

    def load(self, config: LoadedConfig) -> None:
        """Start every configured server (or the demo when nothing is configured), concurrently."""
        self.config = config
        self.source, specs = effective_servers(config)
        for spec in specs:
            self._add(spec)
        self._publish()

    def _add(self, spec: ServerSpec) -> ServerConnection:
        events = Events(
            notice=lambda text: self.tell(None, text + "\n"),
            tools_changed=lambda conn: self._publish(),
            log_message=self._server_log,
        )
        conn = ServerConnection(spec, self.log_dir, events)
        self.connections[spec.name] = conn
        conn.start()
        if not spec.error:
            task = asyncio.ensure_future(self._when_ready(conn))
            task.add_done_callback(lambda t: t.exception())
        return conn

    async def _when_ready(self, conn: ServerConnection) -> None:
        await conn.wait_started()
        self._publish()

    async def wait_all(self, timeout: float | None = None) -> None:
        """Wait until every server is ready or failed (used by tests and `api.servers({wait})`)."""
        waits = [c.wait_ready() for c in self.connections.values() if c.state == "starting"]
        if waits:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits, return_exceptions=True), timeout)

    def status_lines(self) -> list[str]:
        rows = [
            (
                c.name,
                c.spec.transport,
                c.state,
                len(self._exposed(c)) if c.state == "ready" else None,
                c.last_error if c.state != "ready" else None,
            )
            for c in self.connections.values()
        ]
        return banner_lines(self.source, self.config, rows)

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections.values()), return_exceptions=True)
        shutil.rmtree(self.log_dir, ignore_errors=True)

    # ---- catalog ------------------------------------------------------------------------------

    def _exposed(self, conn: ServerConnection) -> list[types.Tool]:
        return [t for t in conn.tools if conn.spec.tool_filter.allows(t.name)]

    def _publish(self) -> None:
        """Rebuild the catalog and hand JS a fresh snapshot (names for mcp.*, tools.*, completion)."""
        ready = [(c.name, self._exposed(c)) for c in self.connections.values() if c.state == "ready" or c.tools]
        self.catalog.rebuild(ready, self.connections.keys())
        snapshot = {
            "servers": [
                {"name": n, "safe": s, "state": self.connections[n].state}
                for n, s in self.catalog.server_safe.items()
                if n in self.connections
            ],
            "tools": [e.summary() for e in self.catalog.entries],
        }
        self.engine.set_context_script("catalog", f"__mcp2repl.setCatalog({json.dumps(snapshot)})")

    async def _resolve(self, target: dict[str, Any]) -> ToolEntry:
        try:
            return self.catalog.resolve(target)
        except ToolLookupError:
            pending = [c for c in self.connections.values() if c.state == "starting"]
            server = target.get("server")
            if server is not None and server in self.connections:
                pending = [self.connections[server]]
            if not pending:
                raise
            # a cell that needs a slow server waits for it
            await asyncio.gather(*(c.wait_ready() for c in pending), return_exceptions=True)
            return self.catalog.resolve(target)

    # ---- JS handlers --------------------------------------------------------------------------

    def _register(self) -> None:
        handlers = {
            "mcp.call": self._call,
            "mcp.request": self._request,
            "api.servers": self._servers,
            "api.connect": self._connect,
            "api.disconnect": self._disconnect,
            "api.serverLog": self._server_log_tail,
            "api.calls": self._calls,
            "api.searchTools": self._search,
            "api.library": self._library,
            "api.describeTool": self._describe,
            "api.listTools": self._list_tools,
            "api.guide": self._guide,
        }
        for name, handler in handlers.items():
            self.engine.register(name, handler)

    def _named_server(self, target: dict[str, Any]) -> ServerConnection | None:
        """The connection a call target names explicitly (mcp.<server>.…, api.callTool), if any."""
        name = target.get("server", target.get("serverSafe"))
        return None if name is None else self._find_server(name)

    def _find_server(self, name: str) -> ServerConnection | None:
        """A connection by its name or its JS-safe name."""
        conn = self.connections.get(name)
        if conn is None:
            by_safe = {safe: n for n, safe in self.catalog.server_safe.items()}
            conn = self.connections.get(by_safe.get(name, ""))
        return conn

    async def _call(self, params: dict[str, Any], ctx: CallContext) -> Any:
        named = self._named_server(params["target"])
        if named is not None and named.state != "ready":
            try:  # a server that failed or crashed: (re)start it, or say why it cannot run
                await named.wait_ready()
            except ServerUnavailable as exc:
                raise BridgeError("ToolError", str(exc), server=named.name, code="server_unavailable") from None
        try:
            entry = await self._resolve(params["target"])
        except ToolLookupError as exc:
            raise BridgeError("TypeError", str(exc)) from None
        conn = self.connections[entry.server]
        args = params.get("args")
        if args is None:
            args = {}
        try:
            self.catalog.check_arguments(entry, args, self._signature(entry))
        except ValueError as exc:
            raise BridgeError("TypeError", str(exc), server=entry.server, tool=entry.name) from None

        trace = self.trace_for(ctx.cell)
        call = trace.begin(entry.server, entry.name, len(json.dumps(args))) if trace else None

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if trace and call:
                trace.progress(call, done, total, message)

        try:
            result = await conn.call_tool(entry.name, args, timeout=params.get("timeout"), progress=progress)
        except ServerUnavailable as exc:
            if trace and call:
                trace.end(call, False, error="server_unavailable")
            raise BridgeError("ToolError", str(exc), server=entry.server, tool=entry.name, code="server_unavailable") from None
        except MCPError as exc:
            if trace and call:
                trace.end(call, False, error=str(exc.error.code))
            message = exc.error.message
            if exc.error.code == -32001:
                message = f"no answer within {params.get('timeout') or conn.spec.timeout} s ({message})"
            raise BridgeError(
                "ToolError", f"{entry.qualified}: {message}", server=entry.server, tool=entry.name, code=str(exc.error.code)
            ) from None
        except asyncio.CancelledError:
            if trace and call:
                trace.end(call, False, error="cancelled")
            raise
        if not result.is_error:
            self._observe(entry, result)
        dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        if trace and call:
            trace.end(call, not result.is_error, bytes_in=_approx_size(result), error=None if not result.is_error else "tool_error")
        if result.structured_content is not None and not params.get("raw") and not result.is_error:
            dumped.pop("content", None)  # the same data twice would double the transfer
        dumped["_mcp2repl"] = {"server": entry.server, "tool": entry.name}
        return dumped

    def _observe(self, entry: ToolEntry, result: types.CallToolResult) -> None:
        """Merge the shape of this result into what the kernel has seen from the tool."""
        source, value = _result_value(result)
        if source is None:
            return
        key = (entry.server, entry.name)
        shape = observe(value)
        if key in self._shapes:
            shape = self._shapes[key][1].merge(shape)
        self._shapes[key] = (source, shape)
        self.observed[key] = shape.to_ts()

    def _signature(self, entry: ToolEntry) -> str:
        try:
            from .typescript import signature

            return "Signature: " + signature(entry.call_path, entry.tool.model_dump(by_alias=True, exclude_none=True))
        except Exception:  # noqa: BLE001 - a message must never fail to build
            props = (entry.tool.input_schema or {}).get("properties", {})
            return f"Signature: {entry.call_path}({{ {', '.join(props)} }})"

    async def _request(self, params: dict[str, Any], ctx: CallContext) -> Any:
        server = self._server_named(params["server"])
        method = params["method"]
        allowed = {"list_resources", "read_resource", "list_prompts", "get_prompt", "list_resource_templates"}
        if method not in allowed:
            raise BridgeError("TypeError", f"unknown request {method}")
        try:
            result = await server.request(method, *params.get("args", []))
        except ServerUnavailable as exc:
            raise BridgeError("ToolError", str(exc), server=server.name, code="server_unavailable") from None
        except MCPError as exc:
            raise BridgeError("ToolError", f"{server.name}: {exc.error.message}", server=server.name, code=str(exc.error.code)) from None
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    def _server_named(self, name: str) -> ServerConnection:
        conn = self._find_server(name)
        if conn is None:
            raise BridgeError("TypeError", f'Unknown MCP server "{name}". Servers: {", ".join(self.connections) or "none"}')
        return conn

    async def _servers(self, params: Any, ctx: CallContext) -> Any:
        if isinstance(params, dict) and params.get("wait"):
            await self.wait_all(float(params.get("timeout", 30)))
        return [
            {
                "name": c.name,
                "transport": c.spec.transport,
                "state": c.state,
                "tools": len(self._exposed(c)) if c.state == "ready" else 0,
                "source": self.source if c.name in (self.config.servers if self.config else {}) or c.name == DEMO_NAME else "api.connect",
                "description": c.spec.description,
                "server": c.server_info.name if c.server_info else None,
                "lastError": c.last_error,
            }
            for c in self.connections.values()
        ]

    async def _connect(self, params: dict[str, Any], ctx: CallContext) -> Any:
        name = params["name"]
        spec = parse_spec(name, params.get("spec"), base_dir=Path.cwd())
        if spec.error:
            raise BridgeError("TypeError", f'api.connect("{name}"): {spec.error}')
        old = self.connections.pop(name, None)
        if old is not None:
            await old.close()
        conn = self._add(spec)
        try:
            await conn.wait_ready()
        except ServerUnavailable as exc:
            self._publish()
            raise BridgeError("Error", f'api.connect("{name}"): {exc}') from None
        self._publish()
        return {"name": name, "state": conn.state, "tools": [t.name for t in self._exposed(conn)]}

    async def _disconnect(self, params: dict[str, Any], ctx: CallContext) -> Any:
        conn = self._server_named(params["name"])
        await conn.close()
        del self.connections[conn.name]
        self._publish()
        return {"name": conn.name, "state": "stopped"}

    async def _server_log_tail(self, params: dict[str, Any], ctx: CallContext) -> Any:
        conn = self._server_named(params["name"])
        return conn.log_tail(int(params.get("lines") or 50))

    async def _calls(self, params: Any, ctx: CallContext) -> Any:
        trace = self.trace_for(ctx.cell)
        return trace.records() if trace else []

    # ---- discovery ----------------------------------------------------------------------------

    async def _settled_entries(self) -> list[ToolEntry]:
        """Discovery answers about every server, so it waits briefly for ones still starting."""
        if any(c.state == "starting" for c in self.connections.values()):
            await self.wait_all(10)
        return self.catalog.entries

    async def _search(self, params: dict[str, Any], ctx: CallContext) -> Any:
        entries = await self._settled_entries()
        opts = params.get("options") or {}
        return self.index.sync(entries).search(
            str(params.get("query") or ""), limit=int(opts.get("limit", 8)), offset=int(opts.get("offset", 0)), server=opts.get("server")
        )

    async def _library(self, params: dict[str, Any], ctx: CallContext) -> Any:
        entries = await self._settled_entries()
        opts = params.get("options") or {}
        return discovery.library(self.index.sync(entries), str(params.get("query") or ""), int(opts.get("limit", 6)), self.observed)

    async def _describe(self, params: dict[str, Any], ctx: CallContext) -> Any:
        await self._settled_entries()
        target = {"server": params["server"], "tool": params["tool"]} if params.get("server") else {"name": params["tool"]}
        try:
            entry = self.catalog.resolve(target)
        except ToolLookupError as exc:
            raise BridgeError("TypeError", str(exc)) from None
        source, _ = self._shapes.get((entry.server, entry.name), (None, None))
        return discovery.describe(entry, self.observed.get((entry.server, entry.name)), source)

    async def _list_tools(self, params: dict[str, Any], ctx: CallContext) -> Any:
        entries = await self._settled_entries()
        opts = params.get("options") or {}
        return discovery.list_tools(entries, schemas=bool(opts.get("schemas", False)), server=opts.get("server"))

    async def _guide(self, params: dict[str, Any], ctx: CallContext) -> Any:
        opts = params.get("options") or {}
        return discovery.guide(str(params.get("query") or ""), int(opts.get("limit", 6)))

    def _server_log(self, conn: ServerConnection, level: str, text: str) -> None:
        with contextlib.suppress(OSError), open(conn.log_path, "a", encoding="utf-8") as fh:
            fh.write(f"[{level}] {text}\n")
        self.tell(None, f"[{conn.name}] {level}: {text}\n")


def _result_value(result: types.CallToolResult) -> tuple[str | None, Any]:
    """Where a result's data sits and its value, mirroring api.unwrap (mcp.js) for observation."""
    if result.structured_content is not None:
        return "structuredContent", result.structured_content
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    if len(result.content) == 1 and texts:
        if len(texts[0]) > 4_000_000:  # parsing 50 MB only to learn a shape is not worth it
            return None, None
        try:
            return "json text", json.loads(texts[0])
        except ValueError:
            return "text", texts[0]
    if result.content:
        return "content items", [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.content]
    return None, None


def _approx_size(result: types.CallToolResult) -> int:
    """Bytes of payload received: text and base64 data lengths, plus structured JSON."""
    size = len(json.dumps(result.structured_content)) if result.structured_content is not None else 0
    for item in result.content:
        size += len(getattr(item, "text", "") or getattr(item, "data", "") or "")
    return size
