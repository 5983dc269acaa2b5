"""No path around the approval gate: every way a cell can name a tool asks, is declined, and is planned.

A whole Session in-process (real V8, the real ledger fixture server over stdio); the person is a
function that records each question and answers "n".
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import SERVERS, SessionHarness

LEDGER = str(SERVERS / "ledger_server.py")


class Person:
    """Answers every question with the next of ``answers`` (then "n"), keeping the questions."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.answers: list[str] = []

    async def __call__(self, prompt: str) -> str:
        self.asked.append(prompt)
        return self.answers.pop(0) if self.answers else "n"


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    cwd = tmp_path_factory.mktemp("forms")
    harness = SessionHarness(cwd, {"mcpServers": {"ledger": {"command": sys.executable, "args": [LEDGER], "confirm_destructive": True}}})
    yield harness
    harness.close()


def run(s: SessionHarness, code: str, person: Person | None = None) -> Any:
    return s.call(s.session.execute(code, None, progress="off", ask=person), 60)


def ran(s: SessionHarness) -> list[str]:
    return s.json("(await mcp.ledger.entries()).ran")


FORMS = {
    "mcp.server.tool": "await mcp.ledger.put({ key: 'K' })",
    "mcp.call": "await mcp.call('ledger.put', { key: 'K' })",
    "api.callTool": "await api.callTool('ledger', 'put', { key: 'K' })",
    "tools.name": "await tools.put({ key: 'K' })",
    "tools.call": "const r = await tools.call('ledger.put', { key: 'K' }); if (!r.ok) throw Object.assign(new Error(r.error.message), r.error); r",
    "mcp.tools[name]": "await mcp.tools['ledger.put']({ key: 'K' })",
    "the bridge itself": "await __mcp2repl.call('mcp.call', { target: { server: 'ledger', tool: 'put' }, args: { key: 'K' } })",
}


@pytest.mark.parametrize("form", FORMS)
def test_every_naming_form_asks_and_a_no_runs_nothing(s: SessionHarness, form: str) -> None:
    person = Person()
    before = ran(s)
    result = run(s, FORMS[form].replace("'K'", f"'{form}'"), person)
    assert result.error is not None and result.error.message == "not run (declined at the prompt)", result.error
    assert len(person.asked) == 1 and person.asked[0].startswith("Run ledger.put, which may change or delete data? (call 1 of it in this step)\n")
    assert ran(s) == before


@pytest.mark.parametrize("form", FORMS)
def test_every_naming_form_is_recorded_by_a_plan(s: SessionHarness, form: str) -> None:
    before = ran(s)
    code = f"const plan = await api.plan(async () => {{ {FORMS[form]} }}); plan.calls"
    assert s.json(code.replace("'K'", "'planned'")) == [{"server": "ledger", "tool": "put", "args": {"key": "planned"}}]
    assert ran(s) == before


def test_mcp_request_cannot_call_a_tool(s: SessionHarness) -> None:
    before = ran(s)
    result = run(s, "await __mcp2repl.call('mcp.request', { server: 'ledger', method: 'call_tool', args: ['put', { key: 'r' }] })", Person())
    assert (result.error.name, result.error.message) == ("TypeError", "unknown request call_tool")
    assert ran(s) == before


def test_a_planned_call_answers_a_placeholder_and_reads_run(s: SessionHarness) -> None:
    out = s.json(
        "const seen = []; const p = await api.plan(async () => { seen.push(await mcp.ledger.put({ key: 'a' }));"
        " seen.push(await mcp.ledger.get({ key: 'a' })); seen.push((await tools.call('ledger.erase', { key: 'a' })).data) });"
        " ({ seen, summary: p.summary, size: p.size })"
    )
    assert out == {
        "seen": [
            {"planned": True, "server": "ledger", "tool": "put", "index": 0},
            {"key": "a", "value": None},  # read-only: it ran
            {"planned": True, "server": "ledger", "tool": "erase", "index": 1},
        ],
        "summary": [{"tool": "ledger.put", "count": 1, "first": {"key": "a"}}, {"tool": "ledger.erase", "count": 1, "first": {"key": "a"}}],
        "size": 2,
    }


def test_describe_says_whether_a_call_asks_and_why(s: SessionHarness) -> None:
    assert s.value("(await api.describeTool('ledger.put')).approval") == (
        "\"asks before every call: it may change or delete data (not marked read-only, so destructive by MCP's default) and this server's confirmation is on\""
    )
    assert s.value("(await tools.describe({ path: 'ledger.get' })).approval") == "'runs without asking: read-only (readOnlyHint)'"
    assert s.value("(await tools.describe({ path: 'ledger.append' })).approval") == "'runs without asking: it may write but not destroy (destructiveHint: false)'"


def test_a_cell_cannot_alter_a_plan(s: SessionHarness) -> None:
    person = Person()
    person.answers = ["y"]
    before = ran(s)
    code = (
        "const p = await api.plan(async () => { await mcp.ledger.put({ key: 'original' }) });"
        " try { p.calls[0].args.key = 'changed' } catch (e) {}; try { p.calls.push({ server: 'ledger', tool: 'erase', args: {} }) } catch (e) {}"
        " const forged = Object.create(Object.getPrototypeOf(p)); let refused; try { await forged.apply() } catch (e) { refused = e.message }"
        " [refused, p.calls[0].args.key, (await p.apply()).length]"
    )
    result = s.call(s.session.execute(code, None, progress="off", ask=person), 60)
    assert result.data["application/json"] == ["plan.apply(): call it on a plan that api.plan returned", "original", 1]
    assert ran(s) == [*before, "put original"]


def test_api_print_shows_a_plan_compactly(s: SessionHarness) -> None:
    result, out = s.run("const p = await api.plan(async () => { for (let i = 0; i < 10; i++) await mcp.ledger.put({ key: 'k' + i, value: i }) }); await api.print(p); p.id")
    plan = result.data["text/plain"].strip("'")
    assert out.displays[0][0]["text/plain"] == (
        f"{{\n  plan: '{plan}',\n  state: 'ready',\n  size: 10,\n  summary: [ {{ tool: 'ledger.put', count: 10, first: {{ key: 'k0', value: 0 }} }} ]\n}}"
    )


def test_a_plan_whose_function_throws_is_dropped_and_recording_ends(s: SessionHarness) -> None:
    person = Person()
    before = ran(s)
    result = run(s, "await api.plan(async () => { await mcp.ledger.put({ key: 't' }); throw new RangeError('boom') })", person)
    assert (result.error.name, result.error.message) == ("RangeError", "boom")
    after = run(s, "await mcp.ledger.put({ key: 'after' })", person)  # not recorded: asked for, and declined
    assert after.error.message == "not run (declined at the prompt)" and len(person.asked) == 1
    nested = run(s, "await api.plan(async () => { await api.plan(async () => {}) })", person)
    assert (nested.error.name, nested.error.message) == ("TypeError", "api.plan: a plan is already being recorded in this step (plans do not nest)")
    assert ran(s) == before
