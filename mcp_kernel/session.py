"""A Session: one persistent JavaScript environment with MCP servers, runnable without Jupyter.

The Jupyter kernel, the command line and the Python step API are thin faces over this object.
It wires the parts — engine (V8), display (views, artifacts, call traces), servers (config,
connections, catalog) and the runtime API (the JS ``api``, ``mcp`` and ``tools`` objects and their
Python handlers) — runs one cell at a time, and returns a typed outcome. Output is delivered to
an :class:`Output` given per execution; output that arrives after its cell ended (a timer, an
un-awaited call) still goes to that cell's Output.

The MCP SDK takes ~0.6 s to import, so the server layer loads in a thread while V8 starts, and
only cells that mention ``mcp``, ``tools`` or ``api`` wait for it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import __version__, api, display, gc_tuning, rundir
from .api.agent import AgentApi
from .api.discovery import DiscoveryApi
from .api.explain import explain
from .api.login import LoginApi
from .api.protocol import ProtocolApi
from .api.server_layer import ServerLayer
from .api.stepdata import NO_DATA, StepData
from .api.tools import Ask, ConnectPolicy, Limits, ToolsApi
from .api.types import TypesApi
from .display.artifacts import ArtifactStore, cell_stem, default_root
from .display.banner import banner_lines
from .display.calltrace import CellTrace
from .display.console import ConsoleBudget, DisplayBudget
from .display.server_logs import ServerLogLines
from .display.value import split_value
from .engine import CallContext, CellOutcome, Engine, introspection
from .engine.completeness import Verdict, classify
from .output import Discard, Masked, Output, Result
from .servers.config import LoadedConfig, config_files, demo_spec, effective_servers, load_config
from .servers.secrets import Redactor
from .servers.spawn import EarlyStarts
from .servers.spec import ServerSpec
from .servers.touched import touched

log = logging.getLogger(__name__)

#: Cells that may touch MCP servers wait until the server layer is loaded; others do not.
USES_SERVERS = re.compile(r"\b(?:mcp|tools|api)\b")
#: Cells whose late output is still routed (older cells' late output goes to the log).
KEPT_OUTPUTS = 500

Progress = Literal["display", "stderr", "off"]


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass
class SessionOptions:
    """How a session behaves; defaults come from the ``MCP2REPL_*`` environment variables."""

    timeout: float = field(default_factory=lambda: _env_float("MCP2REPL_TIMEOUT", 0.0))  # per cell, 0: none
    heap_limit_mb: int = field(default_factory=lambda: int(_env_float("MCP2REPL_HEAP_LIMIT_MB", 2048)))
    max_output_chars: int = field(default_factory=lambda: int(_env_float("MCP2REPL_MAX_OUTPUT_CHARS", 20000)))
    #: console characters one cell may show (0: as many as max_output_chars); the rest goes to an artifact
    max_console_chars: int = field(default_factory=lambda: int(_env_float("MCP2REPL_MAX_CONSOLE_CHARS", 0)))
    #: megabytes of displays (api.display, api.html, images) one cell may send; later ones are dropped
    max_display_mb: float = field(default_factory=lambda: _env_float("MCP2REPL_MAX_DISPLAY_MB", 16))
    config: str | None = field(default_factory=lambda: os.environ.get("MCP2REPL_CONFIG") or None)
    profile: str | None = field(default_factory=lambda: os.environ.get("MCP2REPL_PROFILE") or None)
    server: str | None = field(default_factory=lambda: os.environ.get("MCP2REPL_SERVER") or None)
    cwd: Path = field(default_factory=Path.cwd)
    artifact_dir: Path | None = None  # default: MCP2REPL_ARTIFACT_DIR, else <cwd>/.mcp2repl/artifacts
    #: "any" lets cells start servers of their choosing with api.connect (gives up the sandbox)
    allow_connect: str = field(default_factory=lambda: os.environ.get("MCP2REPL_ALLOW_CONNECT") or "configured")
    #: bytes of tool results one cell may pull in (the intermediate-transfer budget)
    transfer_budget_mb: float = field(default_factory=lambda: _env_float("MCP2REPL_TRANSFER_BUDGET_MB", 64))
    #: what hosts this session (a kernel's connection file, a CLI session's name): its next start
    #: reports how the last one ended if it died (see rundir); empty for a library user
    owner: str = ""
    #: a one-shot run knows all its code up front: start only the servers it touches (None: all)
    servers_for: str | None = None
    #: the session is its process's reason to be (a kernel, a one-shot run): set the garbage collector for it
    owns_process: bool = False


class Session:
    """The engine, servers, runtime API, display and artifacts of one JavaScript environment."""

    def __init__(self, options: SessionOptions | None = None) -> None:
        self.options = options or SessionOptions()
        self.engine = Engine(self, heap_limit_mb=self.options.heap_limit_mb)
        for name, source in [*display.scripts(), *api.scripts()]:
            self.engine.add_script(name, source)
        self.engine.set_data("about", {"version": __version__})
        self.engine.set_data("limits", {"maxOutputChars": max(200, self.options.max_output_chars)})
        self.config: LoadedConfig | None = None
        self._policy: tuple[LoadedConfig | None, str, ConnectPolicy] | None = None
        self._outputs: OrderedDict[str, Output] = OrderedDict()
        self._consoles: dict[str, ConsoleBudget] = {}
        self._displays: dict[str, DisplayBudget] = {}
        self._traces: dict[str, CellTrace] = {}
        self._count = 0
        self._loading: asyncio.Task[None] | None = None
        self._log_lines = ServerLogLines(self.notice)
        #: configured secrets, masked wherever text leaves the kernel (filled when the config is read)
        self.redactor = Redactor()
        self.artifacts = ArtifactStore(self.options.artifact_dir or default_root(self.options.cwd), config_files(self.options), base=self.options.cwd)
        display.serve_artifacts(self.engine, self.artifacts, self.redactor.text, self.redactor.json_text)
        self.servers = ServerLayer()
        self._askers: dict[str, Ask] = {}
        self._ends: dict[str, asyncio.Event] = {}  # set when its cell ends: a server's question to it is over
        #: said once, on the first cell's stderr (and in the banner): how the last run ended
        self.startup_notes: list[str] = []
        if self.options.owner:  # a scan of a few small files, before any loop runs
            self.startup_notes = rundir.previous_end(self.options.owner)
            rundir.current().record_owner(self.options.owner)
        self._noted = False
        limits = Limits(transfer_budget=int(self.options.transfer_budget_mb * (1 << 20)))
        self.tools = ToolsApi(  # tool calls, the approval gate (self.tools.gate) and plans
            self.servers, self._traces.get, self.options.cwd, self._connect_policy, self.redactor.text, limits, self._askers.get, masks=self.redactor
        )
        self.tools.register(self.engine)
        self.protocol = ProtocolApi(self.servers, self.options.cwd).register(self.engine)
        DiscoveryApi(self.servers, self.tools.approval_of, self.redactor.text).register(self.engine)
        AgentApi(self.servers, self.options.cwd, self.tools.approval_of).register(self.engine)
        TypesApi(self.servers).register(self.engine)
        self.login = LoginApi(self.servers, self._askers.get, self.display, lambda: self.engine.current_cell)
        self.login.register(self.engine)
        self.step_data = StepData(self.engine, max(200, self.options.max_output_chars))
        self._quiet = gc_tuning.Quiet(self.engine) if self.options.owns_process else None  # memory back between cells

    # ---- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start V8 and, in the background, the MCP layer and every configured server."""
        loop = asyncio.get_running_loop()
        self.servers.done = loop.create_future()
        try:  # cheap (no MCP imports): lets the banner list the servers while the SDK loads
            opts = self.options
            self.config = await asyncio.to_thread(load_config, explicit=opts.config, cwd=opts.cwd, profile=opts.profile, only=opts.server)
            self.redactor.add(self.config.secrets)
        except Exception:
            log.exception("could not read the MCP server configuration")
        source, specs = effective_servers(self.config, fallback=demo_spec()) if self.config else ("none", [])
        if self.options.servers_for is not None:
            specs = touched(self.options.servers_for, specs)
        # stdio servers start now, beside V8 and the SDK's import (most of a second), not after them
        early = EarlyStarts()
        spawning = asyncio.ensure_future(early.start(specs, rundir.current().server_logs)) if specs else None
        self._loading = asyncio.ensure_future(self._load_servers(source, specs, early, spawning))
        if self.options.owns_process:
            gc_tuning.tune()
        await self.engine.start(warm=self.options.servers_for is None)  # a one-shot's first cell comes at once

    async def _load_servers(self, source: str, specs: list[ServerSpec], early: EarlyStarts, spawning: asyncio.Future[None] | None) -> None:
        try:
            if spawning is None and self.options.servers_for is not None and not (self.config and self.config.problems):  # no SDK import
                self.servers.later = lambda: self._load_manager(source, specs, early, None)
            else:
                await self._load_manager(source, specs, early, spawning)
        finally:
            assert self.servers.done is not None
            self.servers.done.set_result(None)

    async def _load_manager(self, source: str, specs: list[ServerSpec], early: EarlyStarts, spawning: asyncio.Future[None] | None) -> None:
        try:
            module = await asyncio.to_thread(importlib.import_module, "mcp_kernel.servers.manager")
            events = module.ManagerEvents(
                notice=lambda text: self.notice(text),
                # with config problems, unknown names stay callable: the call says what is wrong
                catalog_changed=lambda snapshot: self.engine.set_data("catalog", {**snapshot, "problems": self.config.problems if self.config else []}),
                log_message=self._server_log,
                show_login=self.login.present,  # OAuth: the login link, to the running cell's person
                secret=self.redactor.add,  # tokens, masked like configured secrets
                person=self._person, resource_updated=self.protocol.updated,  # elicitation answers; subscription events
            )
            if spawning is not None:
                await spawning
            log_dir = early.log_dir or rundir.current().server_logs()
            manager = self.servers.loaded = module.ServerManager(events, log_dir=log_dir)
            if self.options.owns_process:
                gc_tuning.freeze()  # the SDK's and pydantic's models: loaded for good
            if self.config is not None:
                manager.load(source, specs, early)
        except Exception:
            log.exception("could not load the MCP server layer")
        finally:
            early.discard_rest()

    def _connect_policy(self) -> ConnectPolicy:
        """The policy of the config and rule in force; made once for them (it is asked on every tool call)."""
        made, rule = self._policy, self.options.allow_connect
        if made is None or made[0] is not self.config or made[1] != rule:  # the config by identity: never changed in place
            made = self._policy = (self.config, rule, ConnectPolicy.of(self.config, rule, demo_spec()))
        return made[2]

    async def close(self, leaving: bool = False) -> None:  # leaving: we exit next, servers are not waited for
        if self._quiet is not None:
            await self._quiet.close()
        await self.engine.close()
        self.artifacts.close()
        for loading in (self._loading, self.servers.loading):
            if loading is not None:
                await asyncio.wait({loading}, timeout=30)  # a manager still loading would start servers later
        if self.servers.loaded is not None:
            await self.servers.loaded.close(leaving)

    # ---- cells --------------------------------------------------------------------------------

    async def execute(
        self,
        code: str,
        output: Output | None = None,
        *,
        cell: str | None = None,
        progress: Progress = "display",
        time_limit: float | None = None,
        ask: Ask | None = None,
        data: Any = NO_DATA,
        max_output_chars: int | None = None,
    ) -> Result:
        """Run one cell. ``cell`` names it in tracebacks (default ``cell[N]``, counting from 1).

        ``ask`` puts a question to the person at the notebook (Jupyter's input request); without it,
        whatever needs an answer (a destructive tool behind the approval gate) is refused with a reason.
        ``data`` (any JSON) is this cell's global ``data``, ``max_output_chars`` its output limit (None: the session's).
        """
        if self._quiet is not None:
            self._quiet.cell_started()
        if cell is None:
            self._count += 1
            cell = f"cell[{self._count}]"
        out: Output = Masked(output, self.redactor) if output is not None else Discard()
        self._outputs[cell] = out
        self._outputs.move_to_end(cell)
        self._consoles[cell] = ConsoleBudget(max(200, self.options.max_console_chars or max_output_chars or self.options.max_output_chars))
        self._displays[cell] = DisplayBudget(int(self.options.max_display_mb * (1 << 20)))
        while len(self._outputs) > KEPT_OUTPUTS:
            oldest = self._outputs.popitem(last=False)[0]
            self._consoles.pop(oldest, None)
            self._displays.pop(oldest, None)
        display_id = f"mcp2repl-calls-{os.urandom(6).hex()}"  # not uuid (it loads platform), nor secrets (hmac: a one-shot pays for both)
        trace = CellTrace(
            publish=lambda bundle, update: out.display(bundle, {}, display_id, update),
            mode=progress,
            stderr=lambda text: out.stream("stderr", text),
        )
        self._traces[cell] = trace
        if ask is not None:
            self._askers[cell] = ask
        self._ends[cell] = asyncio.Event()
        if self.options.owner:
            rundir.current().record_cell(cell, code)
        if not self._noted and output is not None:  # a silent execution would swallow them
            self._noted = True
            # what only the banner said reaches JupyterLab, papermill and nbclient users too
            problems = [f"MCP server config problem: {p}" for p in self.config.problems] if self.config else []
            if self.startup_notes or problems:
                out.stream("stderr", "".join(f"[mcp2repl] {line}\n" for line in [*self.startup_notes, *problems]))
        ticker = asyncio.ensure_future(trace.ticking())
        saved = len(self.artifacts.saved)
        try:
            loading = self.servers.done
            if loading is not None and not loading.done() and USES_SERVERS.search(code):
                await asyncio.shield(loading)
            limit = time_limit if time_limit is not None else (self.options.timeout or None)
            unbound = await self.step_data.bind(cell, data, max_output_chars)  # NO_DATA and no limit bind nothing
            outcome = await self.engine.run_cell(code, cell, time_limit=limit) if unbound is None else CellOutcome(error=unbound)
        finally:
            await self.step_data.unbind(cell, data, max_output_chars)
            ticker.cancel()
            trace.finish()
            self._traces.pop(cell, None)
            self._askers.pop(cell, None)
            self._ends.pop(cell, asyncio.Event()).set()
            if summary := self._log_lines.summary(cell):
                out.stream("stderr", summary)
            await self._save_console(cell, out)
            if self.options.owner:
                rundir.current().record_idle()
            if self._quiet is not None:
                self._quiet.cell_ended()
        if outcome.error is not None and self.servers.loaded is not None:
            explain(outcome.error, code, self.servers.loaded.catalog, self.config.problems if self.config else ())
        v = split_value(outcome.data)
        saves = [self.artifacts.handle_json(h) for h in self.artifacts.saved[saved:]]
        self.artifacts.saved.clear()  # cells run one at a time: the list never outgrows one cell
        return Result(v.bundle, outcome.error, trace.records(), v.value, saves, v.is_json, v.notes + trace.notes(), v.shown).masked(self.redactor)

    async def call_api(self, name: str, params: Any) -> Any:
        """A runtime API handler called from Python as a cell would (serve's search_tools); raises BridgeError."""
        return await self.engine.bridge.handlers[name](params, CallContext(cell=self.engine.current_cell or ""))

    def _server_log(self, server: str, level: str, text: str) -> None:
        """A server's log notification: on the running cell (a bounded number), else the kernel log."""
        if (cell := self.engine.current_cell) is None:
            log.info("%s", self.redactor.text(f"[{server}] {level}: {text}"))
        else:
            self._log_lines.add(cell, server, level, text)

    def _person(self) -> Any:
        """Who can answer a server's elicitation now: the running cell's asker (None without stdin)."""
        from .servers.elicitation import Person  # loaded with the server layer, off the start-up path
        cell = self.engine.current_cell or ""
        return Person(self._askers.get(cell), in_cell=bool(cell), ended=self._ends.get(cell))

    async def _save_console(self, cell: str, out: Output) -> None:
        """A cell whose console output passed its budget: the whole log becomes an artifact."""
        budget = self._consoles.get(cell)
        if budget is None or budget.ended or not budget.end():
            return
        text = self.redactor.text(budget.log())
        try:
            name = self.artifacts.unique_name(f"console-{cell_stem(cell)}", "text")
            handle, eviction = await asyncio.to_thread(self.artifacts.save_within_cap, name, text, "text", True)
        except Exception as exc:  # noqa: BLE001 - a full disk must not fail the cell
            out.stream("stderr", f"[mcp2repl] the whole console log could not be saved: {exc}\n")
            return
        out.stream("stderr", budget.saved_line(handle.readWith) + eviction.message())

    def interrupt(self) -> None:
        """Stop the running cell (thread-safe; callable from a signal handler)."""
        self.engine.interrupt()

    def notice(self, text: str) -> None:
        """A kernel notice for the user: on the running cell's stderr, else in the log."""
        self.note(self.engine.current_cell or "", text)

    # ---- the engine's Sink: output of a cell goes to that cell's Output -------------------------------

    def stream(self, cell: str, name: str, text: str) -> None:
        out = self._outputs.get(cell)
        budget = self._consoles.get(cell)
        if budget is not None:
            text = budget.take(text)
        if out is not None:
            if text:
                out.stream(name, text)
        elif text.strip():
            log.info("%s %s: %s", cell or "(no cell)", name, self.redactor.text(text.rstrip()))

    def display(self, cell: str, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        out, budget = self._outputs.get(cell), self._displays.get(cell)
        if out is None or budget is None:
            return
        shown, note = budget.take(data)
        if shown:
            out.display(data, metadata, display_id, update)
        elif note:
            out.stream("stderr", note)

    def note(self, cell: str, text: str) -> None:
        out = self._outputs.get(cell)
        if out is not None:
            out.stream("stderr", text)
        else:
            log.info("%s", self.redactor.text(text.rstrip()))

    def clear_output(self, cell: str, wait: bool) -> None:
        if (out := self._outputs.get(cell)) is not None:
            out.clear_output(wait)

    # ---- read-only requests -------------------------------------------------------------------

    def is_complete(self, code: str) -> Verdict:
        return classify(code)

    async def complete(self, code: str, cursor: int) -> introspection.Completion:
        from .api import completion as tool_completion  # an editor's request, never a one-shot run's
        manager = self.servers.loaded
        found = tool_completion.complete(code, cursor, manager.catalog, manager.observed) if manager else None
        return found if found is not None else await introspection.complete(self.engine, code, cursor)

    async def inspect(self, code: str, cursor: int) -> dict[str, str] | None:
        from .api import completion as tool_completion
        manager = self.servers.loaded
        data = tool_completion.inspect(code, cursor, manager.catalog, manager.observed) if manager else None
        return data if data is not None else await introspection.inspect(self.engine, code, cursor)

    def notes(self) -> list[str]:
        """The start-up notes, masked (the config's secrets are known once ``start`` read it)."""
        return [self.redactor.text(line) for line in self.startup_notes]

    def server_lines(self) -> list[str]:
        """The banner's server lines: every server with its state, then config problems."""
        return [self.redactor.text(line) for line in self._server_lines()]

    def _server_lines(self) -> list[str]:
        config = self.config
        problems, warnings = (config.problems, config.warnings) if config else ([], [])
        manager = self.servers.loaded
        if manager is not None:
            rows = [(r.name, r.transport, r.state, r.tools, r.error) for r in manager.rows()]
            return banner_lines(manager.source, rows, problems, warnings)
        if config is None:
            return ["MCP servers: loading…"]
        source, specs = effective_servers(config, fallback=demo_spec())
        pending = [(s.name, s.transport, "error" if s.error else "starting", None, s.error) for s in specs]
        return banner_lines(source, pending, problems, warnings)
