"""The Jupyter face of a Session: protocol messages in, a Session's work out, and nothing else.

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
import contextlib
import os
import signal
import sys
import threading
import time
from concurrent.futures import Future
from contextvars import copy_context
from typing import Any, ClassVar

from ipykernel.kernelbase import Kernel
from traitlets import Float, Int, Unicode

from .. import __version__, compat, rundir
from ..session import Ask, Progress, Session, SessionOptions
from . import direct, pages, steps
from .approvals import out_of_band
from .history import History
from .parent_output import ParentOutput, lighten
from .recording import Recording

#: Shell requests answered even while a cell runs: they only read state.
CONCURRENT_REQUESTS = {
    *("complete_request", "is_complete_request", "inspect_request", "kernel_info_request", "history_request", "comm_info_request"),
}
#: Seconds the session may take to close on a shutdown request (clients send SIGTERM after 2.5 s).
SHUTDOWN_CLOSE = 1.4
#: Seconds the process may take to exit by itself after answering a shutdown request.
SHUTDOWN_GRACE = 0.8
#: Cells that mean "leave", as in IPython (a frontend such as jupyter console acts on the payload).
EXIT_WORDS = {"exit", "quit", "exit()", "quit()"}


def _terminated() -> None:
    rundir.current().remove()
    os._exit(0)


class MCPKernel(compat.AbortBeforeReply, Kernel):
    """JavaScript cells in one persistent V8 context."""

    _execute_sleep = compat.no_reply_sleep()

    implementation = "mcp2repl"
    implementation_version = __version__
    language = "javascript"
    help_links: ClassVar[list[dict[str, str]]] = [{"text": "mcp2repl README", "url": "https://pypi.org/project/mcp2repl/"}]

    timeout = Float(0.0, config=True, help="Per-cell time limit in seconds (0: none). Also MCP2REPL_TIMEOUT.")
    heap_limit_mb = Int(0, config=True, help="V8 heap limit in MB (default 2048). Also MCP2REPL_HEAP_LIMIT_MB.")
    max_output_chars = Int(
        0, config=True, help="Largest cell result or api.print view, in characters (default 20000). Also MCP2REPL_MAX_OUTPUT_CHARS."
    )
    progress_mode = Unicode(
        os.environ.get("MCP2REPL_PROGRESS", "auto"),
        config=True,
        help="Live tool-call display: auto (display; stderr for jupyter console), display, stderr or off. Also MCP2REPL_PROGRESS.",
    )
    allow_connect = Unicode(
        "", config=True, help='"any" lets cells start any MCP server with api.connect, giving up the sandbox. Also MCP2REPL_ALLOW_CONNECT.'
    )
    idle_timeout = Float(
        0.0, config=True, help="End the kernel after this many seconds without a cell (0: never); mcp2repl --session kernels use it."
    )
    record = Unicode(
        "", config=True, help="Write every step to this notebook as it happens (session kernels: .mcp2repl/sessions/NAME.ipynb)."
    )
    mcp_config = Unicode(
        "", config=True, help="Path of the MCP server config file (else mcp2repl.json/.mcp.json/mcp.json here, else ~/.config/mcp2repl/)."
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        options = SessionOptions()
        if self.timeout:
            options.timeout = self.timeout
        if self.heap_limit_mb:
            options.heap_limit_mb = self.heap_limit_mb
        if self.max_output_chars:
            options.max_output_chars = self.max_output_chars
        if self.mcp_config:
            options.config = self.mcp_config
        if self.allow_connect:
            options.allow_connect = self.allow_connect
        # a restart reuses the connection file: the new kernel reports how the old one ended
        options.owner = os.path.abspath(getattr(self.parent, "connection_file", "") or f"kernel-{os.getpid()}")
        options.owns_process = True
        self.shell_session = Session(options)
        out_of_band(self.shell_session, options.owner)  # a named session's plans: approved from the person's shell
        self.history = History()
        self._silent_count = 0
        self._v8 = compat.v8_version()
        self._reply_calls: dict[str, dict[str, Any]] = {}
        self._last_active = time.monotonic()
        self.recording = Recording(self.record, self.shell_session.redactor) if self.record else None
        self.direct_steps: dict[str, direct.Heard] = {}  # the step socket's steps, by msg_id (direct.py)

    # ---- start-up -------------------------------------------------------------------------

    def start(self) -> None:
        super().start()
        for stream in (sys.stdout, sys.stderr):
            compat.skip_empty_flush(stream)
        self.io_loop.add_callback(self._boot)

    async def _boot(self) -> None:
        self._shell_loop = asyncio.get_running_loop()
        direct.started(self)
        # Signal-mode clients and `kill -INT`: stop JS, never raise KeyboardInterrupt.
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self.shell_session.interrupt)
        # SIGTERM is how clients end a kernel whose shutdown takes long (jupyter_client after 2.5 s):
        # a requested end, so leave at once and cleanly; the servers' supervisor stops them as we go.
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, _terminated)
        try:
            await self.shell_session.start()
        except Exception:
            self.log.exception("could not start the JavaScript engine")
        if self.idle_timeout > 0:
            self._idle_task = asyncio.ensure_future(self._end_when_idle())
        # V8's ICU copy becomes the file's pages, and library pages only loading read go (pages.py)
        self._pages_task = asyncio.ensure_future(pages.give_back_after(self.shell_session.servers.done))

    async def _end_when_idle(self) -> None:
        """A detached session kernel nobody uses ends itself, its servers too, and leaves no connection file."""
        while True:
            left = self._last_active + self.idle_timeout - time.monotonic()
            if left <= 0 and not compat.shell_busy(self):
                break
            await asyncio.sleep(max(0.05, min(left, 30.0)))
        print(f"[mcp2repl] no cell for {self.idle_timeout:g} s: the kernel ends (idle timeout)", file=sys.__stderr__, flush=True)
        if self.recording:
            self.recording.close()
        rundir.current().remove()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.shell_session.close(leaving=True), SHUTDOWN_CLOSE)
        with contextlib.suppress(Exception):  # a kernel that ended on purpose leaves no connection file
            os.remove(self.parent.abs_connection_file)
        os._exit(0)

    def pre_handler_hook(self) -> None:
        """The base installs default_int_handler here; SIGINT stays ours (see _boot)."""

    def post_handler_hook(self) -> None:
        """Nothing to restore: pre_handler_hook changed nothing."""

    @property
    def language_info(self) -> dict[str, Any]:  # type: ignore[override]
        # The language is JavaScript (papermill's translator, nbconvert's .js, kernel pickers go by
        # the name), but every cell may be TypeScript: editors and exporters highlight it as such
        # (JupyterLab and Notebook 7 take codemirror_mode before the name). TypeScript
        # highlighting is a superset: plain JavaScript looks the same.
        return {
            "name": "javascript",
            "version": self._v8,
            "mimetype": "text/javascript",
            "file_extension": ".js",
            "pygments_lexer": "typescript",
            "codemirror_mode": "typescript",
            "nbconvert_exporter": "script",
        }

    @property
    def banner(self) -> str:  # type: ignore[override]
        return (
            f"mcp2repl {__version__}: JavaScript (V8 {self._v8}) in one persistent context.\n"
            "Cells are async: top-level await works, the last expression is the result.\n"
            "Cells may be TypeScript: types are erased, not checked (await api.types() declares the tools).\n"
            "No file system, network or process access from JS; MCP tools are the way out.\n"
            + "".join(f"{line}\n" for line in self.shell_session.notes())
            + "\n".join(self.shell_session.server_lines())
        )

    @property
    def kernel_info(self) -> dict[str, Any]:
        # Not super(): the base imports ipykernel.debugger (debugpy prints warnings into the
        # user's terminal) only to advertise a debugger and subshells this kernel does not have.
        return {
            "protocol_version": compat.protocol_version(),
            "implementation": self.implementation,
            "implementation_version": self.implementation_version,
            "language_info": self.language_info,
            "banner": self.banner,
            "help_links": self.help_links,
            "supported_features": [],
        }

    # ---- concurrency and interrupts -------------------------------------------------------------

    async def shell_main(self, subshell_id: str | None, msg: Any) -> None:
        if compat.shell_busy(self) and self.session is not None and subshell_id is None:
            try:
                _, frames = self.session.feed_identities(msg, copy=False)
                header = self.session.deserialize(frames, content=False, copy=False)["header"]
            except Exception:  # noqa: BLE001 - let the normal path report bad messages
                header = {}
            if header.get("msg_type") in CONCURRENT_REQUESTS:

                async def spawn(message: Any) -> None:
                    await asyncio.create_task(self.dispatch_shell(message, concurrent=True), context=copy_context())

                await compat.dispatch_beside(self, msg, header, spawn)
                return
        await super().shell_main(subshell_id, msg)

    async def interrupt_request(self, stream: Any, ident: Any, parent: Any) -> None:
        """Stop the running JS; unlike the base class, never signal the process group."""
        self.shell_session.interrupt()
        self.session.send(stream, "interrupt_reply", {"status": "ok"}, parent, ident=ident)

    async def create_subshell_request(self, socket: Any, ident: Any, parent: Any) -> None:
        content = {
            "status": "error",
            "ename": "NotImplementedError",
            "evalue": "mcp2repl has one V8 context and no subshells",
            "traceback": [],
        }
        self.session.send(socket, "create_subshell_reply", content, parent, ident)

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
        parent = self.get_parent("shell")
        if silent or not store_history:
            # not a numbered cell: the base class counted it, IPython does not (the next cell
            # shows the same number, and the reply carries the last stored one)
            self._silent_count += 1
            cell = f"cell[-{self._silent_count}]"
            if not silent:
                self.execution_count -= 1
        else:
            cell = f"cell[{self.execution_count}]"
        recording = self.recording if store_history and not silent else None
        key = recording.begin(parent, code, self.execution_count) if recording else ""
        output = ParentOutput(self, parent, direct.tee(self, parent, recording), key) if not silent else None
        ask = self._asker() if allow_stdin and not silent else None
        step = (parent.get("metadata") or {}).get("mcp2repl") or {}  # from a step client (mcp_kernel/client)
        given = steps.execute_options(step if isinstance(step, dict) else {})  # its data and limits
        result = await self.shell_session.execute(code, output, cell=cell, progress="off" if silent else self._progress(parent), ask=ask, **given)
        self._last_active = time.monotonic()
        self._reply_calls[parent.get("header", {}).get("msg_id", "")] = steps.reply_metadata(result, step if isinstance(step, dict) else {})

        stored = None  # a write left to the history's thread (another kernel holds the file): the reply waits for it
        if store_history and not silent:
            text = result.data.get("text/plain") if result.data else None
            stored = self.history.store(self.execution_count, self.shell_session.redactor.text(code), text)
        if result.error is not None:
            err = result.error
            content = {"ename": err.name, "evalue": err.message, "traceback": err.traceback}
            if output is not None:
                output.publish("error", content)
                self.abort_before_reply()  # queued cells are aborted; the next one sent after the reply is not
            if recording:
                await recording.end(key, self.execution_count, False, result.calls)
            await self._ended(parent, output, recording, stored)
            return {"status": "error", "execution_count": self.execution_count, "user_expressions": {}, **content}
        if result.data is not None and output is not None:
            output.publish("execute_result", {"execution_count": self.execution_count, "data": result.data, "metadata": {}})
        if recording:
            await recording.end(key, self.execution_count, True, result.calls)
        expressions = await self._user_expressions(user_expressions or {})
        await self._ended(parent, output, recording, stored)
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": expressions}

    async def _ended(self, parent: dict[str, Any], output: ParentOutput | None, recording: Recording | None, stored: Future[None] | None) -> None:
        """The cell ended: its output on the wire and its history written before its reply (a terminal prints in
        order, a client that reads the reply may end the kernel at once); what outlives it kept small."""
        lighten(parent)
        if output is not None:
            output.settle(recording.output if recording else None)
        if output is not None and output.published:
            await compat.iopub_sent(self.iopub_socket)
        if stored is not None and not stored.done():
            await asyncio.wrap_future(stored)

    async def _user_expressions(self, expressions: dict[str, Any]) -> dict[str, Any]:
        """Each expression evaluated after the cell (as the messaging spec says), each with its own outcome.

        Parenthesised, so only an expression is accepted (``const x = 1`` is a SyntaxError, as in
        IPython) and nothing is declared; no output reaches the notebook.
        """
        found: dict[str, Any] = {}
        for name, expression in expressions.items():
            result = await self.shell_session.execute(f"({expression}\n)", None, cell=f"user_expressions[{name!r}]", progress="off")
            if result.error is not None:
                err = result.error
                found[name] = {"status": "error", "ename": err.name, "evalue": err.message, "traceback": err.traceback}
            else:
                found[name] = {"status": "ok", "data": result.data or {"text/plain": "undefined"}, "metadata": {}}
        return found

    def _asker(self) -> Ask:
        """Questions to the person through Jupyter's stdin channel (input_request / input_reply).

        ipykernel's raw_input waits for the answer synchronously, so it runs in a thread (with this
        request's context): the event loop keeps serving the cell's tool calls and interrupts.
        """

        # this request's context, taken now: a server's elicitation asks from the SDK's own task,
        # where ipykernel's shell parent (a context variable) is not this cell's
        context = copy_context()

        async def ask(prompt: str) -> str:
            stop = threading.Event()  # an interrupted cell abandons its question: the thread must stop waiting
            try:
                return await asyncio.to_thread(context.copy().run, compat.input_request, self, prompt, False, stop)
            finally:
                stop.set()

        return ask

    def _progress(self, parent: dict[str, Any]) -> Progress:
        mode = self.progress_mode
        if mode == "auto":
            header = parent.get("header", {})
            interactive = bool(parent.get("content", {}).get("allow_stdin"))  # nbclient and papermill do not allow stdin
            terminal = interactive and compat.made_by_jupyter_client(header)
            return "stderr" if terminal else "display"
        return mode if mode in ("display", "stderr", "off") else "display"  # type: ignore[return-value]

    def finish_metadata(self, parent: dict[str, Any], metadata: dict[str, Any], reply_content: dict[str, Any]) -> dict[str, Any]:
        """Agents get the cell's tool-call trace with the reply: ``metadata["mcp2repl"]["calls"]``."""
        metadata = super().finish_metadata(parent, metadata, reply_content)
        found = self._reply_calls.pop(parent.get("header", {}).get("msg_id", ""), None)
        if found is not None:
            metadata["mcp2repl"] = found
        direct.replied(self, parent, reply_content, metadata)
        return metadata

    # ---- read-only requests ---------------------------------------------------------------------

    async def do_is_complete(self, code: str) -> dict[str, Any]:
        verdict = await asyncio.to_thread(self.shell_session.is_complete, code)  # a parse: never on the loop
        reply: dict[str, Any] = {"status": verdict.status}
        if verdict.status == "incomplete":
            reply["indent"] = verdict.indent
        return reply

    async def do_complete(self, code: str, cursor_pos: int | None) -> dict[str, Any]:
        cursor = len(code) if cursor_pos is None else cursor_pos
        found = await self.shell_session.complete(code, cursor)
        return {
            "status": "ok",
            "matches": found.matches,
            "cursor_start": found.start,
            "cursor_end": found.end,
            "metadata": {"_jupyter_types_experimental": found.types},
        }

    async def do_inspect(self, code: str, cursor_pos: int, detail_level: int = 0, omit_sections: Any = ()) -> dict[str, Any]:
        data = await self.shell_session.inspect(code, cursor_pos)
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
        rows = await asyncio.wrap_future(self.history.answer(hist_access_type, output, session or 0, start or 1, stop, n, pattern or "*", unique))
        return {"status": "ok", "history": rows}

    async def do_shutdown(self, restart: bool) -> dict[str, Any]:
        rundir.current().remove()  # asked to end: nothing for the next start to report, however it goes
        if self.recording:
            self.recording.close()
        # This runs on the control thread; the session lives on the shell loop (its servers' tasks
        # too), so it is closed there.
        # leaving: servers' stdin is closed, their supervisor finishes the stop (a slow exit holds nothing)
        closing = asyncio.run_coroutine_threadsafe(self.shell_session.close(leaving=True), self._shell_loop)
        try:
            await asyncio.wait_for(asyncio.wrap_future(closing), SHUTDOWN_CLOSE)
        except Exception as exc:  # noqa: BLE001 - a server that will not close must not keep the kernel
            self.log.warning("the session did not close within %s s (%s); its servers' supervisor stops them", SHUTDOWN_CLOSE, type(exc).__name__)
        # The process then ends through compat.end_kernel_process (kernel/app.py), which skips
        # ipykernel's racy teardown; should stopping its threads stall, clients would wait 2.5 s and
        # SIGTERM us. All our state is closed by now, so leave promptly if the exit stalls.
        watchdog = threading.Timer(SHUTDOWN_GRACE, os._exit, args=(0,))
        watchdog.daemon = True
        watchdog.start()
        return {"status": "ok", "restart": restart}
