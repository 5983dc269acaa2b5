"""Shared fixtures: real V8 contexts, a real engine or Session on a private loop, real kernels via jupyter_client.

One harness per way of driving the product, so every test module talks to it the same way:

* :func:`load_v8` — a raw mini-racer context with chosen runtime files (JS unit tests);
* :class:`EngineHarness` — the engine alone, no display, API or servers (``js`` fixture);
* :class:`SessionHarness` — a whole Session in-process, servers included (``session`` fixture);
* :class:`KernelProcess` — a kernel process started by jupyter_client, as a frontend would.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hypothesis  # noqa: F401 - imported now: see EngineHarness.close
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
FIXTURES = ROOT / "tests" / "fixtures"
SERVERS = FIXTURES / "servers"
ECHO = str(SERVERS / "echo_server.py")
EVERYTHING = FIXTURES / "node" / "node_modules" / ".bin" / "mcp-server-everything"
#: Config-level env vars of the runner must not leak into the kernels and sessions started here.
OWN_VARS = ("MCP2REPL_CONFIG", "MCP2REPL_PROFILE", "MCP2REPL_SERVER")
#: Run folders (server logs, crash records) of everything started here stay out of the user's home.
STATE_DIR = tempfile.mkdtemp(prefix="mcp2repl-test-state-")
os.environ["MCP2REPL_STATE_DIR"] = STATE_DIR


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import shutil

    shutil.rmtree(STATE_DIR, ignore_errors=True)


# ---- raw V8 ------------------------------------------------------------------------------------


def load_v8(*files: str, preamble: str = "") -> Any:
    """A fresh mini-racer context with ``files`` (paths under mcp_kernel/, e.g. "engine/js/inspect.js") evaluated in order.

    Close it when done: an unclosed context with a large heap can stall interpreter exit.
    """
    from py_mini_racer import MiniRacer

    from mcp_kernel.engine.context import configure_v8

    configure_v8()  # flags are per process: the first context must not start V8 without them
    ctx = MiniRacer()
    if preamble:
        ctx.eval(preamble)
    for name in files:
        ctx.eval((ROOT / "mcp_kernel" / name).read_text(encoding="utf-8"))
    return ctx


@pytest.fixture
def v8() -> Iterator[Callable[..., Any]]:
    """Factory of throwaway contexts (``v8("engine/js/web.js")``), all closed after the test."""
    made: list[Any] = []

    def make(*files: str, preamble: str = "") -> Any:
        made.append(load_v8(*files, preamble=preamble))
        return made[-1]

    yield make
    for ctx in made:
        ctx.close()


# ---- the engine and the Session in-process --------------------------------------------------------


class Recorder:
    """An engine Sink (and a Session Output) that keeps what JS printed and displayed, per cell."""

    def __init__(self) -> None:
        self.streams: list[tuple[str, str, str]] = []
        self.displays: list[tuple[str, dict[str, Any], str | None, bool]] = []

    def stream(self, cell: str, name: str, text: str) -> None:
        self.streams.append((cell, name, text))

    def display(self, cell: str, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        self.displays.append((cell, data, display_id, update))

    def clear_output(self, cell: str, wait: bool) -> None:
        self.streams.append((cell, "clear_output", str(wait)))

    def note(self, cell: str, text: str) -> None:
        self.streams.append((cell, "stderr", text))

    def text(self, name: str = "stdout", cell: str | None = None) -> str:
        return "".join(t for c, n, t in self.streams if n == name and (cell is None or c == cell))


class Interrupter(threading.Thread):
    """Sends an interrupt after ``first`` seconds, then again every ``every`` seconds until stopped.

    On a busy machine a cell may start late, and an interrupt that arrives before it has nothing to
    stop (it is ignored, as in IPython): pressing again, as a user would, keeps tests honest there.
    ``fired`` holds the monotonic time of each send.
    """

    def __init__(self, send: Callable[[], Any], first: float, every: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.send, self.first, self.every = send, first, every
        self.fired: list[float] = []
        self._halt = threading.Event()
        self.start()

    def run(self) -> None:
        wait = self.first
        while not self._halt.wait(wait):
            self.fired.append(time.monotonic())
            self.send()
            wait = self.every

    def stop(self) -> None:
        self._halt.set()
        if threading.current_thread() is not self:
            super().join(5)

    def join(self, timeout: float | None = None) -> None:
        self.stop()


class _Loop:
    """An asyncio loop on a background thread, so tests stay synchronous."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call(self, coro: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        async def collect() -> None:
            # Free V8 contexts here, on the loop thread. Left to a later GC they can be
            # finalized in the middle of a compile() on the main thread, and mini-racer's
            # teardown callbacks then trip CPython 3.11's AST recursion check
            # ("AST constructor recursion depth mismatch") in pytest's own imports.
            gc.collect()

        self.call(collect())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class EngineHarness(_Loop):
    """Drives a real Engine (no display, API or servers) on a background event loop."""

    def __init__(self, **options: Any) -> None:
        super().__init__()
        from mcp_kernel.engine import Engine

        self.sink = Recorder()
        self.engine = Engine(self.sink, **options)
        self.call(self.engine.start())
        self.count = 0
        self.interrupters: list[Interrupter] = []

    def run(self, code: str, timeout: float | None = None) -> Any:
        self.count += 1
        try:
            return self.call(self.engine.run_cell(code, f"cell[{self.count}]", timeout))
        finally:
            while self.interrupters:  # their cell is over: the next one must not be interrupted
                self.interrupters.pop().stop()

    def value(self, code: str) -> str | None:
        """The text/plain of a cell that must succeed."""
        out = self.run(code)
        assert out.error is None, "\n".join(out.error.traceback)
        return None if out.data is None else out.data["text/plain"]

    def error(self, code: str, timeout: float | None = None) -> Any:
        out = self.run(code, timeout)
        assert out.error is not None, f"expected an error, got {out.data}"
        return out.error

    def interrupt_after(self, seconds: float) -> Interrupter:
        """Interrupt the next cell after ``seconds`` (and again until it ends)."""
        interrupter = Interrupter(self.engine.interrupt, seconds)
        self.interrupters.append(interrupter)
        return interrupter

    def close(self) -> None:
        self.call(self.engine.close())
        self.stop()


