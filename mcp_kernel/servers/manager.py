"""All MCP servers of one session: start them, keep the tool catalog current, and call their tools.

It knows nothing of V8, the runtime API or display: the api layer (``mcp_kernel/api/tools.py``)
turns JS calls into the typed calls here, and whoever owns the manager hears about notices,
catalog changes and server log lines through :class:`ManagerEvents`.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types

from ..lean_imports import import_jsonschema
from .catalog import Catalog, ToolEntry, ToolLookupError
from .config import ServerSpec
from .connection import Events, Progress, ServerConnection
from .elicitation import Person
from .shapes import ObservedShapes
from .shown import neutral
from .spawn import EarlyStarts

import_jsonschema()  # this module loads off the kernel's start-up path; pay for jsonschema here

#: Requests a cell may send to a server besides tool calls (resources and prompts).
REQUESTS = frozenset({"list_resources", "read_resource", "list_prompts", "get_prompt", "list_resource_templates"})


@dataclass
class ManagerEvents:
    """What the manager tells its owner; every callback is optional."""

    notice: Callable[[str], None] = lambda text: None  # a line for the user (the running cell's stderr)
    catalog_changed: Callable[[dict[str, Any]], None] = lambda snapshot: None  # names for mcp.*, tools.*
    log_message: Callable[[str, str, str], None] = lambda server, level, text: None
    #: OAuth: show a login link to the person at the running cell (False: nobody there); mask new tokens
    show_login: Callable[[str, str], bool] = lambda server, url: False
    secret: Callable[[Any], None] = lambda values: None
    #: who can answer a server's elicitation now (the session knows the running cell and its stdin)
    person: Callable[[], Person] = lambda: Person(None, in_cell=False)
    resource_updated: Callable[[str, str], None] = lambda server, uri: None  # notifications/resources/updated


@dataclass
class ServerRow:
    """One server as the banner and ``api.servers()`` show it."""

    name: str
    transport: str
    state: str
    tools: int | None
    error: str | None


class ServerManager:
    """Owns every ServerConnection and the catalog built from their tools."""

    def __init__(self, events: ManagerEvents | None = None, log_dir: Path | None = None) -> None:
        self.events = events or ManagerEvents()
        self.source = "none"
        self.configured: set[str] = set()  # names that came from the config (the rest: api.connect)
        self.connections: dict[str, ServerConnection] = {}
        self.catalog = Catalog()
        # the session's run folder keeps the logs for a post-mortem; a bare manager cleans up its own
        self._own_logs = log_dir is None
        self.log_dir = log_dir if log_dir is not None else Path(tempfile.mkdtemp(prefix="mcp2repl-logs-"))
        #: TypeScript shapes of results seen per (server, tool), for docs and describeTool
        self.observed = ObservedShapes()
        self._log_files: dict[str, _LogFile] = {}

    # ---- life cycle ---------------------------------------------------------------------------

    def load(self, source: str, specs: list[ServerSpec], early: EarlyStarts | None = None) -> None:
        """Start every server, concurrently; ``source`` says where they came from (for the banner).

        ``early`` holds processes started before the MCP layer loaded: each connection adopts its own.
        """
        self.source = source
        self.configured = {s.name for s in specs}
        for spec in specs:
            self._add(spec, early)
        if early is not None:
            early.discard_rest()
        self._publish()

    def _add(self, spec: ServerSpec, early: EarlyStarts | None = None) -> ServerConnection:
        events = Events(
            notice=lambda text: self.events.notice(neutral(text, spec.name) + "\n"),  # notices quote server text
            tools_changed=lambda conn: self._publish(),
            log_message=self._server_log,
            show_login=lambda server, url: self.events.show_login(server, url),
            secret=lambda values: self.events.secret(values),
            person=lambda: self.events.person(),
            resource_updated=lambda conn, uri: self.events.resource_updated(conn.name, uri),
        )
        conn = ServerConnection(spec, self.log_dir, events)
        self.connections[spec.name] = conn
        if early is not None and spec.transport == "stdio" and spec.command and not spec.error:
            conn.early = early.take(spec.name, conn.launch())
        conn.start()
        if not spec.error:
            task = asyncio.ensure_future(self._when_ready(conn))
            task.add_done_callback(lambda t: t.exception())
        return conn

    async def _when_ready(self, conn: ServerConnection) -> None:
        """A server that failed to start: its state in the snapshot (one that turned ready published then)."""
        await conn.wait_started()
        if conn.state != "ready":
            self._publish()

    async def wait_all(self, timeout: float | None = None) -> None:
        """Wait until every server is ready or failed (tests, ``api.servers({wait})``, discovery)."""
        waits = [c.wait_ready() for c in self.connections.values() if c.state == "starting"]
        if waits:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits, return_exceptions=True), timeout)

    def rows(self) -> list[ServerRow]:
        return [
            ServerRow(
                c.name,
                c.spec.transport,
                c.state,
                len(self.exposed(c)) if c.state == "ready" else None,
                c.last_error if c.state != "ready" else None,
            )
            for c in self.connections.values()
        ]

    async def close(self, leaving: bool = False) -> None:
        """Close every connection; ``leaving``: the process exits next (ServerConnection.close)."""
        await asyncio.gather(*(c.close(leaving) for c in self.connections.values()), return_exceptions=True)
        for logfile in self._log_files.values():
            logfile.close()
        if self._own_logs:
            shutil.rmtree(self.log_dir, ignore_errors=True)

    # ---- catalog ------------------------------------------------------------------------------

    def exposed(self, conn: ServerConnection) -> list[types.Tool]:
        return [t for t in conn.tools if conn.spec.tool_filter.allows(t.name)]

    def _publish(self) -> None:
        """Rebuild the catalog and hand a fresh snapshot to the owner (names for mcp.*, tools.*, completion)."""
        ready = [(c.name, self.exposed(c)) for c in self.connections.values() if c.state == "ready" or c.tools]
        self.catalog.rebuild(ready, self.connections.keys())
        snapshot = {
            "servers": [
                {"name": n, "safe": s, "state": self.connections[n].state}
                for n, s in self.catalog.server_safe.items()
                if n in self.connections
            ],
            "tools": [e.summary() for e in self.catalog.entries],
        }
        self.events.catalog_changed(snapshot)

    async def resolve(self, target: dict[str, Any]) -> ToolEntry:
        """The tool a call names; a name not known yet waits for the servers still starting."""
        try:
            return self.catalog.resolve(target)
        except ToolLookupError:
            pending = [c for c in self.connections.values() if c.state == "starting"]
            server = target.get("server")
            named = self.find_server(str(server)) if server is not None else None
            if named is not None:
                pending = [named]
            if not pending:
                raise
            await asyncio.gather(*(c.wait_ready() for c in pending), return_exceptions=True)
            return self.catalog.resolve(target)

    async def settled_entries(self) -> list[ToolEntry]:
        """Every tool, after waiting briefly for servers still starting (discovery answers about all)."""
        if any(c.state == "starting" for c in self.connections.values()):
            await self.wait_all(10)
        return self.catalog.entries

    def find_server(self, name: str) -> ServerConnection | None:
        """A connection by its name or its JS-safe name."""
        return self.connections.get(self.catalog.server_named(name) or name)

    # ---- calls --------------------------------------------------------------------------------

    async def call_tool(
        self, entry: ToolEntry, args: dict[str, Any], timeout: float | None = None, progress: Progress | None = None
    ) -> types.CallToolResult:
        """Call a resolved tool. Raises ServerUnavailable, or the SDK's MCPError for protocol errors."""
        return await self.connections[entry.server].call_tool(entry.name, args, timeout=timeout, progress=progress)

    async def request(self, conn: ServerConnection, method: str, *args: Any) -> Any:
        """A resources/prompts request (one of :data:`REQUESTS`)."""
        if method not in REQUESTS:
            raise ValueError(f"unknown request {method}")
        return await conn.request(method, *args)

    async def connect(self, spec: ServerSpec) -> ServerConnection:
        """Start (or restart) a server from a spec; raises ServerUnavailable when it cannot run."""
        old = self.connections.pop(spec.name, None)
        if old is not None:
            await old.close()
        conn = self._add(spec)
        try:
            await conn.wait_ready()
        finally:
            self._publish()
        return conn

    async def disconnect(self, conn: ServerConnection) -> None:
        await conn.close()
        self.connections.pop(conn.name, None)
        logfile = self._log_files.pop(conn.name, None)
        if logfile is not None:
            logfile.close()
        self._publish()

    def _server_log(self, conn: ServerConnection, level: str, text: str) -> None:
        """A log notification: always into the server's log file (api.serverLog reads it), then on
        to whoever shows it; a flood is bounded there, per cell, not here."""
        logfile = self._log_files.get(conn.name)
        if logfile is None or logfile.path != conn.log_path:
            if logfile is not None:
                logfile.close()
            logfile = self._log_files[conn.name] = _LogFile(conn.log_path)
        logfile.write(f"[{level}] {text}\n")
        self.events.log_message(conn.name, level, neutral(text, conn.name))


class _LogFile:
    """One server's log file, kept open: a flood of notifications must not reopen it per line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file: Any = None

    def write(self, line: str) -> None:
        with contextlib.suppress(OSError):
            if self.file is None:
                self.file = open(self.path, "a", encoding="utf-8", errors="replace")
            self.file.write(line)
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            with contextlib.suppress(OSError):
                self.file.close()
            self.file = None
