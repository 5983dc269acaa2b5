"""``mcp2repl --session NAME``, ``--stop NAME`` and ``mcp2repl sessions``: persistent sessions from the shell.

A step attaches to the session's kernel (starting it on first use), runs under the session's lock
and leaves the kernel running. Ctrl-C interrupts the step, never the session. This module is on
the warm path of every step (a 100 ms budget): it imports the ZMQ client and nothing heavier.
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from ..client import registry
from ..client.kernel_session import Channel, KernelSession
from ..client.registry import SessionFiles, StartOptions
from ..client.result import StepResult
from . import render
from .options import Options, load_cell
from .render import notice

#: What holds a step's session while it runs: interrupts it when asked to, and closes it at the end.
Watch = Callable[[KernelSession], contextlib.AbstractContextManager[None]]


def start_options(o: Options) -> StartOptions:
    return StartOptions(
        config=o.config,
        server=o.server,
        profile=o.profile,
        max_output_chars=o.max_output_chars,
        artifact_dir=o.artifact_dir,
        idle_timeout=o.idle_timeout,
    )


def step(
    o: Options,
    code: str | None,
    helpers: list[tuple[str, str]],
    err: TextIO | None = None,
    watch: Watch | None = None,
    pid: int | None = None,
    channel: Channel | None = None,
) -> tuple[StepResult | None, int]:
    """Run the helpers and the program as steps of session ``o.session`` (None when only restarting),
    and the step's output limit (what bounds its --json envelope): its own, else the session's.

    ``err`` is where notices go (stderr); ``watch`` what interrupts the step (Ctrl-C of this process
    by default; a step served by the session's kernel is interrupted when its client goes, cli/served.py);
    ``channel`` the way to the kernel when the step is served by that kernel itself (kernel/direct.py)."""
    assert o.session is not None
    session = KernelSession(
        o.session,
        gateway=o.gateway,
        options=start_options(o),
        restart=o.restart,
        notify=lambda text: notice(text, o.quiet, err),
        client=f"mcp2repl --session {o.session}",
        kind="cli",
        pid=pid,
        channel=channel,
    )
    for line in session.notices:
        notice(line, o.quiet, err)
    with (watch or _ctrl_c)(session):
        result: StepResult | None = None
        limit = o.max_output_chars or session.output_limit
        for path, text in helpers:
            result = session.step(load_cell(path, text), o.timeout, max_output_chars=o.max_output_chars, trace=o.trace)
            if not result.ok or code is None:
                return result, limit
        if code is not None:
            result = session.step(code, o.timeout, max_output_chars=o.max_output_chars, trace=o.trace)
        return result, limit


@contextlib.contextmanager
def _ctrl_c(session: KernelSession) -> Iterator[None]:
    """Ctrl-C interrupts the step, never the session; the session is let go of at the end."""
    previous = signal.signal(signal.SIGINT, lambda *_: session.interrupt())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        session.close()


def stop(o: Options) -> str:
    assert o.session is not None
    files = SessionFiles(o.session)
    if o.gateway:
        session = KernelSession(o.session, gateway=o.gateway)
        session.stop()
        return f"stopped session {o.session!r} on the gateway"
    try:
        return registry.stop(files)
    finally:
        for line in files.notices:
            notice(line, o.quiet)


def listing(notices: list[str]) -> list[dict[str, Any]]:
    """Every session of this directory: name, state (and why, when not running), pid, started, last used, servers,
    and its notebook (where, how many steps, who stepped it last)."""
    from ..record.notebook import summary
    cwd = Path.cwd().absolute()
    registry.secure_folders(cwd, notices)
    rows = []
    for name in registry.names(cwd):
        files = SessionFiles(name, cwd)
        verdict = files.check()
        notices += files.notices
        meta = files.read_meta() or {}
        row: dict[str, Any] = {
            "name": name,
            "state": verdict.state,
            "reason": verdict.reason or None,
            "pid": meta.get("pid"),
            "started": meta.get("started"),
            "lastUsed": files.last_used(),
            "servers": None,
            "connectionFile": str(files.conn) if verdict.state == "running" else None,
            "notebook": None,
            "steps": 0,
            "lastClient": None,
        }
        if (recorded := summary(files.notebook)) is not None:
            row.update(notebook=files.rel(files.notebook), steps=recorded.get("steps", 0), lastClient=recorded.get("lastClient"))
        if verdict.state == "running" and verdict.info is not None:
            row["servers"] = _servers(verdict.info)
        rows.append(row)
    return rows


def _servers(info: dict[str, Any]) -> str | None:
    """The server lines of the kernel's banner (kernel_info is answered even while a step runs)."""
    from ..client.wire import KernelConnection

    conn = KernelConnection(info)
    try:
        reply = conn.kernel_info(timeout=3)
    finally:
        conn.close()
    if reply is None:
        return "(no answer)"
    lines = reply.get("banner", "").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("MCP servers from ")), None)
    return "; ".join(line.strip() for line in lines[start + 1 :]) if start is not None else None


