"""Approvals from a shell: the one-shot command's terminal (pexpect), and a named session's plans
approved or rejected out of band by the person, from another process, while the agent's step waits.

The other rules (an artifact folder inside the sessions folder, timeouts, the plan commands' errors,
the skill's example, Ctrl-C) are in test_approvals_rules_cli.py: two files, so the two test
workers share them.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from agent_cli import MCP2REPL, PY, SERVERS, Run, clean_env, cli, start, stop_all

LEDGER = str(SERVERS / "ledger_server.py")
CHOICES = "y: yes, n: no, a: all its calls in this step, s: all its calls in this session [y/N/a/s] "
CATCH = "let f; try { await plan.apply() } catch (e) { f = { code: e.code, message: e.message } }; f"
PLAN3 = "globalThis.plan = await api.plan(async () => { for (let i = 0; i < 3; i++) await mcp.ledger.put({ key: 'p' + i }) }); plan.id"


@pytest.fixture
def proj(tmp_path: Path) -> Iterator[Path]:
    config = {"confirm_destructive": True, "mcpServers": {"ledger": {"command": PY, "args": [LEDGER]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    yield tmp_path
    stop_all(tmp_path)


def pending(proj: Path, name: str, timeout: float = 90) -> list[dict[str, Any]]:
    """The session's pending plans, once there is one (polled: the apply runs in another process)."""
    deadline = time.monotonic() + timeout
    while True:
        listed = cli("sessions", "plans", name, "--json", cwd=proj)
        assert listed.code == 0, listed.err
        found = json.loads(listed.out)
        if found or time.monotonic() > deadline:
            assert found, f"no plan of session {name!r} was waiting for approval within {timeout} s"
            return found
        time.sleep(0.2)


def finish(proc: subprocess.Popen[str], timeout: float = 90) -> Run:
    out, err = proc.communicate(timeout=timeout)
    return Run(proc.returncode, out, err)


def test_the_one_shot_command_asks_at_its_terminal_once_for_all_calls_of_the_step(proj: Path) -> None:
    code = "for (let i = 0; i < 10; i++) await mcp.ledger.put({ key: 'k' + i }); (await mcp.ledger.entries()).ran.length"
    child = pexpect.spawn(MCP2REPL, ["-e", code], cwd=str(proj), env=clean_env(), timeout=90, encoding="utf-8")
    try:
        child.expect_exact("[y/N/a/s] ")
        assert child.before.replace("\r\n", "\n") == 'Run ledger.put, which may change or delete data? (call 1 of it in this step)\n  key: "k0"\n' + CHOICES[:-10]
        child.sendline("a")
        child.expect(pexpect.EOF)
        assert child.before.replace("\r\n", "\n") == "a\n10\n"  # asked once, then the ten ran
    finally:
        child.close()
    plan = "const p = await api.plan(async () => { await mcp.ledger.put({ key: 'x' }) }); (await p.apply()).map((r) => r.ok)"
    child = pexpect.spawn(MCP2REPL, ["-e", plan], cwd=str(proj), env=clean_env(), timeout=90, encoding="utf-8")
    try:
        child.expect_exact("[y/N] ")
        assert child.before.replace("\r\n", "\n").endswith(': 1 call, which may change or delete data?\n  ledger.put: 1 call with\n    key: "x"\n')
        child.sendline("n")
        child.expect(pexpect.EOF)
        assert "none of its calls ran" in child.before
    finally:
        child.close()
    assert child.exitstatus == 1


