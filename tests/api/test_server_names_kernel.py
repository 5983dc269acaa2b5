"""A server whose name is no identifier (``chrome-devtools``): its real and its JS name work in every position."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from conftest import ECHO, KernelProcess
from kernels import configured


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    servers = {"my-echo": {"command": sys.executable, "args": [ECHO]}}
    with configured(tmp_path_factory.mktemp("server-names"), {"mcpServers": servers}, "mcp2repl.json", MCP2REPL_PROGRESS="off") as kernel:
        yield kernel


@pytest.mark.parametrize(
    "call",
    [
        'mcp["my-echo"].add(args)',
        "mcp.my_echo.add(args)",
        'mcp["my_echo"].add(args)',
        'mcp.call("my-echo.add", args)',
        'mcp.call("my_echo.add", args)',
        'mcp.tools["my-echo.add"](args)',
        'api.callTool("my-echo", "add", args)',
        'api.callTool("my_echo", "add", args)',
    ],
)
def test_every_form_takes_the_servers_real_and_js_name(k: KernelProcess, call: str) -> None:
    """Regression (issue 23, 16): ``mcp["chrome-devtools"]`` was undefined though the README promised both names."""
    assert k.json(f"const args = {{a: 2, b: 3}};\nawait {call}") == {"sum": 5}


def test_the_real_name_is_the_same_namespace_and_stays_unlisted(k: KernelProcess) -> None:
    checks = ['mcp["my-echo"] === mcp.my_echo', '"my-echo" in mcp', 'Object.keys(mcp).includes("my-echo")', 'typeof mcp["my-echo"].nope']
    assert k.json(f"[{', '.join(checks)}]") == [True, True, False, "undefined"]
    described = ['api.describeTool("my-echo", "add")', 'api.describeTool("my_echo", "add")', 'api.describeTool("my-echo.add")']
    assert k.json(f"[{', '.join(f'(await {d}).call' for d in described)}]") == ["mcp.my_echo.add"] * 3


def test_completion_and_inspection_take_the_real_name(k: KernelProcess) -> None:
    assert k.complete('mcp["my-')["matches"] == ["my-echo"]
    assert k.complete('mcp["my-echo"].ad')["matches"] == ["add"]
    assert k.complete("await mcp['my-echo'].add({ ")["matches"] == ["a", "b"]
    assert k.complete("mcp.my_")["matches"] == ["my_echo"]
    doc = k.inspect('mcp["my-echo"].add')
    assert doc["found"] and doc["data"]["text/plain"].startswith('mcp.my_echo.add — tool "add" on server "my-echo"')


def test_an_unknown_tool_under_the_real_name_gets_the_hint(k: KernelProcess) -> None:
    error = k.run('await mcp["my-echo"].ad({a: 1, b: 2})').error
    assert (error["ename"], error["evalue"]) == (
        "TypeError",
        'mcp.my-echo.ad is not a function. Unknown MCP tool mcp.my-echo.ad on server "my-echo". Did you mean add? '
        "Use api.searchTools(query) or api.listTools() to find tools.",
    )
