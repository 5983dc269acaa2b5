"""``mcp2repl sessions plans NAME``, ``approve NAME ID``, ``reject NAME ID``: a person decides an agent's plan.

A plan applied in a named session, where nobody answers at the step, waits for one of these
(client/approvals.py). They run in the person's shell, never in a cell: that is what makes the
approval the person's and not the agent's own.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..client import registry
from ..client.approvals import PlanFolder
from ..client.registry import SessionFiles
from .render import notice

USAGE = "mcp2repl sessions plans NAME [--json] | mcp2repl sessions approve NAME ID | mcp2repl sessions reject NAME ID"


def command(args: list[str], as_json: bool) -> int:
    """Run one of the plan commands (``args`` without ``--json``); raises SessionError or ValueError (usage)."""
    verb, *rest = args
    if len(rest) != (1 if verb == "plans" else 2):
        raise ValueError(f"usage: {USAGE}")
    files = SessionFiles(rest[0])
    registry.secure_folders(Path.cwd().absolute(), files.notices)
    for line in files.notices:
        notice(line, False)
    folder = PlanFolder(files.folder, files.name)
    if verb == "plans":
        pending = folder.pending()
        if as_json:
            print(json.dumps(pending))
        elif not pending:
            print(f"session {files.name!r} has no plan waiting for approval")
        for record in [] if as_json else pending:
            waited = time.time() - float(record.get("created") or time.time())
            print(f"plan {record['id']}: {record.get('calls')} call(s), waiting {waited:.0f} s (of {float(record.get('timeout') or 0):.0f} s)")
            print("\n".join(str(line) for line in record.get("summary") or []))
            print(f"  approve: mcp2repl sessions approve {files.name} {record['id']}    reject: mcp2repl sessions reject {files.name} {record['id']}")
        return 0
    verdict = "approved" if verb == "approve" else "rejected"
    folder.decide(rest[1], verdict)
    print(json.dumps({"plan": rest[1], "decision": verdict}) if as_json else f"plan {rest[1]} of session {files.name!r}: {verdict}")
    return 0
