"""A 2026-07-28 client is asked mid-step in rounds (MRTR), over stdio and Streamable HTTP.

The SDK's own ``Client`` at 2026-07-28 with an elicitation callback: ``run`` answers
``InputRequiredResult`` while the step stays suspended in its session, and the client's automatic
retry (its answer and the sealed ``requestState``) lets the step go on. A forged or replayed state
is refused clearly; the session and its JS state stay alive throughout.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from serving import MCP2REPL, clean_env, serve_http, text, write_config

pytestmark = pytest.mark.timeout(300)

GATE = 'Run echo.delete, which may change or delete data? (call 1 of it in this step)\n  key: "k1"'
GATE_FOR = ["this call", "all its calls in this step", "all its calls in this session"]


class Person:
    """The client's person: records each form and answers with the next scripted result (none left: decline)."""

    def __init__(self) -> None:
        self.asked: list[Any] = []
        self.answers: list[types.ElicitResult] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        return self.answers.pop(0) if self.answers else types.ElicitResult(action="decline")


@asynccontextmanager
async def modern_client(cwd: Path, transport: str, person: Person, *more: str) -> AsyncIterator[Client]:
    """A 2026-07-28 Client on ``mcp2repl serve MORE`` (stdio, or --http with its token)."""
    if transport == "stdio":
        params = StdioServerParameters(command=MCP2REPL, args=["serve", *more], env=clean_env(), cwd=str(cwd))
        async with Client(params, mode="2026-07-28", elicitation_callback=person) as client:
            yield client
        return
    from mcp.client.streamable_http import streamable_http_client

    proc, url = await asyncio.to_thread(serve_http, cwd, *more)
    try:
        token = (cwd / ".mcp2repl" / "serve-token").read_text().strip()
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300))
        async with Client(streamable_http_client(url, http_client=http), mode="2026-07-28", elicitation_callback=person) as client:
            yield client
    finally:
        proc.terminate()
        await asyncio.to_thread(proc.wait, 30)


def drive(cwd: Path, transport: str, person: Person, work: Callable[[Client], Awaitable[Any]], *more: str) -> Any:
    async def main() -> Any:
        async with modern_client(cwd, transport, person, *more) as client:
            assert client.session.protocol_version == "2026-07-28"
            return await asyncio.wait_for(work(client), 240)  # the whole scenario, on a loaded machine

    return asyncio.run(main())


