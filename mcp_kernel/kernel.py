"""The Jupyter side: maps protocol messages onto the engine, and nothing else.

Three things here are not obvious from the wrapper-kernel recipe:

* ipykernel's interrupt signals the whole process group (and its pre-handler hook turns SIGINT
  into KeyboardInterrupt inside our coroutine). Both are replaced: an interrupt raises the
  engine's shared-memory flag, from the control thread or a signal handler, and nothing else.
* Shell requests are served one at a time, so completion would wait behind a running cell.
  Requests that never touch a running cell's state are dispatched concurrently instead.
* Output is sent with the parent captured when its cell started, so late output from timers
  lands in the cell that created them (while the frontend still listens).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import re
import signal
import sys
import threading
import uuid
from collections import OrderedDict
from contextvars import copy_context
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ipykernel._version import kernel_protocol_version
from ipykernel.kernelbase import Kernel
from traitlets import Float, Int, Unicode

from . import __version__, api
from .api import handlers as api_handlers
from .artifacts import ArtifactStore
from .calltrace import CellTrace
from .engine import Engine, introspection
from .engine.completeness import classify
from .history import History
from .servers import completion as tool_completion
from .servers.config import LoadedConfig, banner_lines, effective_servers, load_config

if TYPE_CHECKING:
    from .servers.manager import ServerManager

#: Cells that may touch MCP servers wait until the server layer is loaded; others do not.
_USES_SERVERS = re.compile(r"\b(?:mcp|tools|api)\b")

#: Shell requests answered even while a cell runs: they only read state.
CONCURRENT_REQUESTS = {
    "complete_request",
    "is_complete_request",
    "inspect_request",
    "kernel_info_request",
    "history_request",
    "comm_info_request",
}


#: Seconds the process may take to exit by itself after answering a shutdown request.
SHUTDOWN_GRACE = 1.2
#: Cells that mean "leave", as in IPython (a frontend such as jupyter console acts on the payload).
EXIT_WORDS = {"exit", "quit", "exit()", "quit()"}


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def v8_version() -> str:
    try:
        from py_mini_racer._dll import init_mini_racer

        return str(init_mini_racer(ignore_duplicate_init=True).mr_v8_version().decode())
    except Exception:  # noqa: BLE001 - only cosmetic
        return ""


async def _tick(trace: CellTrace) -> None:
    """Keep the live call display's clock moving while a cell waits on slow tools."""
    while True:
        await asyncio.sleep(0.25)
        trace.tick()


def _skip_empty_flush(stream: Any) -> None:
    """Make ipykernel's per-request stdout/stderr flushes free when nothing was printed.

    Each flush is a round trip to the IOPub thread; the kernel calls four per cell, and JS
    output never goes through sys.stdout, so they were most of a trivial cell's latency.
    """
    buffers = getattr(stream, "_buffers", None)
    lock = getattr(stream, "_buffer_lock", None)
    if buffers is None or lock is None:
        return
    flush = stream.flush

    def flush_if_needed() -> None:
        with lock:
            pending = any(buf.tell() for buf in stream._buffers.values())
        if pending:
            flush()

    stream.flush = flush_if_needed


