"""``mcp2repl -e CODE`` without a session: the Session in this process, no kernel and no ZMQ.

A one-shot run knows all its code before it starts, so the Session starts only the MCP servers
that code touches (``SessionOptions.servers_for``): ``-e '1+1'`` pays for V8 alone, not for the
MCP SDK's import or a server's start. Ctrl-C interrupts the program (exit status 3).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path
from typing import Any

from ..client.result import Collector, StepError, StepResult
from ..session import Progress, Result, Session, SessionOptions
from .options import Options, load_cell


class _Collected:
    """A Session Output that folds output into a step result, as a kernel's IOPub stream would be."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector

    def stream(self, name: str, text: str) -> None:
        self.collector.iopub("stream", {"name": name, "text": text})

    def display(self, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        kind = "update_display_data" if update and display_id else "display_data"
        self.collector.iopub(kind, {"data": data, "transient": {"display_id": display_id} if display_id else {}})

    def clear_output(self, wait: bool) -> None:
        self.collector.iopub("clear_output", {"wait": wait})


def session_options(o: Options, code: str | None) -> SessionOptions:
    opts = SessionOptions(cwd=Path.cwd(), config=o.config, server=o.server, profile=o.profile, servers_for=code, owns_process=True)
    if o.timeout:
        opts.timeout = o.timeout
    if o.max_output_chars:
        opts.max_output_chars = o.max_output_chars
    if o.artifact_dir:
        opts.artifact_dir = Path(o.artifact_dir).absolute()
    return opts


async def _run(o: Options, cells: list[str], everything: str) -> StepResult:
    session = Session(session_options(o, everything))
    started = time.monotonic()
    collector = Collector()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, session.interrupt)
    loop.set_exception_handler(_quiet_v8_callbacks)
    progress: Progress = "stderr" if sys.stderr.isatty() and not o.quiet and not o.json else "off"
    try:
        await session.start()
        for code in cells:  # named cell[1], cell[2]…, as a kernel names them
            result: Result = await session.execute(code, _Collected(collector), progress=progress)
            _fold(collector, result)
            if not result.ok:
                break
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        await session.close()
    return collector.finish((time.monotonic() - started) * 1000)


def _quiet_v8_callbacks(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """mini-racer logs a failed conversion of a V8 callback that arrives as the run tears down; the
    program's outcome is already known by then, so that is not the user's business (the rest is)."""
    if "_handle_callback_from_v8_on_event_loop" not in repr(context.get("handle")):
        loop.default_exception_handler(context)


def _fold(collector: Collector, result: Result) -> None:
    r = collector.result
    r.calls += result.calls
    r.artifacts += result.artifacts
    if result.error is not None:
        e = result.error
        r.error = StepError(e.name, e.message, "\n".join(e.traceback))
    else:
        r.text = result.data.get("text/plain") if result.data else None
        r.value = result.value


def run(o: Options, code: str | None, helpers: list[tuple[str, str]]) -> StepResult:
    """Run the helpers, then the program, in one fresh Session; the last value is the result."""
    cells = [load_cell(p, text) for p, text in helpers] + ([code] if code is not None else [])
    everything = "\n".join([*(text for _, text in helpers), code or ""])
    return asyncio.run(_run(o, cells, everything))
