"""Approvals that scale, as a notebook user meets them: a real kernel, its stdin channel answering.

One question per tool per step (y/n/a/s), and api.plan: the writes recorded, approved once,
applied exactly once, in order, stopping at the first failure.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import kernels
import pytest
from conftest import SERVERS, KernelProcess
from kernels import Talk, configured

LEDGER = str(SERVERS / "ledger_server.py")
CHOICES = "y: yes, n: no, a: all its calls in this step, s: all its calls in this session [y/N/a/s] "
TEN_PUTS = "for (let i = 0; i < 10; i++) await mcp.ledger.put({ key: 'k' + i, value: i });"


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    config = {
        "confirm_destructive": True,
        "mcpServers": {
            "ledger": {"command": sys.executable, "args": [LEDGER]},
            "other": {"command": sys.executable, "args": [LEDGER]},
        },
    }
    with configured(tmp_path_factory.mktemp("approvals"), config) as kernel:
        yield kernel


def converse(k: KernelProcess, code: str, answers: list[str]) -> Talk:
    """Execute ``code`` with stdin allowed, answering each input request with the next answer ("n" when none are left)."""
    return kernels.converse(k, code, answers, rest="n")


def ran(k: KernelProcess, server: str = "ledger") -> list[str]:
    return k.json(f"(await mcp.{server}.entries()).ran")


def test_ten_writes_ask_once_when_the_answer_is_all_for_this_step(k: KernelProcess) -> None:
    before = len(ran(k))
    talk = converse(k, TEN_PUTS + " 'done'", ["a"])
    assert talk.prompts == ['Run ledger.put, which may change or delete data? (call 1 of it in this step)\n  key: "k0"\n  value: 0\n' + CHOICES]
    assert ran(k)[before:] == [f"put k{i}" for i in range(10)]
    again = converse(k, "await mcp.ledger.put({ key: 'next step' })", ["n"])  # "all" was for that step only
    assert len(again.prompts) == 1 and again.reply["evalue"] == "not run (declined at the prompt)"


def test_no_runs_none_and_the_code_decides_what_follows(k: KernelProcess) -> None:
    before = ran(k)
    talk = converse(k, TEN_PUTS + " 'done'", ["n"])
    assert len(talk.prompts) == 1
    assert (talk.reply["ename"], talk.reply["evalue"]) == ("ToolError", "not run (declined at the prompt)")
    assert ran(k) == before
    caught = converse(k, "let code; try { await mcp.ledger.put({ key: 'x' }) } catch (e) { code = e.code }; [code, (await mcp.ledger.get({ key: 'x' })).value]", ["no"])
    assert caught.value == ["declined", None]  # the step went on: a read after the refusal ran


def test_yes_asks_for_each_call_and_says_how_many_came_before(k: KernelProcess) -> None:
    talk = converse(k, "for (const key of ['a', 'b', 'c']) await mcp.ledger.put({ key }); 'done'", ["y", "yes", "y"])
    assert [p.split("\n")[0] for p in talk.prompts] == [f"Run ledger.put, which may change or delete data? (call {n} of it in this step)" for n in (1, 2, 3)]
    assert [c["tool"] for c in talk.calls if c["server"] == "ledger"] == ["put", "put", "put"]


def test_all_for_the_session_is_remembered_across_steps(k: KernelProcess) -> None:
    talk = converse(k, "await mcp.other.erase({ key: 'a' }); 'first'", ["s"])
    assert len(talk.prompts) == 1
    later = k.run("await mcp.other.erase({ key: 'b' }); await mcp.other.erase({ key: 'c' }); 'later'")  # no stdin at all now
    assert later.reply["status"] == "ok", later.reply
    assert ran(k, "other")[-3:] == ["erase a", "erase b", "erase c"]
    refused = k.run("await mcp.other.put({ key: 'p' })")  # another tool of the same server: asked for as before
    assert refused.reply["evalue"].startswith("other.put may change or delete data, and this session asks before running such tools")


def apply_prompt(plan: str, calls: int, first: str) -> str:
    return f"Apply plan {plan}: {calls} calls, which may change or delete data?\n  ledger.put: {calls} calls, the first with\n{first}[y/N] "


def test_a_plan_runs_no_writes_then_applies_exactly_those_once(k: KernelProcess) -> None:
    before = ran(k)
    plan = k.json(
        "const seen = []; globalThis.plan = await api.plan(async () => {"
        " for (let i = 0; i < 10; i++) { await mcp.ledger.put({ key: 'p' + i, value: i }); seen.push((await mcp.ledger.get({ key: 'p' + i })).value) } });"
        " ({ id: plan.id, size: plan.size, seen, state: plan.state })"
    )
    assert plan == {"id": plan["id"], "size": 10, "seen": [None] * 10, "state": "ready"}  # the reads ran, and saw no write
    assert ran(k) == before
    talk = converse(k, "const out = await plan.apply(); [out.length, out[0], out[9], plan.state]", ["y"])
    assert talk.prompts == [apply_prompt(plan["id"], 10, '    key: "p0"\n    value: 0\n')]
    assert talk.value == [10, {"ok": True, "data": {"key": "p0", "value": 0}}, {"ok": True, "data": {"key": "p9", "value": 9}}, "applied"]
    assert ran(k) == [*before, *(f"put p{i}" for i in range(10))]  # exactly those, in order
    assert [c["tool"] for c in talk.calls] == ["put"] * 10  # in the step's call trace
    twice = converse(k, "await plan.apply()", ["y"])
    assert twice.prompts == []
    assert twice.reply["evalue"] == f"plan {plan['id']} cannot be applied: it was applied already; a plan runs once (make a new one)"
    assert ran(k) == [*before, *(f"put p{i}" for i in range(10))]


def test_a_failure_stops_the_plan_there_and_says_so(k: KernelProcess) -> None:
    before = ran(k)
    keys = "['f0', 'f1', 'f2', 'fail', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9']"
    k.run(f"globalThis.failing = await api.plan(async () => {{ for (const key of {keys}) await mcp.ledger.put({{ key }}) }})")
    talk = converse(k, "const out = await failing.apply(); out.map((r) => r.ok ? 'ok' : r.error.code + ': ' + r.error.message)", ["y"])
    assert len(talk.prompts) == 1
    stop = "not_run: not run: call 4 (ledger.put) failed first (the tool reported an error)"
    assert talk.value == ["ok", "ok", "ok", "tool_error: cannot put fail", *[stop] * 6]
    assert ran(k) == [*before, "put f0", "put f1", "put f2"]
    k.run(f"globalThis.going = await api.plan(async () => {{ for (const key of {keys}) await mcp.ledger.put({{ key: 'g' + key }}) }})")
    talk = converse(k, "(await going.apply({ continueOnError: true })).filter((r) => r.ok).length", ["y"])
    assert talk.value == 10  # "gfail" is a key like any other: all ran


def test_a_declined_plan_runs_nothing_and_cannot_be_applied_later(k: KernelProcess) -> None:
    before = ran(k)
    k.run("globalThis.unwanted = await api.plan(async () => { await mcp.ledger.put({ key: 'never' }) })")
    talk = converse(k, "let e1; try { await unwanted.apply() } catch (e) { e1 = [e.code, e.message] }; [e1, unwanted.state]", ["n"])
    plan_id = k.value("unwanted.id").strip("'")
    assert talk.value == [["declined", f"plan {plan_id} not applied (declined at the prompt); none of its calls ran"], "declined"]
    assert converse(k, "await unwanted.apply()", ["y"]).reply["evalue"].endswith("cannot be applied: it was declined; a plan runs once (make a new one)")
    assert ran(k) == before


def test_a_plan_is_a_value_kept_across_steps_and_saved_as_an_artifact(k: KernelProcess) -> None:
    k.run("globalThis.kept = await api.plan(async () => { await mcp.ledger.put({ key: 'kept' }); await mcp.ledger.erase({ key: 'kept' }) })")
    saved = k.json("const h = await api.saveArtifact('plan.json', kept); await api.readArtifact(h)")
    assert saved == {
        "plan": saved["plan"],
        "state": "ready",
        "size": 2,
        "summary": [{"tool": "ledger.put", "count": 1, "first": {"key": "kept"}}, {"tool": "ledger.erase", "count": 1, "first": {"key": "kept"}}],
        "calls": [{"server": "ledger", "tool": "put", "args": {"key": "kept"}}, {"server": "ledger", "tool": "erase", "args": {"key": "kept"}}],
    }
    shown = k.run("kept").text  # the cell's view: id, size and summary, not every call
    assert shown.startswith(f"Plan {{\n  id: '{saved['plan']}',\n  size: 2,\n  summary: [")
    talk = converse(k, "(await kept.apply()).map((r) => r.ok)", ["y"])
    assert talk.value == [True, True]


def test_without_stdin_a_plan_is_refused_with_what_to_do(k: KernelProcess) -> None:
    k.run("globalThis.headless = await api.plan(async () => { await mcp.ledger.put({ key: 'h' }) })")
    refused = k.run("await headless.apply()")
    plan_id = k.value("headless.id").strip("'")
    assert refused.reply["evalue"].startswith(f"plan {plan_id} needs a person's approval and nobody can answer here")
    assert "mcp2repl sessions approve NAME ID" in refused.reply["evalue"]
    assert k.value("headless.state") == "'ready'"  # nothing ran: it may be applied where someone can answer
