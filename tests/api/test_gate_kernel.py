"""The approval gate and the transfer budget, as a notebook user meets them (a real kernel, stdin included)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ECHO, KernelProcess, SessionHarness


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    cwd = tmp_path_factory.mktemp("gate")
    config = {
        "confirm_destructive": True,
        "mcpServers": {
            "echo": {"command": sys.executable, "args": [ECHO]},
            "trusted": {"command": sys.executable, "args": [ECHO], "allow_destructive": ["delete"]},
        },
    }
    (cwd / "mcp.json").write_text(json.dumps(config))
    kernel = KernelProcess(cwd)
    kernel.wait_for_servers()
    yield kernel
    kernel.close()


def run_answering(k: KernelProcess, code: str, answer: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """Execute with stdin allowed, answering each input request with ``answer``."""
    msg_id = k.kc.execute(code, allow_stdin=True)
    prompts: list[str] = []
    while True:
        request = k.kc.get_stdin_msg(timeout=30)
        if request["msg_type"] == "input_request":
            prompts.append(request["content"]["prompt"])
            k.kc.input(answer)
            break
    reply = k.reply(msg_id)
    outputs: list[dict[str, Any]] = []
    while True:
        msg = k.kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") == msg_id:
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            if msg["msg_type"] in ("execute_result", "error"):
                outputs.append({"type": msg["msg_type"], **msg["content"]})
    return reply, outputs, prompts


def test_destructive_tools_ask_first(k: KernelProcess) -> None:
    reply, outputs, prompts = run_answering(k, "await mcp.echo.delete_({ key: 'k1' })", "y")
    assert prompts == ['Run echo.delete({"key": "k1"}), which may change or delete data? [y/N] ']
    assert outputs[-1]["data"]["text/plain"] == "'deleted k1'"
    reply, outputs, _ = run_answering(k, "await mcp.echo.delete_({ key: 'k2' })", "no")
    assert (reply["ename"], reply["evalue"]) == ("ToolError", "not run (declined at the prompt)")


def test_without_stdin_the_gate_refuses_unless_the_tool_is_allowed(k: KernelProcess) -> None:
    cell = k.run("await mcp.echo.delete_({ key: 'k3' })")  # execute() without allow_stdin, like papermill
    assert cell.error["ename"] == "ToolError"
    assert cell.error["evalue"].startswith("echo.delete may change or delete data, and this session asks before running such tools")
    assert k.value("await mcp.trusted.delete_({ key: 'k4' })") == "'deleted k4'"
    assert k.value("(await mcp.echo.add({ a: 1, b: 1 })).sum") == "2"  # tools not marked destructive never ask


def test_the_transfer_budget_stops_a_cell_that_pulls_in_too_much(tmp_path: Path) -> None:
    s = SessionHarness(tmp_path, {"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}}, transfer_budget_mb=1)
    try:
        result, _ = s.run("const a = await mcp.echo.big({ kb: 600 }); const b = await mcp.echo.big({ kb: 600 })")
        assert result.error.name == "ToolError"
        # a 600 KB JSON text counts as what it is, not as its escaped copy inside a JSON reply
        assert result.error.traceback[0].startswith("ToolError: echo.big: this result (0.6 MiB) takes the cell's tool results to 1.2 MiB, past the transfer budget of 1 MiB")
        assert s.value("JSON.stringify(await mcp.echo.big({ kb: 600 })).length > 500000") == "true"  # a new cell has a new budget
        assert s.value("let c; try { await mcp.echo.big({kb: 900}); await mcp.echo.big({kb: 900}) } catch (e) { c = e.code }; c") == "'intermediate_result_too_large'"
    finally:
        s.close()
