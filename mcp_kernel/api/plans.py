"""``api.plan(fn)`` and ``plan.apply()``: record the writes, approve them once, run exactly those.

While a plan's function runs, every call of its step that may write (servers/approval.py:
``writes``) is recorded here instead of sent and answers a placeholder ``{planned: true, server,
tool, index}``; reads run for real. Recording belongs to the step, not to a promise chain: any call
the step makes while the function runs is recorded, its concurrent code's too (a timer of the same
step, a promise it did not await); calls of other steps (an earlier step's timer) are not.

The calls live in Python, keyed by the plan's id: JS holds the id and a frozen copy to show, so
nothing a cell does after planning changes what runs. ``apply`` asks once (approvals.py, with the
summary), then sends the stored calls in order through the same path as any call (the step's call
trace records them), stops at the first failure unless ``continueOnError``, and never runs a plan
twice. Plans outlive their step (the JS value is a global like any other).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..engine import BridgeError, CallContext, JsonPieces
from ..servers.approval import approval
from ..servers.shown import argument_lines, neutral

if TYPE_CHECKING:
    from .tools import ToolsApi

#: Calls one plan may hold; a plan that needs more is cut into several.
MOST_CALLS = 10_000
#: Plans kept; the oldest applied ones go first.
MOST_PLANS = 200


@dataclass
class Plan:
    id: str
    cell: str
    step: object  # the step's call trace while it runs: recording ends with the step, however it ends
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (server, tool, args), in order
    state: str = "recording"  # recording, ready, asking, applied, rejected


def summary(plan: Plan) -> list[dict[str, Any]]:
    """Per tool, in order of first use: how many calls, and the first call's arguments."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for server, tool, args in plan.calls:
        row = rows.get((server, tool))
        if row is None:
            rows[(server, tool)] = {"tool": f"{server}.{tool}", "count": 1, "first": args}
        else:
            row["count"] += 1
    return list(rows.values())


def summary_lines(plan: Plan, redact: Any) -> list[str]:
    """The summary as a person reads it before approving: a line per tool, the first call's arguments under it."""
    lines = []
    for row in summary(plan):
        tool, n = neutral(row["tool"], one_line=True), row["count"]
        args = argument_lines(row["first"], redact)
        lines.append(f"  {tool}: {n} call{'s' if n != 1 else ''}" + (", the first with" if args and n > 1 else " with" if args else ", no arguments"))
        lines += [f"    {line}" for line in args]
    return lines


