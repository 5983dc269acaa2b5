"""The approval gate: one question per tool per step, not per call; one question per plan.

A call that needs approval (servers/approval.py says which) asks the person at the step
(Jupyter's input request, the one-shot command's terminal, an MCP client's elicitation) with the
tool, its arguments (bounded, secrets masked: servers/shown.py) and how many calls of it this step
has made. The answer letters are fixed so that scripts and tests can answer: ``y`` this call, ``n``
no, ``a`` every call of this tool in this step, ``s`` every call of it for the rest of the session.
A refused call fails with code ``declined``; the step goes on, or stops, as its code decides.

A plan (plans.py) is asked for once, with its summary. Where nobody can answer at the step, a
named session's kernel asks out of band (``Elsewhere``: a pending-plan record the person decides
from their own shell, ``mcp2repl sessions approve``); anything else is refused with what to do.
The memory of ``a`` is the step's (its call trace is the step's identity: a cell name may repeat),
of ``s`` the Session's; a cell can set neither: both change only on a person's answer here.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from ..engine import BridgeError
from ..servers.shown import argument_lines, neutral

Ask = Callable[[str], Awaitable[str]]  # a question for the person at the notebook; their answer
#: Out-of-band approval of a plan (a named session): its record and a way to tell the step what to do in;
#: "approved", "rejected" or "timeout" out.
Elsewhere = Callable[[dict[str, Any], Callable[[str], None]], Awaitable[str]]

CHOICES = "y: yes, n: no, a: all its calls in this step, s: all its calls in this session [y/N/a/s] "


def declined(message: str, **where: Any) -> BridgeError:
    return BridgeError("ToolError", message, code="declined", **where)


class Gate:
    """Asks before calls and plans that need approval, remembering "all" answers for the step or the session."""

    def __init__(self, asker: Callable[[str], Ask | None], redact: Callable[[str], str], elsewhere: Elsewhere | None = None) -> None:
        self.asker = asker
        self.redact = redact
        self.elsewhere = elsewhere
        self.session_all: set[tuple[str, str]] = set()
        self._steps: dict[str, tuple[object, set[tuple[str, str]], Counter[tuple[str, str]]]] = {}
        self._asking = asyncio.Lock()  # one question at a time

    def _step(self, cell: str, step: object) -> tuple[set[tuple[str, str]], Counter[tuple[str, str]]]:
        """This step's "all" answers and call counts (a new step under an old cell name starts afresh)."""
        known = self._steps.get(cell)
        if known is None or known[0] is not step:
            while len(self._steps) >= 256:  # ended steps' memories: the oldest go
                self._steps.pop(next(iter(self._steps)))
            known = self._steps[cell] = (step, set(), Counter())
        return known[1], known[2]

    def allowed(self, key: tuple[str, str], cell: str, step: object) -> bool:
        """Has the person already said yes to every call of this tool, for this step or the session?"""
        return key in self.session_all or (step is not None and key in self._step(cell, step)[0])

    async def check(self, entry: Any, args: dict[str, Any], cell: str, step: object) -> None:
        """Return when the call may run; raise ``declined`` (or ``confirmation_required``: nobody to ask)."""
        key = (entry.server, entry.name)
        where = {"server": entry.server, "tool": entry.name}
        count = 0
        if step is not None:
            counts = self._step(cell, step)[1]
            counts[key] += 1
            count = counts[key]
        if self.allowed(key, cell, step):
            return
        ask = self.asker(cell)
        if ask is None:
            raise BridgeError(
                "ToolError",
                f"{entry.qualified} may change or delete data, and this session asks before running such tools, but nobody can "
                'answer here (no stdin: papermill, nbclient, --json). To run it unattended, list it in the server\'s "allow_destructive"; '
                "to have a person approve the writes, plan them with api.plan and apply the plan in a named session.",
                code="confirmation_required",
                **where,
            )
        tool, lines = neutral(entry.qualified, one_line=True), argument_lines(args, self.redact)
        nth = f" (call {count} of it in this step)" if count else ""
        head = f"Run {tool}, which may change or delete data?{nth}" if lines else f"Run {tool} (no arguments), which may change or delete data?{nth}"
        prompt = "\n".join([head, *(f"  {line}" for line in lines), CHOICES])
        async with self._asking:
            if self.allowed(key, cell, step):  # answered "all" while this call waited its turn
                return
            answer = (await ask(self.redact(prompt))).strip().lower()
        if answer in ("a", "all") and step is not None:
            self._step(cell, step)[0].add(key)
        elif answer in ("s", "session"):
            self.session_all.add(key)
        elif answer not in ("y", "yes", "a", "all"):
            raise declined("not run (declined at the prompt)", context=entry.qualified, **where)

    async def approve_plan(self, record: dict[str, Any], lines: list[str], cell: str, say: Callable[[str], None]) -> None:
        """Return when the person approved the plan ``record`` (``lines``: its summary); raise ``declined`` if not."""
        ask = self.asker(cell)
        shown = record["id"]
        if ask is not None:
            prompt = "\n".join([f"Apply plan {shown}: {_calls(record['calls'])}, which may change or delete data?", *lines, "[y/N] "])
            async with self._asking:
                answer = (await ask(self.redact(prompt))).strip().lower()
            if answer not in ("y", "yes"):
                raise declined(f"plan {shown} not applied (declined at the prompt); none of its calls ran")
            return
        if self.elsewhere is None:
            raise BridgeError(
                "ToolError",
                f"plan {shown} needs a person's approval and nobody can answer here (no stdin: papermill, nbclient, --json, "
                "an MCP client without elicitation). Apply it in a named session (mcp2repl --session NAME), where the person "
                "approves it from their shell with mcp2repl sessions approve NAME ID; none of its calls ran.",
                code="confirmation_required",
            )
        verdict = await self.elsewhere(record, say)
        if verdict == "timeout":
            raise BridgeError(
                "ToolError", f"plan {shown} was neither approved nor rejected in time; none of its calls ran (apply it again to wait again)", code="approval_timeout"
            )
        if verdict != "approved":
            raise declined(f"plan {shown} not applied (rejected out of band); none of its calls ran")


def _calls(n: int) -> str:
    return f"{n} call" if n == 1 else f"{n} calls"
