"""One naming rule through a real kernel: every form takes real and JS names; unknown names are undefined."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from conftest import ECHO, EVERYTHING, KernelProcess

SUM = "'The sum of 2 and 3 is 5.'"


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    if not EVERYTHING.exists():
        pytest.skip("server-everything is not installed (run scripts/bootstrap.sh --test)")
    cwd = tmp_path_factory.mktemp("names")
    # no roots: server-everything asks for them 350 ms after it starts and logs the answer, a line
    # that lands on whichever cell runs then (on a busy machine, one of these)
    servers = {"everything": {"command": str(EVERYTHING), "roots": False}, "echo": {"command": sys.executable, "args": [ECHO]}}
    (cwd / "mcp2repl.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    kernel = KernelProcess(cwd, MCP2REPL_PROGRESS="off")
    kernel.run("await api.servers({ wait: true })")
    yield kernel
    kernel.close()


@pytest.mark.parametrize(
    "call",
    [
        "mcp.everything.get_sum(args)",
        'mcp.everything["get-sum"](args)',
        'mcp.call("get_sum", args)',
        'mcp.call("get-sum", args)',
        'mcp.call("everything.get_sum", args)',
        'mcp.call("everything.get-sum", args)',
        'mcp.tools["everything.get_sum"](args)',
        'mcp.tools["everything.get-sum"](args)',
        'api.callTool("everything", "get_sum", args)',
        'api.callTool("everything", "get-sum", args)',
        "tools.get_sum(args)",
        'tools.call("everything.get_sum", args).then((r) => api.unwrap(r.data))',
    ],
)
def test_every_call_form_takes_both_names(k: KernelProcess, call: str) -> None:
    """Regression: server.tool strings, mcp.tools[…] and api.callTool took only the real or only the JS name."""
    assert k.value(f"const args = {{a: 2, b: 3}};\nawait {call}") == SUM


@pytest.mark.parametrize(
    "describe",
    [
        'api.describeTool("get-sum")',
        'api.describeTool("get_sum")',
        'api.describeTool("everything.get_sum")',
        'api.describeTool("everything", "get-sum")',
        'api.describeTool("everything", "get_sum")',
    ],
)
def test_describe_takes_both_names(k: KernelProcess, describe: str) -> None:
    assert k.value(f"(await {describe}).name") == "'get-sum'"


def test_describe_a_tool_by_server_and_js_name(k: KernelProcess) -> None:
    assert k.value('(await api.describeTool("everything", "trigger_long_running_operation")).name') == "'trigger-long-running-operation'"


def test_unknown_names_are_undefined_so_features_can_be_detected(k: KernelProcess) -> None:
    """Regression: `typeof tools.anything` was "function" and `mcp.x.nope?.()` threw."""
    checks = [
        "typeof tools.anything",
        "typeof mcp.everything.nope",
        "String(mcp.everything.delete_file?.({path: 'x'}))",
        "typeof mcp.nosuchserver",
        'typeof mcp.tools["everything.nope"]',
        "typeof tools.get_sum",
        '"get_sum" in tools',
    ]
    assert k.json(f"[{', '.join(checks)}]") == ["undefined", "undefined", "undefined", "undefined", "undefined", "function", True]
    # a call through mcp.call keeps the friendly error
    error = k.run('await mcp.call("get_sumx", {a: 1, b: 2})').error
    assert error["ename"] == "TypeError"
    assert error["evalue"].startswith("Unknown MCP tool get_sumx. Did you mean get_sum, get-sum?")


def test_a_disconnected_server_is_gone_from_mcp(k: KernelProcess) -> None:
    assert k.value("typeof mcp.echo") == "'object'"
    k.run('await api.disconnect("echo")')
    assert k.json("[typeof mcp.echo, Object.keys(mcp).includes('echo')]") == ["undefined", False]