class Plans:
    """The plans of one Session and the handlers of ``api.plan``."""

    def __init__(self, tools: ToolsApi) -> None:
        self.tools = tools
        self._plans: dict[str, Plan] = {}
        self._recording: dict[str, Plan] = {}  # step (cell) -> the plan its calls go to

    def handlers(self) -> dict[str, Any]:
        return {"api.plan.begin": self.begin, "api.plan.end": self.end, "api.plan.apply": self.apply}

    def record(self, cell: str, entry: Any, args: dict[str, Any]) -> dict[str, Any] | None:
        """The placeholder of a call recorded into the step's plan; None when no plan is recording."""
        plan = self._recording.get(cell)
        if plan is not None and plan.step is not self.tools.traces(cell):  # an interrupted step never said "end"
            del self._recording[cell]
            self._plans.pop(plan.id, None)
            plan = None
        if plan is None:
            return None
        if len(plan.calls) >= MOST_CALLS:
            raise BridgeError("RangeError", f"api.plan: a plan holds at most {MOST_CALLS:,} calls; make several plans")
        plan.calls.append((entry.server, entry.name, json.loads(json.dumps(args))))
        return {"planned": True, "server": entry.server, "tool": entry.name, "index": len(plan.calls) - 1}

    async def begin(self, params: Any, ctx: CallContext) -> Any:
        if (open_plan := self._recording.get(ctx.cell)) is not None and open_plan.step is self.tools.traces(ctx.cell):
            raise BridgeError("TypeError", "api.plan: a plan is already being recorded in this step (plans do not nest)")
        if len(self._plans) >= MOST_PLANS:
            done = [k for k, p in self._plans.items() if p.state in ("applied", "rejected")] or list(self._plans)
            self._plans.pop(done[0])
        plan = Plan(os.urandom(4).hex(), ctx.cell, self.tools.traces(ctx.cell))
        self._plans[plan.id] = plan
        self._recording[ctx.cell] = plan
        return {"id": plan.id}

    async def end(self, params: dict[str, Any], ctx: CallContext) -> Any:
        plan = self._plans.get(str(params.get("id")))
        if plan is None or self._recording.get(plan.cell) is not plan:
            raise BridgeError("TypeError", "api.plan: no such plan is being recorded")
        del self._recording[plan.cell]
        if params.get("discard"):  # its function threw: nothing to apply
            del self._plans[plan.id]
            return None
        plan.state = "ready"
        return {"id": plan.id, "calls": [{"server": s, "tool": t, "args": a} for s, t, a in plan.calls], "summary": summary(plan)}

    async def apply(self, params: dict[str, Any], ctx: CallContext) -> Any:
        plan = self._plans.get(str(params.get("id")))
        if plan is None:
            raise BridgeError("TypeError", f"plan {params.get('id')} is not known to this session (plans live as long as the kernel)")
        if plan.state != "ready":
            why = {"recording": "its api.plan has not finished", "asking": "it is waiting for approval", "applied": "it was applied already"}
            text = why.get(plan.state, "it was declined")
            raise BridgeError("ToolError", f"plan {plan.id} cannot be applied: {text}; a plan runs once (make a new one)", code="already_applied")
        tools, cell, step = self.tools, ctx.cell, self.tools.traces(ctx.cell)
        resolved = [await tools.resolve({"server": s, "tool": t}, a, cell) for s, t, a in plan.calls]  # as they were checked when planned
        policy = tools.policy().confirm_destructive
        needs = any(
            approval(entry.tool, spec, policy).needed and not tools.gate.allowed((entry.server, entry.name), cell, step) for entry, _, spec in resolved
        )
        if needs:
            plan.state = "asking"
            lines = summary_lines(plan, tools.redact)  # bounded, escaped, secrets masked: what a person may be shown
            record = {"id": plan.id, "created": time.time(), "calls": len(plan.calls), "summary": lines}
            try:
                await tools.gate.approve_plan(record, lines, cell, (step.stderr if step else None) or (lambda text: None))
            except BridgeError as exc:
                plan.state = "rejected" if exc.extra.get("code") == "declined" else "ready"
                raise
            except BaseException:
                plan.state = "ready"  # interrupted while waiting: nothing ran, it may be applied again
                raise
        plan.state = "applied"  # from here on, never again: not even after a failure or an interrupt
        return await self._run(plan, resolved, cell, bool(params.get("continueOnError")))

    async def _run(self, plan: Plan, resolved: list[tuple[Any, dict[str, Any], Any]], cell: str, go_on: bool) -> JsonPieces:
        """Send the calls in order; each outcome as ``{ok, reply}`` or ``{ok, error}``; after a failure, the rest are not run."""
        pieces: list[str] = ["["]
        texts: list[tuple[list[Any], str]] = []
        failed: str | None = None
        for i, (entry, args, _) in enumerate(resolved):
            if i:
                pieces.append(",")
            if failed is not None and not go_on:
                error = {"code": "not_run", "message": f"not run: {failed}"}
                pieces.append(json.dumps({"ok": False, "error": error}))
                continue
            try:
                reply, is_error = await self.tools.send(entry, args, cell)
            except BridgeError as exc:
                error = {"code": exc.extra.get("code") or exc.name, "message": exc.message}
                pieces.append(json.dumps({"ok": False, "error": error}))
                failed = failed or f"call {i + 1} ({entry.qualified}) failed first: {exc.message}"
                continue
            pieces += ['{"ok":', "false" if is_error else "true", ',"reply":', *reply.pieces, "}"]
            texts += [([i, "reply", *path], text) for path, text in reply.texts]
            if is_error:
                failed = failed or f"call {i + 1} ({entry.qualified}) failed first (the tool reported an error)"
        pieces.append("]")
        return JsonPieces(tuple(pieces), tuple(texts))
