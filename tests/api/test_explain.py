"""The hint added to V8's TypeErrors about tool and server names the catalog does not have (in-process)."""

from __future__ import annotations

import mcp_types

from mcp_kernel.api.explain import explain
from mcp_kernel.engine import JSError
from mcp_kernel.servers.catalog import Catalog


def _catalog() -> Catalog:
    cat = Catalog()
    cat.rebuild([("echo", [mcp_types.Tool(name="echo", input_schema={"type": "object"})])])
    return cat


def _error(message: str, *frames: str) -> JSError:
    return JSError("TypeError", message, [f"TypeError: {message}", *frames])


def test_an_unknown_tool_gets_close_names() -> None:
    err = _error("mcp.echo.ech is not a function", "  at cell[1] line 1, col 7")
    explain(err, "await mcp.echo.ech({})", _catalog())
    hint = 'Unknown MCP tool mcp.echo.ech on server "echo". Did you mean echo? Use api.searchTools(query) or api.listTools() to find tools.'
    assert err.message == f"mcp.echo.ech is not a function. {hint}"
    assert err.traceback[0] == f"TypeError: {err.message}"


def test_an_unknown_server_is_found_in_the_source_with_the_config_problem() -> None:
    code = "const a = 1\nconst r = await mcp['time'].now({})"
    err = _error("Cannot read properties of undefined (reading 'now')", "  at cell[1] line 2, col 29")
    explain(err, code, _catalog(), ["mcp.json: invalid JSON at line 3"])
    assert err.message == (
        "Cannot read properties of undefined (reading 'now'). Unknown MCP server mcp.time. Servers: mcp.echo."
        " The MCP server config has a problem: mcp.json: invalid JSON at line 3."
    )


def test_other_type_errors_are_left_alone() -> None:
    for message, code in [
        ("f is not a function", "f()"),
        ("Cannot read properties of undefined (reading 'x')", "obj.y.x"),
        ("mcp.echo.echo is not a function", "mcp.echo.echo()"),  # it exists (became ready meanwhile)
    ]:
        err = _error(message, "  at cell[1] line 1, col 1")
        explain(err, code, _catalog())
        assert err.message == message
