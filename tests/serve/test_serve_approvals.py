"""A plan's approval reaches the person behind an MCP client through ``mcp2repl serve``: one elicitation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mcp_types as types
from conftest import SERVERS
from serving import ServeClient, text

LEDGER = str(SERVERS / "ledger_server.py")
PLAN = "globalThis.plan = await api.plan(async () => { for (let i = 0; i < 5; i++) await mcp.ledger.put({ key: 'k' + i }) }); plan.id"


def write_ledger(cwd: Path) -> None:
    (cwd / "mcp.json").write_text(json.dumps({"mcpServers": {"ledger": {"command": sys.executable, "args": [LEDGER], "confirm_destructive": True}}}))


def test_a_plan_is_approved_by_the_client_as_one_question(tmp_path: Path) -> None:
    write_ledger(tmp_path)
    client = ServeClient(tmp_path)
    try:
        plan = json.loads(text(client.run(PLAN)))
        client.answers.append(types.ElicitResult(action="accept", content={"yes": True}))
        applied = client.run("(await plan.apply()).map((r) => r.ok)")
        assert json.loads(text(applied)) == [True] * 5, text(applied)
        assert len(client.asked) == 1, "the whole plan must reach the client as one elicitation"
        asked = client.asked[0]
        assert asked.message == f'Apply plan {plan}: 5 calls, which may change or delete data?\n  ledger.put: 5 calls, the first with\n    key: "k0"'
        assert asked.requested_schema["properties"] == {"yes": {"type": "boolean", "title": "Yes", "default": False}}
        assert json.loads(text(client.run("(await mcp.ledger.entries()).ran"))) == [f"put k{i}" for i in range(5)]
        client.run(PLAN)
        client.answers.append(types.ElicitResult(action="decline"))
        refused = client.run("let code; try { await plan.apply() } catch (e) { code = e.code }; code")
        assert json.loads(text(refused)) == "declined"
        assert len(json.loads(text(client.run("(await mcp.ledger.entries()).ran")))) == 5  # nothing more ran
    finally:
        client.close()


def test_without_elicitation_an_in_process_plan_is_refused_with_what_to_do(tmp_path: Path) -> None:
    write_ledger(tmp_path)
    client = ServeClient(tmp_path, elicitation=False)
    try:
        client.run(PLAN)
        refused = client.run("await plan.apply()")
        assert refused.is_error and "needs a person's approval and nobody can answer here" in refused.structured_content["error"]["message"]
        assert client.asked == []
    finally:
        client.close()
