"""Plans waiting for a person: approved or rejected out of band, from the person's own shell.

An agent driving a named session has nobody at its step to ask, so ``plan.apply()`` in that
session's kernel writes the plan's record to ``.mcp2repl/sessions/plans/NAME/ID.json`` and waits
(bounded, interruptible) for ``ID.decision`` beside it, which ``mcp2repl sessions approve NAME ID``
or ``reject NAME ID`` writes. The agent's code cannot write there: cells have no file access but
the artifact folder, which is never inside ``.mcp2repl/sessions/`` where a session approves
plans (the kernel checks, :func:`artifacts_problem`). A decision is trusted only as a session's
files are (trust.py): a regular file of the user's, private, not a link, in the user's own real
folders; anything else counts as no decision.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .trust import SessionError, file_problem, folder_problem, write_private

PLANS = "plans"
#: A plan id as api/plans.py makes them.
PLAN_ID = re.compile(r"^[0-9a-f]{8}$")
VERDICTS = ("approved", "rejected")


def plans_folder(sessions: Path, name: str) -> Path:
    return sessions / PLANS / name


def artifacts_problem(sessions: Path, artifacts: Path) -> str | None:
    """Why out-of-band approval must stay off for a kernel whose artifact folder is ``artifacts`` (None: it may be on)."""
    a, s = os.path.realpath(artifacts), os.path.realpath(sessions)
    if a == s or a.startswith(s + os.sep) or s.startswith(a + os.sep):
        return "its artifact folder overlaps .mcp2repl/sessions/, where plans are approved: cells could write a decision"
    return None


class PlanFolder:
    """The pending plans of session ``name`` (``sessions``: its ``.mcp2repl/sessions`` folder)."""

    def __init__(self, sessions: Path, name: str) -> None:
        self.sessions = sessions
        self.name = name
        self.folder = plans_folder(sessions, name)

    def _secure(self, create: bool) -> bool:
        """Are ``plans/`` and ``plans/NAME/`` the user's own real folders, closed to others? (creating them, 0700)"""
        for path in (self.folder.parent, self.folder):
            if create and not os.path.lexists(path):
                with contextlib.suppress(FileExistsError):
                    path.mkdir(mode=0o700)
            try:
                problem, mode = folder_problem(path)
            except FileNotFoundError:
                return False
            if problem or mode & 0o077:
                if create:
                    raise SessionError(f"{path} {problem or f'is open to others (mode {mode:04o})'}: no plan is kept there (remove it)")
                return False
        return True

    def _path(self, plan: str, suffix: str) -> Path:
        if not PLAN_ID.match(plan or ""):
            raise SessionError(f"invalid plan id {plan!r}: plan ids are 8 hex digits, as mcp2repl sessions plans {self.name} lists them")
        return self.folder / f"{plan}{suffix}"

    def write_pending(self, record: dict[str, Any]) -> None:
        self._secure(create=True)
        self.forget(record["id"])  # an old decision of the same id means nothing now
        write_private(self._path(record["id"], ".json"), json.dumps(record, indent=1), f"plan {record['id']}")

    def _read(self, path: Path) -> Any:
        if file_problem(path) is not None:
            return None
        with contextlib.suppress(OSError, ValueError):
            return json.loads(path.read_text())
        return None

    def pending(self) -> list[dict[str, Any]]:
        """The plans waiting for a decision, oldest first (only trusted records)."""
        if not self._secure(create=False):
            return []
        found = []
        for path in sorted(self.folder.glob("*.json")):
            record = self._read(path)
            if isinstance(record, dict) and PLAN_ID.match(str(record.get("id"))) and path.stem == record["id"] and self.decision(path.stem) is None:
                found.append(record)
        return sorted(found, key=lambda r: r.get("created") or 0)

    def decide(self, plan: str, verdict: str) -> None:
        """The person's decision on a pending plan (from their shell); SessionError when there is no such plan."""
        assert verdict in VERDICTS
        record = self._path(plan, ".json")  # a bad id is refused first, whatever the folder holds
        if not self._secure(create=False) or not isinstance(self._read(record), dict):
            raise SessionError(f"session {self.name!r} has no plan {plan} waiting (mcp2repl sessions plans {self.name} lists them)")
        write_private(self._path(plan, ".decision"), verdict, f"the decision on plan {plan}")

    def decision(self, plan: str) -> str | None:
        """``approved`` or ``rejected`` if a trusted decision file says so, else None."""
        if not self._secure(create=False):
            return None
        path = self._path(plan, ".decision")
        if file_problem(path) is not None:
            return None
        with contextlib.suppress(OSError):
            text = path.read_text().strip()
            return text if text in VERDICTS else None
        return None

    def forget(self, plan: str) -> None:
        for suffix in (".json", ".decision"):
            with contextlib.suppress(OSError):
                self._path(plan, suffix).unlink()


class Elsewhere:
    """A session kernel's out-of-band approval (api/approvals.py: ``Elsewhere``): record, then wait for the decision."""

    def __init__(self, folder: PlanFolder, timeout: float, poll: float = 0.25) -> None:
        self.folder = folder
        self.timeout = timeout
        self.poll = poll

    async def __call__(self, record: dict[str, Any], say: Callable[[str], None]) -> str:
        plan, name = record["id"], self.folder.name
        record = {**record, "session": name, "timeout": self.timeout}
        await asyncio.to_thread(self.folder.write_pending, record)
        say(
            f"[mcp2repl] plan {plan} waits up to {self.timeout:g} s for a person's decision, from their own shell: "
            f"mcp2repl sessions plans {name} shows it; mcp2repl sessions approve {name} {plan} (or reject) decides\n"
        )
        deadline = time.monotonic() + self.timeout
        try:
            while time.monotonic() < deadline:
                verdict = await asyncio.to_thread(self.folder.decision, plan)
                if verdict is not None:
                    return verdict
                await asyncio.sleep(self.poll)
            return "timeout"
        finally:  # decided, timed out or interrupted: the record goes (an interrupted step left nothing to approve)
            self.folder.forget(plan)