async def run(client: Client, code: str) -> Any:
    return await client.call_tool("run", {"code": code})


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_approval_gate_asks_a_2026_client_mid_step(tmp_path: Path, transport: str) -> None:
    write_config(tmp_path)
    person = Person()

    async def work(client: Client) -> None:
        await run(client, "globalThis.before = 41; let kept = 'js state'")
        person.answers.append(types.ElicitResult(action="accept", content={"yes": True}))
        ran = await run(client, "const t0 = Date.now(); const r = await mcp.echo.delete_({ key: 'k1' }); [r, before + 1]")
        assert json.loads(text(ran)) == ["deleted k1", 42], text(ran)
        assert len(person.asked) == 1 and person.asked[0].message == GATE
        assert person.asked[0].requested_schema["properties"]["for"]["enum"] == GATE_FOR
        person.answers.append(types.ElicitResult(action="decline"))
        refused = await run(client, "await mcp.echo.delete_({ key: 'k1' })")
        assert refused.is_error and refused.structured_content["error"]["message"] == "not run (declined at the prompt)"
        assert refused.structured_content["error"]["code"] == "declined"
        # a step that asks twice: two rounds, and the suspended step keeps its locals between them
        person.answers += [types.ElicitResult(action="accept", content={"yes": True})] * 2
        twice = await run(client, "const local = 'mine'; const a = await mcp.echo.delete_({ key: 'k1' }); const b = await mcp.echo.delete_({ key: 'k2' }); [a, b, local]")
        assert json.loads(text(twice)) == ["deleted k1", "deleted k2", "mine"], text(twice)
        assert len(person.asked) == 4
        assert json.loads(text(await run(client, "[before, kept]"))) == [41, "js state"]

    drive(tmp_path, transport, person, work)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_upstream_elicitation_reaches_a_2026_client_whole(tmp_path: Path, transport: str) -> None:
    write_config(tmp_path)
    person = Person()
    person.answers.append(types.ElicitResult(action="accept", content={"name": "Ada", "check": True, "email": "ada@example.com"}))

    async def work(client: Client) -> Any:
        return await run(client, "await mcp.everything.trigger_elicitation_request({})")

    result = drive(tmp_path, transport, person, work)
    assert len(person.asked) == 1, "the upstream form must reach the client as one elicitation"
    assert person.asked[0].message.startswith('MCP server "everything" asks: ')
    assert {"name", "check", "email"} <= set(person.asked[0].requested_schema["properties"])
    assert "Ada" in text(result)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_forged_or_replayed_request_state_is_refused_and_the_step_stays_answerable(tmp_path: Path, transport: str) -> None:
    write_config(tmp_path)
    person = Person()

    async def work(client: Client) -> None:
        args = {"code": "globalThis.n = 1; await mcp.echo.delete_({ key: 'k1' })"}
        first = await client.session.call_tool("run", args, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and first.request_state is not None
        assert first.input_requests is not None and first.input_requests["ask"].params.message == GATE
        yes = {"ask": types.ElicitResult(action="accept", content={"yes": True})}
        for forged in ("v1.forged", first.request_state[:-4] + "AAAA"):
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool("run", args, input_responses=yes, request_state=forged, allow_input_required=True)
            assert refused.value.error.message == "Invalid or expired requestState"
        with pytest.raises(MCPError) as other_call:  # the state is bound to its call's arguments
            await client.session.call_tool("run", {"code": "1"}, input_responses=yes, request_state=first.request_state, allow_input_required=True)
        assert other_call.value.error.message == "Invalid or expired requestState"
        done = await client.session.call_tool("run", args, input_responses=yes, request_state=first.request_state, allow_input_required=True)
        assert isinstance(done, types.CallToolResult) and text(done) == '"deleted k1"'
        again = await client.session.call_tool("run", args, input_responses=yes, request_state=first.request_state, allow_input_required=True)
        assert isinstance(again, types.CallToolResult) and again.is_error
        assert text(again).startswith("run: this answer's question is no longer waiting: it was answered already")
        assert text(await run(client, "n + 1")) == "2"

    drive(tmp_path, transport, person, work)


def test_a_client_that_never_answers_leaves_a_usable_session(tmp_path: Path) -> None:
    write_config(tmp_path)
    person = Person()

    async def work(client: Client) -> None:
        args = {"code": "globalThis.m = 5; await mcp.echo.delete_({ key: 'k1' })"}
        first = await client.session.call_tool("run", args, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        await asyncio.sleep(8)  # past the 3 s --answer-wait: the step is interrupted, its question declined
        yes = {"ask": types.ElicitResult(action="accept", content={"yes": True})}
        late = await client.session.call_tool("run", args, input_responses=yes, request_state=first.request_state, allow_input_required=True)
        assert isinstance(late, types.CallToolResult) and "its step waited longer than 3 s and was interrupted" in text(late)
        assert text(await run(client, "m * 2")) == "10"
        assert json.loads(text(await run(client, "(await mcp.echo.echo({ text: 'still here' }))"))) == "still here"

    drive(tmp_path, "stdio", person, work, "--answer-wait", "3")


def test_cancelling_the_retry_interrupts_the_step(tmp_path: Path) -> None:
    write_config(tmp_path)
    person = Person()

    async def work(client: Client) -> None:
        args = {"code": "globalThis.ticks = 0; await mcp.echo.delete_({ key: 'k1' }); globalThis.answered = true;"
                " await mcp.memory.create_entities({ entities: [{ name: 'spinning', entityType: 'step', observations: [] }] }); while (true) { ticks++; await sleep(5); }"}
        first = await client.session.call_tool("run", args, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        yes = {"ask": types.ElicitResult(action="accept", content={"yes": True})}
        retry = asyncio.ensure_future(client.session.call_tool("run", args, input_responses=yes, request_state=first.request_state, allow_input_required=True))
        marker = tmp_path / "memory.jsonl"  # the answered step writes it before it spins
        for _ in range(600):  # at most 60 s
            if "spinning" in (marker.read_text() if marker.exists() else ""):
                break
            await asyncio.sleep(0.1)
        assert not retry.done(), "the step ended before its retry was cancelled"
        retry.cancel()  # the SDK sends notifications/cancelled for the retry
        with pytest.raises(asyncio.CancelledError):
            await retry
        after = await run(client, "const seen = ticks; await sleep(300); ({ answered, ran: seen > 0, stopped: ticks === seen })")
        assert after.structured_content["value"] == {"answered": True, "ran": True, "stopped": True}, text(after)

    drive(tmp_path, "stdio", person, work)


def test_a_plan_is_approved_by_a_2026_client_as_one_question(tmp_path: Path) -> None:
    from test_serve_approvals import PLAN, write_ledger

    write_ledger(tmp_path)
    person = Person()

    async def work(client: Client) -> None:
        plan = json.loads(text(await run(client, PLAN)))
        person.answers.append(types.ElicitResult(action="accept", content={"yes": True}))
        applied = await run(client, "(await plan.apply()).map((r) => r.ok)")
        assert json.loads(text(applied)) == [True] * 5, text(applied)
        assert len(person.asked) == 1
        assert person.asked[0].message == f'Apply plan {plan}: 5 calls, which may change or delete data?\n  ledger.put: 5 calls, the first with\n    key: "k0"'
        await run(client, PLAN)
        refused = await run(client, "let code; try { await plan.apply() } catch (e) { code = e.code }; code")  # no answer left: declined
        assert json.loads(text(refused)) == "declined"
        assert json.loads(text(await run(client, "(await mcp.ledger.entries()).ran"))) == [f"put k{i}" for i in range(5)]

    drive(tmp_path, "stdio", person, work)