def print_listing(as_json: bool) -> int:
    notices: list[str] = []
    rows = listing(notices)
    for line in notices:
        notice(line, False)
    if as_json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no sessions in .mcp2repl/sessions/ (start one with: mcp2repl --session NAME -e CODE)")
        return 0
    table = [("NAME", "STATE", "PID", "STARTED", "LAST USED", "STEPS", "LAST BY", "NOTEBOOK", "SERVERS")]
    for r in rows:
        last = r["reason"] if r["state"] == "untrusted" else r["servers"]
        steps = (str(r["steps"]), r["lastClient"] or "-", r["notebook"] or "-")
        table.append((r["name"], r["state"], str(r["pid"] or "-"), _when(r["started"]), _when(r["lastUsed"]), *steps, last or "-"))
    widths = [max(len(row[i]) for row in table) for i in range(8)]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row[:8], widths, strict=True)) + "  " + row[8])
    return 0


def export(argv: list[str]) -> int:
    """``mcp2repl sessions export NAME [-o FILE] [--parameters] [--keep-errors]``: the session's notebook, clean."""
    import argparse

    from ..lean_imports import hide_iri_grammar

    hide_iri_grammar()
    import nbformat

    from ..record.export import export as clean

    parser = argparse.ArgumentParser(
        prog="mcp2repl sessions export",
        description="Write a session's steps as a clean notebook that runs again with mcp2repl run or papermill.",
    )
    parser.add_argument("name", help="the session (its record is .mcp2repl/sessions/NAME.ipynb)")
    parser.add_argument("-o", "--output", help="where to write it (default NAME.ipynb here; an existing file is replaced only when named)")
    parser.add_argument("--parameters", action="store_true", help="the data given to steps becomes a papermill parameters cell")
    parser.add_argument("--keep-errors", action="store_true", help="keep failed steps as code cells (tagged raises-exception)")
    args = parser.parse_args(argv)
    try:
        files = SessionFiles(args.name)
        files.secure()
    except registry.SessionError as exc:
        return render.usage(str(exc), False)
    shown = files.rel(files.notebook)
    try:
        record = json.loads(files.notebook.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return render.usage(f"session {args.name!r} has no notebook ({shown}): its steps are recorded from its first step on", False)
    except (OSError, ValueError) as exc:
        return render.usage(f"cannot read {shown}: {getattr(exc, 'strerror', None) or exc}", False)
    target = Path(args.output or f"{args.name}.ipynb")
    if args.output is None and target.exists():
        return render.usage(f"{target} exists: name the file to write with -o (-o {target} replaces it)", False)
    done = clean(record if isinstance(record, dict) else {}, parameters=args.parameters, keep_errors=args.keep_errors)
    node = nbformat.from_dict(done.notebook)
    try:
        nbformat.validate(node)
        nbformat.write(node, str(target))
    except (OSError, nbformat.ValidationError) as exc:
        return render.usage(f"cannot write {target}: {getattr(exc, 'strerror', None) or exc}", False)
    said = [f"{done.steps} step{'s' * (done.steps != 1)}"]
    if done.failed:
        said.append(f"{len(done.failed)} failed left out as notes")
    if done.unfinished:
        said.append(f"{done.unfinished} unfinished left out")
    if done.parameters:
        said.append(f"parameters {', '.join(done.parameters)}")
    print(f"wrote {target}: {'; '.join(said)}. Run it again with: mcp2repl run {target}")
    return render.OK


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp)) if stamp else "-"

