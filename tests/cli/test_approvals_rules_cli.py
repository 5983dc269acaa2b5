"""Approvals from a shell, the rest of the rules: an artifact folder that would let a cell decide, a
wait nobody ends, the plan commands' errors, the skill's example, and Ctrl-C during the wait
(the terminal's question and a plan approved, rejected or self-approved: test_approvals_cli.py).
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_cli import PY, clean_env, cli, start, stop_all
from test_approvals_cli import CATCH, LEDGER, PLAN3, finish, pending


@pytest.fixture
def proj(tmp_path: Path) -> Iterator[Path]:
    config = {"confirm_destructive": True, "mcpServers": {"ledger": {"command": PY, "args": [LEDGER]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    yield tmp_path
    stop_all(tmp_path)


def test_an_artifact_folder_inside_the_sessions_folder_turns_out_of_band_approval_off(proj: Path) -> None:
    env = clean_env(MCP2REPL_ARTIFACT_DIR=str(proj / ".mcp2repl" / "sessions" / "plans"))
    cli("--session", "open", "-e", PLAN3, cwd=proj, env=env)
    refused = cli("--session", "open", "--json", "-e", CATCH, cwd=proj, env=env)
    assert refused.envelope["value"]["code"] == "confirmation_required", refused.out
    uncaught = cli("--session", "open", "--json", "-e", "await mcp.ledger.put({ key: 'q' })", cwd=proj, env=env)
    assert (uncaught.code, uncaught.envelope["error"]["name"], uncaught.envelope["error"]["code"]) == (1, "ToolError", "confirmation_required")
    assert "needs a person's approval and nobody can answer here" in refused.envelope["value"]["message"]


def test_nobody_deciding_times_out_and_the_plan_may_wait_again(proj: Path) -> None:
    env = clean_env(MCP2REPL_APPROVAL_TIMEOUT="2")
    plan = cli("--session", "slow", "-e", PLAN3, cwd=proj, env=env).out.strip().strip("'")
    result = cli("--session", "slow", "--json", "-e", CATCH, cwd=proj, env=env)
    assert result.envelope["value"] == (
        {"code": "approval_timeout", "message": f"plan {plan} was neither approved nor rejected in time; none of its calls ran (apply it again to wait again)"}
    )
    assert json.loads(cli("sessions", "plans", "slow", "--json", cwd=proj).out) == []  # no stale record is left to approve


def test_plan_commands_say_what_is_wrong(proj: Path) -> None:
    assert cli("sessions", "plans", cwd=proj).err.strip().endswith(
        "usage: mcp2repl sessions plans NAME [--json] | mcp2repl sessions approve NAME ID | mcp2repl sessions reject NAME ID"
    )
    assert cli("sessions", "plans", "nobody", cwd=proj).out == "session 'nobody' has no plan waiting for approval\n"
    missing = cli("sessions", "approve", "nobody", "0123abcd", cwd=proj)
    assert (missing.code, missing.err.strip()) == (2, "mcp2repl: error: session 'nobody' has no plan 0123abcd waiting (mcp2repl sessions plans nobody lists them)")
    bad = cli("sessions", "approve", "nobody", "../x", cwd=proj)
    assert "invalid plan id '../x'" in bad.err


def test_the_skill_example_runs_as_written(tmp_path: Path) -> None:
    """skills/mcp2repl/SKILL.md, "Writes that need approval": its two commands, approved from another shell."""
    skill = (Path(__file__).resolve().parents[2] / "skills" / "mcp2repl" / "SKILL.md").read_text()
    section = skill.split("## Writes that need approval")[1].split("```bash\n")[1].split("```")[0]
    commands = [line.removeprefix("mcp2repl -e '").removesuffix("'") for line in section.strip().splitlines()]
    assert len(commands) == 2
    config = {"confirm_destructive": True, "mcpServers": {"store": {"command": PY, "args": [LEDGER]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    env = clean_env(MCP2REPL_SESSION="task")
    try:
        planned = cli("-e", commands[0], cwd=tmp_path, env=env)
        plan = planned.out.split("'")[1]
        assert planned.out == f"{{\n  id: '{plan}',\n  summary: [ {{ tool: 'store.put', count: 3, first: {{ key: 'a', value: 1 }} }} ]\n}}\n", planned.err
        applying = start("-e", commands[1], cwd=tmp_path, env=env)
        try:
            [record] = pending(tmp_path, "task")
            assert record["id"] == plan
            assert cli("sessions", "approve", "task", plan, cwd=tmp_path).code == 0
            result = finish(applying)
        finally:
            applying.kill()
        assert (result.code, result.out) == (0, "[ true, true, true ]\n"), result.err
    finally:
        stop_all(tmp_path)


def test_ctrl_c_ends_the_wait_and_the_plan_may_be_applied_later(proj: Path) -> None:
    plan = cli("--session", "agent", "-e", PLAN3, cwd=proj).out.strip().strip("'")
    applying = start("--session", "agent", "-e", "await plan.apply()", cwd=proj)
    try:
        pending(proj, "agent")
        applying.send_signal(signal.SIGINT)  # the step client interrupts the step, never the session
        result = finish(applying)
    finally:
        applying.kill()
    assert result.code == 3, result.err
    assert "InterruptError" in result.err
    assert json.loads(cli("sessions", "plans", "agent", "--json", cwd=proj).out) == []  # nothing left to approve
    state = cli("--session", "agent", "-e", "[plan.state, (await mcp.ledger.entries()).ran.length]", cwd=proj)
    assert state.out == "[ 'ready', 0 ]\n", state.err
    assert plan
