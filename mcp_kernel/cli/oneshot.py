"""``mcp2repl -e CODE`` without a session: the Session in this process, no kernel and no ZMQ.

A one-shot run knows all its code before it starts, so the Session starts only the MCP servers
that code touches (``SessionOptions.servers_for``): ``-e '1+1'`` pays for V8 alone, not for the
MCP SDK's import or a server's start. Ctrl-C interrupts the program (exit status 3).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

from .. import compat
from ..client.inprocess import Collected, fold
from ..client.result import Collector, StepError, StepResult
from ..session import Progress, Result, Session, SessionOptions
from .options import Options, load_cell


def session_options(o: Options, code: str | None) -> SessionOptions:
    opts = SessionOptions(cwd=Path.cwd(), config=o.config, server=o.server, profile=o.profile, servers_for=code, owns_process=True)
    if o.timeout:
        opts.timeout = o.timeout
    if o.max_output_chars:
        opts.max_output_chars = o.max_output_chars
    if o.artifact_dir:
        opts.artifact_dir = Path(o.artifact_dir).absolute()
    return opts


class _CtrlC:
    """Ctrl-C stops the program whenever it comes, also before its first cell runs.

    An interrupt of an idle engine is a no-op by design (Jupyter clients send one before every
    shutdown), so a press that came while V8 or the servers were still starting is remembered:
    no further cell starts, and the press is repeated until the cell being started takes it.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.pressed = False
        self._retry: asyncio.TimerHandle | None = None

    def press(self) -> None:
        self.pressed = True
        self.session.interrupt()
        if self.session.engine.current_cell is None and self._retry is None:
            self._retry = asyncio.get_running_loop().call_later(0.05, self._again)

    def _again(self) -> None:
        self._retry = None
        self.press()

    def stop(self) -> None:
        if self._retry is not None:
            self._retry.cancel()


async def _run(o: Options, cells: list[str], everything: str) -> StepResult:
    session = Session(session_options(o, everything))
    started = time.monotonic()
    collector = Collector()
    collector.result.traced = o.trace
    loop = asyncio.get_running_loop()
    ctrl_c = _CtrlC(session)
    loop.add_signal_handler(signal.SIGINT, ctrl_c.press)
    loop.set_exception_handler(_quiet_v8_callbacks)
    progress: Progress = "stderr" if sys.stderr.isatty() and not o.quiet and not o.json else "off"
    ask = _terminal_ask if sys.stdin.isatty() and sys.stderr.isatty() and not o.json else None  # the approval gate's questions
    try:
        await session.start()
        for code in cells:  # named cell[1], cell[2]…, as a kernel names them
            if ctrl_c.pressed:
                collector.result.error = StepError("InterruptError", "interrupted before the program started", "")
                break
            result: Result = await session.execute(code, Collected(collector), progress=progress, ask=ask)
            fold(collector, result)
            if not result.ok:
                break
    finally:
        ctrl_c.stop()
        loop.remove_signal_handler(signal.SIGINT)
        await session.close()
    return collector.finish((time.monotonic() - started) * 1000)


async def _terminal_ask(prompt: str) -> str:
    """A question to the person at the terminal (stderr), answered by a line on stdin, read without
    blocking the loop: the step's other calls, Ctrl-C and its time limit go on while it waits."""
    loop = asyncio.get_running_loop()
    sys.stderr.write(prompt)
    sys.stderr.flush()
    answer: asyncio.Future[bytes] = loop.create_future()
    fd = sys.stdin.fileno()

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""  # no answer: the default, which runs nothing
        if not answer.done():
            answer.set_result(data)

    loop.add_reader(fd, readable)
    try:
        data = await answer
    finally:
        loop.remove_reader(fd)
    return (data.decode(errors="replace").splitlines() or [""])[0]


def _quiet_v8_callbacks(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """mini-racer logs a failed conversion of a V8 callback that arrives as the run tears down; the
    program's outcome is already known by then, so that is not the user's business (the rest is)."""
    if "_handle_callback_from_v8_on_event_loop" not in repr(context.get("handle")):
        loop.default_exception_handler(context)


def run(o: Options, code: str | None, helpers: list[tuple[str, str]]) -> StepResult:
    """Run the helpers, then the program, in one fresh Session; the last value is the result."""
    cells = [load_cell(p, text) for p, text in helpers] + ([code] if code is not None else [])
    everything = "\n".join([*(text for _, text in helpers), code or ""])
    return asyncio.run(_run(o, cells, everything))


def leave(status: int) -> NoReturn:
    """End the command's process once the run is over and its output said: ``atexit``'s handlers
    run, the output flushed, then ``os._exit`` (compat.exit_now). The Session is closed by then (servers stopped, artifacts
    written, the loop's worker threads joined by ``asyncio.run``); what the interpreter's teardown
    would add is freeing V8's isolate and every module's objects, 10-20 ms nobody sees."""
    compat.exit_now(status, (sys.stdout, sys.stderr))
