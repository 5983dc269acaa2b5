"""A named session's kernel approves plans out of band: nobody answers at its steps (client/approvals.py).

A session's kernel is started with its connection file at ``.mcp2repl/sessions/kernels/NAME.json``
(client/registry.py), which names the session and its folder. Its plans then wait for the
person's ``mcp2repl sessions approve NAME ID`` (at most ``MCP2REPL_APPROVAL_TIMEOUT`` seconds,
default 600), unless the artifact folder, the one place a cell may write, overlaps that folder.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ..client.approvals import Elsewhere, PlanFolder, artifacts_problem
from ..session import Session

log = logging.getLogger(__name__)
#: Seconds an apply waits for an out-of-band decision by default.
TIMEOUT = 600.0


def out_of_band(session: Session, connection_file: str) -> None:
    """Let the session's plans wait for an out-of-band decision, if this kernel is a named session's."""
    path = Path(connection_file)
    sessions = path.parent.parent
    if path.parent.name != "kernels" or sessions.name != "sessions" or sessions.parent.name != ".mcp2repl" or path.suffix != ".json":
        return
    if problem := artifacts_problem(sessions, session.artifacts.root):
        log.warning("plans of session %s cannot be approved out of band: %s", path.stem, problem)
        return
    try:
        timeout = float(os.environ.get("MCP2REPL_APPROVAL_TIMEOUT") or TIMEOUT)
    except ValueError:
        timeout = TIMEOUT
    session.tools.gate.elsewhere = Elsewhere(PlanFolder(sessions, path.stem), timeout)
