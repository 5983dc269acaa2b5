"""Config problems are visible from cells, not only in the banner (JupyterLab, papermill and nbclient never show it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import KernelProcess


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ("trailing comma", ".mcp.json: invalid JSON at line 3, column 60: Expecting property name enclosed in double quotes"),
        ("missing file", "nowhere.json: config file not found ({cwd}/nowhere.json)"),
        ("unknown server", 'mcp2repl.json: there is no server named "nope"; servers: time'),
    ],
)
def test_config_problems_reach_the_first_cell_api_servers_and_calls(tmp_path: Path, case: str, problem: str) -> None:
    """Regression: api.servers() returned [] and calls said only "No MCP servers are connected"."""
    env: dict[str, str] = {"MCP2REPL_PROGRESS": "off"}
    if case == "trailing comma":
        (tmp_path / ".mcp.json").write_text('{\n  "mcpServers": {\n    "time": {"command": "uvx", "args": ["mcp-server-time"],}\n  }\n}\n')
    elif case == "missing file":
        env["MCP2REPL_CONFIG"] = str(tmp_path / "nowhere.json")
    else:
        (tmp_path / "mcp2repl.json").write_text(json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}))
        env["MCP2REPL_SERVER"] = "nope"
    problem = problem.format(cwd=tmp_path)
    kernel = KernelProcess(tmp_path, env)
    try:
        first = kernel.run("1 + 1")
        assert (first.text, first.stderr) == ("2", f"[mcp2repl] MCP server config problem: {problem}\n")
        assert kernel.run("2 + 2").stderr == ""  # said once
        rows = kernel.json("await api.servers()")
        assert [(r["name"], r["state"], r["lastError"]) for r in rows] == [("(config)", "config problem", problem)]
        error = kernel.run("await mcp.time.get_current_time({timezone: 'UTC'})").error
        assert (error["ename"], error["evalue"]) == (
            "TypeError",
            f"Unknown MCP server mcp.time. No MCP servers are connected. The MCP server config has a problem: {problem}.",
        )
        error = kernel.run("await tools.get_current_time({timezone: 'UTC'})").error
        assert error["evalue"].endswith(f"The MCP server config has a problem: {problem}.")
    finally:
        kernel.close()