def test_a_plan_waits_for_the_person_and_runs_once_approved(proj: Path) -> None:
    made = cli("--session", "agent", "-e", PLAN3, cwd=proj)
    assert made.code == 0, made.err
    plan = made.out.strip().strip("'")
    applying = start("--session", "agent", "--json", "-e", "(await plan.apply()).map((r) => r.ok)", cwd=proj)
    try:
        [record] = pending(proj, "agent")
        assert (record["id"], record["calls"], record["session"]) == (plan, 3, "agent")
        assert record["summary"] == ["  ledger.put: 3 calls, the first with", '    key: "p0"']
        listed = cli("sessions", "plans", "agent", cwd=proj)
        assert listed.out.splitlines()[1:] == [
            "  ledger.put: 3 calls, the first with",
            '    key: "p0"',
            f"  approve: mcp2repl sessions approve agent {plan}    reject: mcp2repl sessions reject agent {plan}",
        ]
        mode = os.stat(proj / ".mcp2repl" / "sessions" / "plans" / "agent" / f"{plan}.json").st_mode & 0o777
        assert mode == 0o600
        approved = cli("sessions", "approve", "agent", plan, cwd=proj)
        assert (approved.code, approved.out) == (0, f"plan {plan} of session 'agent': approved\n")
        result = finish(applying)
    finally:
        applying.kill()
    assert result.code == 0, result.err
    assert result.envelope["value"] == [True, True, True]
    assert "mcp2repl sessions approve agent " + plan in result.envelope["stderr"]  # the agent was told what the person runs
    assert cli("--session", "agent", "-e", "(await mcp.ledger.entries()).ran", cwd=proj).out.strip() == "[ 'put p0', 'put p1', 'put p2' ]"
    assert json.loads(cli("sessions", "plans", "agent", "--json", cwd=proj).out) == []  # decided: no longer pending


def test_a_rejected_plan_fails_with_declined_and_runs_nothing(proj: Path) -> None:
    plan = cli("--session", "agent", "-e", PLAN3, cwd=proj).out.strip().strip("'")
    applying = start("--session", "agent", "--json", "-e", CATCH, cwd=proj)
    try:
        pending(proj, "agent")
        assert cli("sessions", "reject", "agent", plan, cwd=proj).out == f"plan {plan} of session 'agent': rejected\n"
        result = finish(applying)
    finally:
        applying.kill()
    assert result.envelope["value"] == {"code": "declined", "message": f"plan {plan} not applied (rejected out of band); none of its calls ran"}
    assert cli("--session", "agent", "-e", "(await mcp.ledger.entries()).ran.length", cwd=proj).out == "0\n"


def test_the_agent_cannot_approve_its_own_plan(proj: Path) -> None:
    """The decision is a file a cell cannot write: artifacts cannot leave their folder, and a
    decision planted as a link or owned by someone else is no decision; the apply waits on."""
    plan = cli("--session", "agent", "-e", PLAN3, cwd=proj).out.strip().strip("'")
    applying = start("--session", "agent", "--json", "-e", CATCH, cwd=proj)
    try:
        pending(proj, "agent")
        folder = proj / ".mcp2repl" / "sessions" / "plans" / "agent"
        (proj / "approved.txt").write_text("approved")
        (folder / f"{plan}.decision").symlink_to(proj / "approved.txt")
        time.sleep(1.5)  # several polls of the waiting kernel (0.25 s each): none may take the link
        assert [r["id"] for r in pending(proj, "agent")] == [plan]
        (folder / f"{plan}.decision").unlink()
        foreign = folder / f"{plan}.decision"
        foreign.write_text("approved")
        os.chmod(foreign, 0o600)
        os.chown(foreign, 12345, 12345)  # another user's file (the tests run as root, who may give it away)
        time.sleep(1.5)
        assert [r["id"] for r in pending(proj, "agent")] == [plan]
        foreign.unlink()
        other = cli("--session", "other", "-e", f"await api.saveArtifact('../sessions/plans/agent/{plan}.decision', 'approved')", cwd=proj)
        assert other.code == 1 and not foreign.exists(), other.out + other.err
        assert cli("sessions", "reject", "agent", plan, cwd=proj).code == 0
        result = finish(applying)
    finally:
        applying.kill()
    assert result.envelope["value"]["code"] == "declined"
    assert cli("--session", "agent", "-e", "(await mcp.ledger.entries()).ran.length", cwd=proj).out == "0\n"