class MCPKernel(Kernel):
    """JavaScript cells in one persistent V8 context."""

    _execute_sleep = Float(0.0).tag(config=True)  # ipykernel sleeps 0.5 ms before every reply

    implementation = "mcp2repl"
    implementation_version = __version__
    language = "javascript"
    help_links: ClassVar[list[dict[str, str]]] = [{"text": "mcp2repl README", "url": "https://pypi.org/project/mcp2repl/"}]

    timeout = Float(
        _env_float("MCP2REPL_TIMEOUT", 0.0),
        config=True,
        help="Per-cell time limit in seconds (0: none). Also MCP2REPL_TIMEOUT.",
    )
    heap_limit_mb = Int(
        int(_env_float("MCP2REPL_HEAP_LIMIT_MB", 2048)),
        config=True,
        help="V8 heap limit in MB; a cell that needs more fails with RangeError. Also MCP2REPL_HEAP_LIMIT_MB.",
    )

    max_output_chars = Int(
        int(_env_float("MCP2REPL_MAX_OUTPUT_CHARS", 20000)),
        config=True,
        help="Largest cell result or api.print view, in characters; bigger values are fitted and saved as artifacts. Also MCP2REPL_MAX_OUTPUT_CHARS.",
    )
    progress_mode = Unicode(
        os.environ.get("MCP2REPL_PROGRESS", "auto"),
        config=True,
        help="Live tool-call display: auto (display; stderr for jupyter console), display, stderr or off. Also MCP2REPL_PROGRESS.",
    )
    mcp_config = Unicode(
        os.environ.get("MCP2REPL_CONFIG", ""),
        config=True,
        help="Path of the MCP server config file (else mcp2repl.json/.mcp.json/mcp.json here, else ~/.config/mcp2repl/). Also MCP2REPL_CONFIG.",
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.engine = Engine(self, heap_limit_mb=self.heap_limit_mb)
        for name, source in api.scripts():
            self.engine.add_script(name, source)
        self.history = History()
        self._parents: OrderedDict[str, tuple[dict[str, Any], bool]] = OrderedDict()
        self._traces: dict[str, CellTrace] = {}
        self._reply_calls: dict[str, list[dict[str, Any]]] = {}
        self._silent_count = 0
        self._v8 = v8_version()
        # The MCP layer (the SDK takes ~0.6 s to import) is loaded in the background at boot,
        # so a first cell that needs no server does not wait for it.
        self.servers: ServerManager | None = None
        self._servers_loaded: asyncio.Future[None] | None = None
        self._config: LoadedConfig | None = None
        self.artifacts = ArtifactStore()
        self.engine.set_context_script("limits", f"__mcp2repl.maxOutputChars = {max(200, self.max_output_chars)}")
        api_handlers.register(self.engine, self.artifacts)
        self._terminal_sessions: set[str] = set()

    # ---- start-up -------------------------------------------------------------------------

    def start(self) -> None:
        super().start()
        for stream in (sys.stdout, sys.stderr):
            _skip_empty_flush(stream)
        self.io_loop.add_callback(self._boot)

    async def _boot(self) -> None:
        loop = asyncio.get_running_loop()
        # Signal-mode clients and `kill -INT`: stop JS, never raise KeyboardInterrupt.
        loop.add_signal_handler(signal.SIGINT, self.engine.interrupt)
        self._servers_loaded = loop.create_future()
        try:  # cheap (no MCP imports): lets the banner list the servers while the SDK loads
            self._config = load_config(
                explicit=self.mcp_config or None,
                cwd=Path.cwd(),
                profile=os.environ.get("MCP2REPL_PROFILE") or None,
                only=os.environ.get("MCP2REPL_SERVER") or None,
            )
        except Exception:
            self.log.exception("could not read the MCP server configuration")
        try:
            await self.engine.start()
        except Exception:
            self.log.exception("could not start the JavaScript engine")
        try:
            # servers then start concurrently with each other; cells wait only for what they use
            module = await asyncio.to_thread(importlib.import_module, "mcp_kernel.servers.manager")
            servers = module.ServerManager(self.engine, self._tell)
            servers.trace_for = self._traces.get
            self.servers = servers
            servers.load(self._config)
        except Exception:
            self.log.exception("could not load the MCP server configuration")
        finally:
            self._servers_loaded.set_result(None)

    def _pending_banner(self) -> list[str]:
        """Banner lines before the MCP layer is loaded: every server is still starting."""
        if self._config is None:
            return ["MCP servers: loading…"]
        source, specs = effective_servers(self._config)
        rows = [(s.name, s.transport, "error" if s.error else "starting", None, s.error) for s in specs]
        return banner_lines(source, self._config, rows)

    def _tell(self, cell: str | None, text: str) -> None:
        """A kernel notice for the user: on the given cell's stderr, else the running cell's."""
        target = cell or self.engine.current_cell
        if target is not None:
            self.stream(target, "stderr", text)
        else:
            self.log.info("%s", text.rstrip())

    def pre_handler_hook(self) -> None:
        """The base installs default_int_handler here; SIGINT stays ours (see _boot)."""

    def post_handler_hook(self) -> None:
        """Nothing to restore: pre_handler_hook changed nothing."""

    @property
    def language_info(self) -> dict[str, Any]:  # type: ignore[override]
        return {
            "name": "javascript",
            "version": self._v8,
            "mimetype": "text/javascript",
            "file_extension": ".js",
            "pygments_lexer": "javascript",
            "codemirror_mode": "javascript",
            "nbconvert_exporter": "script",
        }

    @property
    def banner(self) -> str:  # type: ignore[override]
        return (
            f"mcp2repl {__version__}: JavaScript (V8 {self._v8}) in one persistent context.\n"
            "Cells are async: top-level await works, the last expression is the result.\n"
            "No file system, network or process access from JS; MCP tools are the way out.\n"
            + "\n".join(self.servers.status_lines() if self.servers else self._pending_banner())
        )

    @property
    def kernel_info(self) -> dict[str, Any]:
        # Not super(): the base imports ipykernel.debugger (debugpy prints warnings into the
        # user's terminal) only to advertise a debugger and subshells this kernel does not have.
        return {
            "protocol_version": kernel_protocol_version,
            "implementation": self.implementation,
            "implementation_version": self.implementation_version,
            "language_info": self.language_info,
            "banner": self.banner,
            "help_links": self.help_links,
            "supported_features": [],
        }

    # ---- concurrency and interrupts -------------------------------------------------------------

    async def shell_main(self, subshell_id: str | None, msg: Any) -> None:
        if self._main_asyncio_lock.locked() and self.session is not None and subshell_id is None:
            try:
                _, frames = self.session.feed_identities(msg, copy=False)
                header = self.session.deserialize(frames, content=False, copy=False)["header"]
            except Exception:  # noqa: BLE001 - let the normal path report bad messages
                header = {}
            if header.get("msg_type") in CONCURRENT_REQUESTS:
                await self._dispatch_concurrently(msg, header)
                return
        await super().shell_main(subshell_id, msg)

    async def _dispatch_concurrently(self, msg: Any, header: dict[str, Any]) -> None:
        """Serve a read-only request beside a running cell, with its own busy/idle pair."""
        shell_parent = self.get_parent("shell")
        shell_ident = self._get_shell_context_var(self._shell_parent_ident)
        parent = {"header": header}
        try:
            self._publish_status("busy", "shell", parent)
            task = asyncio.create_task(self.dispatch_shell(msg, concurrent=True), context=copy_context())
            await task
            self._publish_status("idle", "shell", parent)
        finally:
            self.set_parent(shell_ident, shell_parent, channel="shell")

    async def interrupt_request(self, stream: Any, ident: Any, parent: Any) -> None:
        """Stop the running JS; unlike the base class, never signal the process group."""
        self.engine.interrupt()
        self.session.send(stream, "interrupt_reply", {"status": "ok"}, parent, ident=ident)

    async def create_subshell_request(self, socket: Any, ident: Any, parent: Any) -> None:
        content = {
            "status": "error",
            "ename": "NotImplementedError",
            "evalue": "mcp2repl has one V8 context and no subshells",
            "traceback": [],
        }
        self.session.send(socket, "create_subshell_reply", content, parent, ident)

    # ---- output (the engine's Sink) ---------------------------------------------------------

    def _target(self, cell: str) -> dict[str, Any] | None:
        entry = self._parents.get(cell)
        if entry is None:
            return None
        parent, silent = entry
        return None if silent else parent

    def stream(self, cell: str, name: str, text: str) -> None:
        parent = self._target(cell)
        if parent is not None:
            self.session.send(self.iopub_socket, "stream", {"name": name, "text": text}, parent=parent, ident=self._topic("stream"))

    def display(self, cell: str, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        parent = self._target(cell)
        if parent is None:
            return
        msg_type = "update_display_data" if update and display_id else "display_data"
        content: dict[str, Any] = {"data": data, "metadata": metadata, "transient": {"display_id": display_id} if display_id else {}}
        self.session.send(self.iopub_socket, msg_type, content, parent=parent, ident=self._topic(msg_type))

    def clear_output(self, cell: str, wait: bool) -> None:
        parent = self._target(cell)
        if parent is not None:
            self.session.send(self.iopub_socket, "clear_output", {"wait": wait}, parent=parent, ident=self._topic("clear_output"))

    # ---- execute ----------------------------------------------------------------------------

    async def do_execute(  # type: ignore[override]
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: dict[str, Any] | None = None,
        allow_stdin: bool = False,
    ) -> dict[str, Any]:
        if code.strip() in EXIT_WORDS and not silent:
            # what IPython does for `exit`: jupyter console then leaves (and stops the kernel)
            return {
                "status": "ok",
                "execution_count": self.execution_count,
                "payload": [{"source": "ask_exit", "keepkernel": False}],
                "user_expressions": {},
            }
        if silent:
            self._silent_count += 1
            cell = f"cell[-{self._silent_count}]"
        else:
            cell = f"cell[{self.execution_count}]"
        parent = self.get_parent("shell")
        self._parents[cell] = (parent, silent)
        while len(self._parents) > 500:
            self._parents.popitem(last=False)
        trace = self._new_trace(cell, parent, silent)
        ticker = asyncio.ensure_future(_tick(trace))
        try:
            loading = self._servers_loaded
            if loading is not None and not loading.done() and _USES_SERVERS.search(code):
                await asyncio.shield(loading)
            outcome = await self.engine.run_cell(code, cell, time_limit=self.timeout or None)
        finally:
            ticker.cancel()
            trace.finish()
            self._traces.pop(cell, None)
            self._reply_calls[parent.get("header", {}).get("msg_id", "")] = trace.records()

        if store_history and not silent:
            text = outcome.data.get("text/plain") if outcome.data else None
            self.history.store(self.execution_count, code, text)
        if outcome.error is not None:
            err = outcome.error
            content = {"ename": err.name, "evalue": err.message, "traceback": err.traceback}
            if not silent:
                self.send_response(self.iopub_socket, "error", content)
            return {"status": "error", "execution_count": self.execution_count, **content}
        if outcome.data is not None and not silent:
            self.send_response(
                self.iopub_socket,
                "execute_result",
                {"execution_count": self.execution_count, "data": outcome.data, "metadata": {}},
            )
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    def _new_trace(self, cell: str, parent: dict[str, Any], silent: bool) -> CellTrace:
        mode = self.progress_mode
        if mode == "auto":
            session = parent.get("header", {}).get("session", "")
            mode = "stderr" if session in self._terminal_sessions else "display"
        display_id = f"mcp2repl-calls-{uuid.uuid4().hex[:12]}"

        def publish(bundle: dict[str, Any], update: bool) -> None:
            self.display(cell, bundle, {}, display_id, update)

        trace = CellTrace(
            publish=None if silent else publish, mode="off" if silent else mode, stderr=lambda text: self.stream(cell, "stderr", text)
        )
        self._traces[cell] = trace
        return trace

    def finish_metadata(self, parent: dict[str, Any], metadata: dict[str, Any], reply_content: dict[str, Any]) -> dict[str, Any]:
        """Agents get the cell's tool-call trace with the reply: ``metadata["mcp2repl"]["calls"]``."""
        metadata = super().finish_metadata(parent, metadata, reply_content)
        calls = self._reply_calls.pop(parent.get("header", {}).get("msg_id", ""), None)
        if calls is not None:
            metadata["mcp2repl"] = {"calls": calls}
        return metadata

    # ---- read-only requests ---------------------------------------------------------------------

    async def do_is_complete(self, code: str) -> dict[str, Any]:
        verdict = classify(code)
        reply: dict[str, Any] = {"status": verdict.status}
        if verdict.status == "incomplete":
            reply["indent"] = verdict.indent
        return reply

    async def do_complete(self, code: str, cursor_pos: int | None) -> dict[str, Any]:
        cursor = len(code) if cursor_pos is None else cursor_pos
        found = tool_completion.complete(code, cursor, self.servers.catalog, self.servers.observed) if self.servers else None
        if found is None:
            found = await introspection.complete(self.engine, code, cursor)
        return {
            "status": "ok",
            "matches": found.matches,
            "cursor_start": found.start,
            "cursor_end": found.end,
            "metadata": {"_jupyter_types_experimental": found.types},
        }

    async def do_inspect(self, code: str, cursor_pos: int, detail_level: int = 0, omit_sections: Any = ()) -> dict[str, Any]:
        data = tool_completion.inspect(code, cursor_pos, self.servers.catalog, self.servers.observed) if self.servers else None
        if data is None:
            data = await introspection.inspect(self.engine, code, cursor_pos)
        return {"status": "ok", "found": data is not None, "data": data or {}, "metadata": {}}

    async def do_history(  # type: ignore[override]
        self,
        hist_access_type: str,
        output: bool,
        raw: bool,
        session: int | None = None,
        start: int | None = None,
        stop: int | None = None,
        n: int | None = None,
        pattern: str | None = None,
        unique: bool = False,
        **_: Any,
    ) -> dict[str, Any]:
        if hist_access_type == "tail" and n == 1000 and raw and not output:
            # jupyter console's start-up request (history_load_length=1000): that session is a
            # terminal, which ignores display updates, so its progress goes to stderr instead.
            session_id = self.get_parent("shell").get("header", {}).get("session")
            if session_id:
                self._terminal_sessions.add(session_id)
        if hist_access_type == "tail":
            rows = self.history.tail(n or 10, output)
        elif hist_access_type == "range":
            rows = self.history.range(session or 0, start or 1, stop, output)
        elif hist_access_type == "search":
            rows = self.history.search(pattern or "*", n, unique, output)
        else:
            rows = []
        return {"status": "ok", "history": rows}

    async def do_shutdown(self, restart: bool) -> dict[str, Any]:
        await self.engine.close()
        if self.servers is not None:
            await self.servers.close()
        # ipykernel 7.4 can hang while tearing down (its control thread blocks flushing to an
        # IOPub thread that already stopped), and clients then wait 2.5 s and SIGTERM us. All
        # our state is closed by now, so leave promptly if the normal exit stalls.
        watchdog = threading.Timer(SHUTDOWN_GRACE, os._exit, args=(0,))
        watchdog.daemon = True
        watchdog.start()
        return {"status": "ok", "restart": restart}
