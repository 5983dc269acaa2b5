"""The Python side of ``mcp.*``, ``tools.*`` and the server functions of ``api.*`` (see mcp.js).

JS sends a call target (names as the user wrote them) and arguments; here they are resolved
against the catalog, checked against the tool's schema, and sent through the server manager.
A result goes back as the JSON text pydantic makes of it, spliced into the reply unparsed: the
only place a result becomes a value is ``unwrap`` in mcp.js.

The MCP SDK takes ~0.6 s to import, so it is loaded with the server manager, off the start-up
path; this module names SDK types only where a handler runs, after the manager is there.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..display.calltrace import CellTrace
from ..engine import BridgeError, CallContext, Engine, JsonPieces, JsonText
from ..engine.errors import show_server_text
from ..servers.approval import approval
from ..servers.authspec import login_advice
from ..servers.catalog import ToolLookupError
from ..servers.config import LoadedConfig, problems_note
from ..servers.secrets import Redactor
from ..servers.shown import neutral
from ..servers.spec import ServerSpec, parse_spec
from .approvals import Ask, Elsewhere, Gate
from .plans import Plans
from .result_json import result_json
from .transfer import TransferBudget

if TYPE_CHECKING:
    from ..servers.connection import ServerConnection
    from ..servers.manager import ServerManager

Traces = Callable[[str], CellTrace | None]


@dataclass
class ConnectPolicy:
    """Which servers a cell may start: only those a config file defines (``configured``), or any (``any``).

    The rule is the session's (a kernel option, an environment variable or the config file), never
    a cell's: ``any`` lets cells start programs and reach URLs of their choosing, which gives up
    the sandbox. Specs written in a cell are then taken literally (no environment, no files).
    """

    rule: str
    available: dict[str, ServerSpec]
    source: str
    confirm_destructive: bool = False  # the config's default for servers that do not say
    problems: tuple[str, ...] = ()  # of the config: said wherever a server or tool is not found

    @classmethod
    def of(cls, config: LoadedConfig | None, allow_connect: str, demo: ServerSpec) -> ConnectPolicy:
        """The session's policy: its config's servers (``demo`` where no config file was found), its rule or the config's."""
        if config is None or (config.source is None and not config.problems):
            available, source = {demo.name: demo}, "a config file (none was found; the built-in demo runs)"
        else:
            available, source = dict(config.available), str(config.source)
        rule = "any" if "any" in (allow_connect, config.allow_connect if config else "") else "configured"
        problems = tuple(config.problems) if config else ()
        return cls(rule, available, source, confirm_destructive=bool(config and config.confirm_destructive), problems=problems)


@dataclass
class Limits:
    """What one cell may do with tools: how many bytes of results it may pull in."""

    transfer_budget: int = 64 << 20


class Servers(Protocol):
    """The session's server manager, which loads in the background."""

    loaded: ServerManager | None

    async def get(self) -> ServerManager: ...


@cache
def _sdk() -> tuple[type[Exception], type[Exception], int, frozenset[str]]:
    """MCPError, ServerUnavailable, the request-timeout code and the allowed requests (loaded by now)."""
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    from ..servers.connection import ServerUnavailable
    from ..servers.manager import REQUESTS

    return MCPError, ServerUnavailable, types.REQUEST_TIMEOUT, REQUESTS


@lru_cache(maxsize=1024)
def _reply_head(server: str, tool: str, observe: bool) -> str:
    """The start of a tool call's reply, up to its result: the same few texts on every call of a loop."""
    return json.dumps({"server": server, "tool": tool, "observe": observe}, ensure_ascii=False)[:-1] + ',"result":'