@pytest.fixture
def js() -> Iterator[EngineHarness]:
    harness = EngineHarness()
    yield harness
    harness.close()


class CellOutput:
    """A Session Output that keeps one execution's streams and displays."""

    def __init__(self) -> None:
        self.streams: list[tuple[str, str]] = []
        self.displays: list[tuple[dict[str, Any], dict[str, Any], str | None, bool]] = []

    def stream(self, name: str, text: str) -> None:
        self.streams.append((name, text))

    def display(self, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        self.displays.append((data, metadata, display_id, update))

    def clear_output(self, wait: bool) -> None:
        self.streams.append(("clear_output", str(wait)))

    def text(self, name: str = "stdout") -> str:
        return "".join(t for n, t in self.streams if n == name)


class SessionHarness(_Loop):
    """A whole Session (engine, display, API, servers) in-process, in ``cwd`` with only the given config."""

    def __init__(self, cwd: Path, config: dict[str, Any] | None = None, **options: Any) -> None:
        super().__init__()
        import json

        from mcp_kernel.session import Session, SessionOptions

        if config is not None:
            (cwd / "mcp.json").write_text(json.dumps(config))
        options.setdefault("artifact_dir", cwd / "artifacts")
        opts = SessionOptions(cwd=cwd, config=None, profile=None, server=None, allow_connect="configured", **options)
        self.session = Session(opts)
        self.call(self.session.start())

    def run(self, code: str, timeout: float = 60) -> tuple[Any, CellOutput]:
        out = CellOutput()
        return self.call(self.session.execute(code, out, progress="off"), timeout), out

    def value(self, code: str) -> str | None:
        result, _ = self.run(code)
        assert result.error is None, "\n".join(result.error.traceback)
        return None if result.data is None else result.data["text/plain"]

    def json(self, code: str) -> Any:
        result, _ = self.run(code)
        assert result.error is None, "\n".join(result.error.traceback)
        return result.data["application/json"]

    def close(self) -> None:
        self.call(self.session.close())
        self.stop()


# ---- a kernel process, as a frontend sees it ---------------------------------------------------------


def is_crash_watcher(cmdline: list[str]) -> bool:
    """The run folder's watcher processes (rundir.py): ``tee -p /dev/fd/N``, ``tail -c N``, or crashtail.py."""
    line = " ".join(cmdline)
    if "mcp_kernel/crashtail.py" in line:
        return True
    return len(cmdline) == 3 and os.path.basename(cmdline[0]) in ("tee", "tail") and cmdline[1] in ("-p", "-c")


def is_call_trace(content: dict[str, Any]) -> bool:
    """The kernel's live "N tool calls, … s" display, shown only for cells slower than ~0.4 s.

    Whether it appears depends on timing, so exact output checks leave it out.
    """
    display_id = (content.get("transient") or {}).get("display_id") or ""
    return display_id.startswith("mcp2repl-calls-") or 'class="mcp2repl-calls"' in str((content.get("data") or {}).get("text/html", ""))


#: the IOPub messages a cell's outputs are made of
CELL_OUTPUTS = ("stream", "execute_result", "error", "display_data", "update_display_data", "clear_output")


class Cell:
    """What one execute_request produced: the reply and the IOPub outputs, in order."""

    def __init__(self, reply: dict[str, Any], everything: list[dict[str, Any]], seconds: float) -> None:
        self.reply = reply["content"]
        self.metadata = reply["metadata"]
        self.all = everything  # every output in order, the live tool-call display included
        self.outputs = [o for o in everything if not is_call_trace(o)]  # without it (see is_call_trace)
        self.traces = [o for o in everything if is_call_trace(o)]
        self.seconds = seconds

    def stream(self, name: str) -> str:
        return "".join(o["text"] for o in self.outputs if o["type"] == "stream" and o["name"] == name)

    @property
    def stderr(self) -> str:
        return self.stream("stderr")

    @property
    def kinds(self) -> list[str]:
        return [o["type"] for o in self.outputs]

    @property
    def result(self) -> dict[str, Any]:
        found = [o["data"] for o in self.outputs if o["type"] == "execute_result"]
        assert self.reply["status"] == "ok" and found, (self.reply, self.outputs)
        return found[-1]

    @property
    def text(self) -> str:
        return self.result["text/plain"]

    @property
    def error(self) -> dict[str, Any]:
        errors = [o for o in self.outputs if o["type"] == "error"]
        assert self.reply["status"] == "error" and len(errors) == 1, (self.reply, self.outputs)
        return errors[0]


class KernelProcess:
    """An mcp2repl kernel started by jupyter_client in ``cwd``, with an empty XDG config folder unless ``env`` sets one."""

    def __init__(self, cwd: Path | None = None, env: dict[str, str] | None = None, **more_env: str) -> None:
        from jupyter_client.manager import start_new_kernel

        base = {k: v for k, v in os.environ.items() if k not in OWN_VARS}
        base["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="mcp2repl-xdg-")
        self.cwd = cwd
        extra: dict[str, Any] = {"env": {**base, **(env or {}), **more_env}}
        if cwd is not None:
            extra["cwd"] = str(cwd)
        self.km, self.kc = start_new_kernel(kernel_name="mcp2repl", **extra)
        self.kc.allow_stdin = False  # like nbclient and papermill; tests that answer input requests say so
        self.pid: int = self.km.provisioner.pid  # type: ignore[union-attr]

    def run(self, code: str, timeout: float = 30) -> Cell:
        started = time.monotonic()
        msg_id = self.kc.execute(code)
        outputs: list[dict[str, Any]] = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            if msg["msg_type"] in CELL_OUTPUTS:
                outputs.append({"type": msg["msg_type"], **msg["content"]})
        return Cell(self.reply_message(msg_id, timeout), outputs, time.monotonic() - started)

    def execute(self, code: str, timeout: float = 30) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(reply content, outputs) of a cell that may fail."""
        cell = self.run(code, timeout)
        return cell.reply, cell.outputs

    def outputs(self, code: str, timeout: float = 60, *, keep_trace: bool = False) -> list[dict[str, Any]]:
        """The outputs of a cell that must succeed (the live call display left out unless kept)."""
        cell = self.run(code, timeout)
        assert cell.reply["status"] == "ok", cell.reply
        return cell.all if keep_trace else cell.outputs

    def value(self, code: str, timeout: float = 30) -> str:
        """text/plain of a cell that must succeed without any other output."""
        cell = self.run(code, timeout)
        assert cell.kinds == ["execute_result"], (cell.reply, cell.outputs)
        return cell.text

    def json(self, code: str, timeout: float = 30) -> Any:
        cell = self.run(code, timeout)
        assert cell.kinds == ["execute_result"], (cell.reply, cell.outputs)
        return cell.result["application/json"]

    def reply_message(self, msg_id: str, timeout: float = 30) -> dict[str, Any]:
        """The shell reply to ``msg_id`` (earlier replies, e.g. a late kernel_info, are skipped)."""
        while True:
            msg = self.kc.get_shell_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    def reply(self, msg_id: str, timeout: float = 30) -> dict[str, Any]:
        return self.reply_message(msg_id, timeout)["content"]

    def complete(self, code: str, pos: int | None = None) -> dict[str, Any]:
        return self.reply(self.kc.complete(code, len(code) if pos is None else pos))

    def inspect(self, code: str, pos: int | None = None) -> dict[str, Any]:
        return self.reply(self.kc.inspect(code, len(code) if pos is None else pos))

    def banner(self) -> list[str]:
        """The lines of the banner from ``MCP servers from …`` on."""
        lines = self.reply(self.kc.kernel_info(), 10)["banner"].splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("MCP servers from "))
        return lines[start:]

    def wait_for_servers(self) -> None:
        self.run("await api.servers({wait: true})", timeout=60)

    def server_processes(self) -> dict[str, Any]:
        """The kernel's child processes (psutil), keyed by their command line; not its crash watchers (rundir.py)."""
        return {" ".join(p.cmdline()): p for p in self.server_process_list()}

    def server_process_list(self) -> list[Any]:
        """Every descendant but the crash watchers: the servers and the supervisor (or guards, with equal command lines)."""
        import psutil

        children = psutil.Process(self.pid).children(recursive=True)
        return [p for p in children if not is_crash_watcher(p.cmdline())]

    def server_process(self, *needles: str) -> Any:
        found = [p for cmd, p in self.server_processes().items() if all(n in cmd for n in needles)]
        assert len(found) == 1, (needles, list(self.server_processes()))
        return found[0]

    def close(self, graceful: bool = False) -> None:
        """Shut down: by shutdown_request (graceful) or by killing the kernel process."""
        if self.km.is_alive():
            self.km.shutdown_kernel(now=not graceful)
        self.kc.stop_channels()


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelProcess]:
    """One kernel (no config: the demo server) shared by a module's tests."""
    session = KernelProcess()
    yield session
    session.close()


@pytest.fixture(scope="session", autouse=True)
def _isolated_jupyter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Kernels started by tests use a private history file and find the kernelspec of this checkout."""
    home = tmp_path_factory.mktemp("jupyter")
    os.environ["MCP2REPL_HISTORY"] = str(home / "history.sqlite")
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    from mcp_kernel.cli.install import install

    data = home / "data"
    install(prefix=str(data))
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(data / "share" / "jupyter"), os.environ.get("JUPYTER_PATH")]))
    yield


# ---- processes found by a mark in their command line (no-orphan checks) --------------------------


def marked(mark: str) -> list[Any]:
    """Live processes (psutil) whose command line holds ``mark``."""
    import psutil

    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if mark in " ".join(proc.info["cmdline"] or []) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found


def wait_unmarked(mark: str, seconds: float = 15.0) -> list[Any]:
    """Wait until no process carries ``mark``; the survivors, if any."""
    deadline = time.monotonic() + seconds
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left
