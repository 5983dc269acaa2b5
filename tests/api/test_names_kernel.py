"""One naming rule through a real kernel: every form takes real and JS names; unknown names are undefined."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from conftest import ECHO, EVERYTHING, SERVERS, KernelProcess
from kernels import configured

SUM = "'The sum of 2 and 3 is 5.'"
NAMED = str(SERVERS / "named_server.py")


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    if not EVERYTHING.exists():
        pytest.skip("server-everything is not installed (run scripts/bootstrap.sh --test)")
    cwd = tmp_path_factory.mktemp("names")
    # no roots: server-everything asks for them 350 ms after it starts and logs the answer, a line
    # that lands on whichever cell runs then (on a busy machine, one of these)
    servers = {
        "everything": {"command": str(EVERYTHING), "roots": False},
        "echo": {"command": sys.executable, "args": [ECHO]},
        "named": {"command": sys.executable, "args": [NAMED, "wipe-all", "wipe_all"]},  # one JS name wanted by two tools
    }
    with configured(cwd, {"mcpServers": servers}, "mcp2repl.json", MCP2REPL_PROGRESS="off") as kernel:
        yield kernel


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


def test_tools_whose_js_names_collide_each_get_their_own(k: KernelProcess) -> None:
    """Regression: ``wipe-all`` beside ``wipe_all`` had no JS name (``mcp.named.wipe_all`` was the other tool)
    and ``wipe_all_2``, a suffix that depended on the order, ran ``wipe_all`` too."""
    calls = ['mcp.named["wipe-all"]()', "mcp.named.wipe_all()", "mcp.named.wipe_all_8c29()", "tools.wipe_all()", "tools.wipe_all_8c29()"]
    assert k.json(f"[{', '.join(f'await {c}' for c in calls)}]") == ["wipe-all ran", "wipe_all ran", "wipe-all ran", "wipe_all ran", "wipe-all ran"]
    assert k.value("typeof mcp.named.wipe_all_2") == "'undefined'"
    # what completion offers and what api.describeTool says are the same names
    assert k.complete("mcp.named.wipe")["matches"] == ["wipe_all", "wipe_all_8c29"]
    described = k.json("[await api.describeTool('named', 'wipe_all_8c29'), await api.describeTool('named', 'wipe-all')].map((d) => [d.name, d.call, d.safe])")
    assert described == [["wipe-all", "mcp.named.wipe_all_8c29", "wipe_all_8c29"]] * 2
    assert k.value("(await api.describeTool('named', 'wipe_all')).call") == "'mcp.named.wipe_all'"