class ToolsApi:
    """Handlers for calls, resources and prompts, and server management from cells."""

    def __init__(
        self,
        servers: Servers,
        traces: Traces,
        base_dir: Path,
        policy: Callable[[], ConnectPolicy],
        redact: Callable[[str], str],
        limits: Limits | None = None,
        asker: Callable[[str], Ask | None] = lambda cell: None,
        masks: Redactor | None = None,
        elsewhere: Elsewhere | None = None,
    ) -> None:
        self.servers = servers
        self.traces = traces
        self.base_dir = base_dir
        self.policy = policy
        self.redact = redact  # configured secrets never reach JS in messages, states or logs
        self.masks = masks  # ... nor in answers: masked on their JSON text, before V8 parses it
        self.limits = limits or Limits()
        self.transfer = TransferBudget(self.limits.transfer_budget)  # tool results, resources, prompts; late calls too
        self.asker = asker  # the running cell's way to ask the person (None: nobody can answer)
        self.gate = Gate(asker, redact, elsewhere)  # approvals: y/n/a/s, plans (approvals.py)
        self.plans = Plans(self)  # api.plan: the recorded calls live here, never in JS (plans.py)

    def register(self, engine: Engine) -> None:
        show_server_text(neutral)  # a ToolError's text reaches tracebacks (and terminals) escaped
        handlers = {
            "mcp.call": self.call,
            "mcp.request": self.request,
            "api.servers": self.list_servers,
            "api.connect": self.connect,
            "api.disconnect": self.disconnect,
            "api.serverLog": self.server_log,
            "api.calls": self.calls,
        }
        handlers |= self.plans.handlers()
        for name, handler in handlers.items():
            engine.register(name, self._masking(handler))
        engine.register_note("mcp.observed", self.observed)

    def _masking(self, handler: Any) -> Any:
        """Answers and errors of a handler reach JS with configured secrets masked (a tool echoing a
        token, a 401 naming a URL with one): once in V8, a string can be split, reversed or
        base64-encoded past any mask on the way out."""

        async def run(params: Any, ctx: CallContext) -> Any:
            try:
                answer = await handler(params, ctx)
            except BridgeError as exc:
                raise BridgeError(exc.name, self.redact(exc.message), **{k: self.redact(v) for k, v in exc.extra.items()}) from None
            masks = self.masks
            if not masks or answer is None:
                return answer
            if isinstance(answer, JsonText):
                return JsonText(masks.json_text(answer))
            if isinstance(answer, JsonPieces):
                return JsonPieces(tuple(map(masks.json_text, answer.pieces)), tuple((path, masks.string(text)) for path, text in answer.texts))
            return masks.data(answer)

        return run

    # ---- tool calls ---------------------------------------------------------------------------

    async def call(self, params: dict[str, Any], ctx: CallContext) -> Any:
        """``mcp.call``: every JS naming form of a tool call ends here, so the approval gate is here."""
        entry, args, spec = await self.resolve(params["target"], params.get("args"), ctx.cell)
        verdict = approval(entry.tool, spec, self.policy().confirm_destructive)
        if verdict.writes and (planned := self.plans.record(ctx.cell, entry, args)) is not None:
            return JsonText(json.dumps({"server": entry.server, "tool": entry.name, "observe": False, "planned": planned}))
        if verdict.needed:
            await self.gate.check(entry, args, ctx.cell, self.traces(ctx.cell))
        pieces, _ = await self.send(entry, args, ctx.cell, params.get("timeout"), bool(params.get("raw")))
        return pieces

    def approval_of(self, entry: Any) -> str:
        """Whether calls of ``entry`` need approval and why, in one line (api.describeTool, tools.describe)."""
        manager = self.servers.loaded
        conn = manager.connections.get(entry.server) if manager else None
        return approval(entry.tool, conn.spec, self.policy().confirm_destructive).why if conn else "unknown: its server is gone"

    async def resolve(self, target: dict[str, Any], args: Any, cell: str) -> tuple[Any, dict[str, Any], ServerSpec]:
        """The catalog entry a call target names (its server started first), its checked arguments, its server's spec."""
        manager = await self.servers.get()
        unavailable = _sdk()[1]
        named = _named_server(manager, target)
        if named is not None and named.state != "ready":
            try:  # a server that failed or crashed: (re)start it, or say why it cannot run
                await named.wait_ready()
            except unavailable as exc:
                if named.state == "needs_login":  # an interactive cell was shown the link; here nobody could be
                    text = login_advice(named.name, headless=self.asker(cell) is None)
                    raise BridgeError("ToolError", text, server=named.name, code="needs_login") from None
                raise BridgeError("ToolError", str(exc), server=named.name, code="server_unavailable") from None
        try:
            entry = await manager.resolve(target)
        except ToolLookupError as exc:
            raise BridgeError("TypeError", str(exc) + problems_note(self.policy().problems)) from None
        if args is None:
            args = {}
        try:
            manager.catalog.check_arguments(entry, args)
        except ValueError as exc:
            raise BridgeError("TypeError", str(exc), server=entry.server, tool=entry.name) from None
        return entry, args, manager.connections[entry.server].spec

    async def send(self, entry: Any, args: dict[str, Any], cell: str, timeout: float | None = None, raw: bool = False) -> tuple[JsonPieces, bool]:
        """Send one call that passed the gate (recorded in the cell's trace); its reply, and whether the tool reported an error."""
        manager = await self.servers.get()
        mcp_error, unavailable, request_timeout, _ = _sdk()
        trace = self.traces(cell)
        record = trace.begin(entry.server, entry.name, len(json.dumps(args))) if trace else None

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if trace and record:  # the server's message reaches a person: escaped
                trace.progress(record, done, total, None if message is None else neutral(message, one_line=True))

        try:
            result = await manager.call_tool(entry, args, timeout=timeout, progress=progress)
        except unavailable as exc:
            if trace and record:
                trace.end(record, False, error="server_unavailable")
            raise BridgeError(
                "ToolError", str(exc), server=entry.server, tool=entry.name, code="server_unavailable", context=entry.qualified
            ) from None
        except mcp_error as exc:
            if trace and record:
                trace.end(record, False, error=str(exc.error.code))  # type: ignore[attr-defined]
            message = exc.error.message  # type: ignore[attr-defined]
            if exc.error.code == request_timeout:  # type: ignore[attr-defined]
                message = f"no answer within {timeout or manager.connections[entry.server].spec.timeout} s ({message})"
            raise BridgeError(
                "ToolError",
                message,
                server=entry.server,
                tool=entry.name,
                code=str(exc.error.code),
                context=entry.qualified,  # type: ignore[attr-defined]
            ) from None
        except asyncio.CancelledError:
            if trace and record:
                trace.end(record, False, error="cancelled")
            raise
        # structuredContent and its text copy are the same data: send it once unless asked for all
        lean = result.structured_content is not None and not raw and not result.is_error
        body, texts = result_json(result, lean)
        is_error = bool(result.is_error)
        del result  # a 50 MB result must not be held twice
        size = len(body) + sum(len(text) for _, text in texts)
        if problem := self.transfer.charge(cell, size, ended=trace is None):
            if trace and record:
                trace.end(record, False, bytes_in=size, error="intermediate_result_too_large")
            raise BridgeError(
                "ToolError",
                problem,
                server=entry.server,
                tool=entry.name,
                code="intermediate_result_too_large",
                context=entry.qualified,
            )
        if trace and record:
            trace.end(record, not is_error, bytes_in=size, error=None if not is_error else "tool_error")
        observe = not is_error and manager.observed.want((entry.server, entry.name))
        head = _reply_head(entry.server, entry.name, observe)
        return JsonPieces((head, body, "}"), tuple((["result", *path], text) for path, text in texts)), is_error

    def observed(self, params: dict[str, Any], ctx: CallContext) -> None:
        """A sampled result value from mcp.js: its shape documents the tool's return type."""
        manager = self.servers.loaded
        if manager is not None:
            manager.observed.add((params["server"], params["tool"]), params["source"], json.loads(params["json"]))

    # ---- resources, prompts and servers -----------------------------------------------------------

    async def request(self, params: dict[str, Any], ctx: CallContext) -> Any:
        manager = await self.servers.get()
        mcp_error, unavailable, _, requests = _sdk()
        conn = _server_named(manager, params["server"])
        method = params["method"]
        if method not in requests:
            raise BridgeError("TypeError", f"unknown request {method}")
        try:
            result = await manager.request(conn, method, *params.get("args", []))
        except unavailable as exc:
            raise BridgeError("ToolError", str(exc), server=conn.name, code="server_unavailable") from None
        except mcp_error as exc:
            error = exc.error  # type: ignore[attr-defined]
            raise BridgeError("ToolError", f"{conn.name}: {error.message}", server=conn.name, code=str(error.code)) from None
        text = result.model_dump_json(by_alias=True, exclude_none=True)
        del result  # a 64 MB resource must not be held twice
        if problem := self.transfer.charge(ctx.cell, len(text), ended=self.traces(ctx.cell) is None):
            raise BridgeError("ToolError", f"{conn.name}: {problem}", server=conn.name, code="intermediate_result_too_large")
        return JsonText(text)

    async def list_servers(self, params: Any, ctx: CallContext) -> Any:
        manager = await self.servers.get()
        if isinstance(params, dict) and params.get("wait"):
            await manager.wait_all(float(params.get("timeout", 30)))
        return [
            {
                "name": c.name,
                "transport": c.spec.transport,
                "state": c.state,
                "tools": len(manager.exposed(c)) if c.state == "ready" else 0,
                "source": manager.source if c.name in manager.configured else "api.connect",
                "description": c.spec.description,
                "server": c.server_info.name if c.server_info else None,
                "protocol": c.protocol,
                "lastError": self.redact(c.last_error) if c.last_error else None,
            }
            for c in manager.connections.values()
        ] + self._config_rows()

    def _config_rows(self) -> list[dict[str, Any]]:
        """A row per config problem: a server missing because of one is explained where servers are listed."""
        policy = self.policy()
        return [
            {
                "name": "(config)",
                "transport": None,
                "state": "config problem",
                "tools": 0,
                "source": policy.source,
                "description": None,
                "server": None,
                "protocol": None,
                "lastError": self.redact(problem),
            }
            for problem in policy.problems
        ]

    async def connect(self, params: dict[str, Any], ctx: CallContext) -> Any:
        manager = await self.servers.get()
        name = params["name"]
        spec = self._spec_for(name, params.get("spec"))
        if spec.error:
            raise BridgeError("TypeError", f'api.connect("{name}"): {spec.error}')
        try:
            conn = await manager.connect(spec)
        except _sdk()[1] as exc:
            raise BridgeError("Error", f'api.connect("{name}"): {exc}') from None
        return {"name": name, "state": conn.state, "tools": [t.name for t in manager.exposed(conn)]}

    def _spec_for(self, name: str, raw: Any) -> ServerSpec:
        policy = self.policy()
        if raw is not None and policy.rule == "any":
            return parse_spec(name, raw, base_dir=self.base_dir, substitute=False)
        defined = ", ".join(policy.available) or "none"
        if raw is not None:
            raise BridgeError(
                "PermissionError",
                f'api.connect("{name}", spec): cells may only (re)connect servers that the config defines ({defined}), '
                f'as api.connect("NAME"). To add "{name}", define it in {policy.source}; to let cells start any server, '
                'set "allow_connect": "any" in the config or MCP2REPL_ALLOW_CONNECT=any, which gives up the sandbox.',
            )
        spec = policy.available.get(name)
        if spec is None:
            raise BridgeError(
                "TypeError", f'api.connect("{name}"): the config ({policy.source}) defines no server "{name}"; it defines: {defined}'
            )
        return spec

    async def disconnect(self, params: dict[str, Any], ctx: CallContext) -> Any:
        manager = await self.servers.get()
        conn = _server_named(manager, params["name"])
        await manager.disconnect(conn)
        return {"name": conn.name, "state": "stopped"}

    async def server_log(self, params: dict[str, Any], ctx: CallContext) -> Any:
        conn = _server_named(await self.servers.get(), params["name"])
        return self.redact(conn.log_tail(int(params.get("lines") or 50)))

    async def calls(self, params: Any, ctx: CallContext) -> Any:
        trace = self.traces(ctx.cell)
        return trace.records() if trace else []


def _named_server(manager: ServerManager, target: dict[str, Any]) -> ServerConnection | None:
    """The connection a call target names explicitly (mcp.<server>.…, api.callTool), if any."""
    name = target.get("server", target.get("serverSafe"))
    return None if name is None else manager.find_server(name)


def _server_named(manager: ServerManager, name: str) -> ServerConnection:
    conn = manager.find_server(name)
    if conn is None:
        raise BridgeError("TypeError", f'Unknown MCP server "{name}". Servers: {", ".join(manager.connections) or "none"}')
    return conn
