"""``mcp2repl --session NAME``, ``--stop NAME`` and ``mcp2repl sessions``: persistent sessions from the shell.

A step attaches to the session's kernel (starting it on first use), runs under the session's lock
and leaves the kernel running. Ctrl-C interrupts the step, never the session. This module is on
the warm path of every step (a 100 ms budget): it imports the ZMQ client and nothing heavier.
"""

from __future__ import annotations

import json
import signal
import time
from typing import Any

from ..client import registry
from ..client.kernel_session import KernelSession
from ..client.registry import SessionFiles, StartOptions
from ..client.result import StepResult
from .options import Options, load_cell
from .render import notice


def start_options(o: Options) -> StartOptions:
    return StartOptions(
        config=o.config,
        server=o.server,
        profile=o.profile,
        max_output_chars=o.max_output_chars,
        artifact_dir=o.artifact_dir,
        idle_timeout=o.idle_timeout,
    )


def step(o: Options, code: str | None, helpers: list[tuple[str, str]]) -> StepResult | None:
    """Run the helpers and the program as steps of session ``o.session`` (None when only restarting)."""
    assert o.session is not None
    session = KernelSession(o.session, gateway=o.gateway, options=start_options(o), restart=o.restart)
    for line in session.notices:
        notice(line, o.quiet)
    previous = signal.signal(signal.SIGINT, lambda *_: session.interrupt())
    try:
        result: StepResult | None = None
        for path, text in helpers:
            result = session.step(load_cell(path, text), o.timeout)
            if not result.ok or code is None:
                return result
        if code is not None:
            result = session.step(code, o.timeout)
        return result
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
    return registry.stop(files)


def listing() -> list[dict[str, Any]]:
    """Every session of this directory: name, state, pid, started, last used, servers."""
    rows = []
    for name in registry.names():
        files = SessionFiles(name)
        meta = files.read_meta() or {}
        state = files.state()
        row: dict[str, Any] = {
            "name": name,
            "state": state,
            "pid": meta.get("pid"),
            "started": meta.get("started"),
            "lastUsed": files.last_used(),
            "servers": None,
            "connectionFile": str(files.conn) if state == "running" else None,
        }
        if state == "running":
            row["servers"] = _servers(files)
        rows.append(row)
    return rows


def _servers(files: SessionFiles) -> str | None:
    """The server lines of the kernel's banner (kernel_info is answered even while a step runs)."""
    info = files.conn_info()
    if info is None:
        return None
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
    rows = listing()
    if as_json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no sessions in .mcp2repl/sessions/ (start one with: mcp2repl --session NAME -e CODE)")
        return 0
    table = [("NAME", "STATE", "PID", "STARTED", "LAST USED", "SERVERS")]
    for r in rows:
        table.append((r["name"], r["state"], str(r["pid"] or "-"), _when(r["started"]), _when(r["lastUsed"]), r["servers"] or "-"))
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths, strict=True)) + "  " + row[5])
    return 0


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp)) if stamp else "-"

