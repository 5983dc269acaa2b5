"""Elicitation where nobody can answer: ``mcp2repl --json``, an agent's one-shot run, follows each server's config."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli import PY, SERVERS, cli

PROTOCOL = str(SERVERS / "protocol_server.py")


def test_json_runs_answer_elicitation_by_the_config(tmp_path: Path) -> None:
    servers = {"ask": {"command": PY, "args": [PROTOCOL]}, "dflt": {"command": PY, "args": [PROTOCOL], "elicitation": "defaults"}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    run = cli("--json", "-e", "[await mcp.ask.form(), await mcp.dflt.form({defaults: true})]", cwd=tmp_path)
    envelope = run.envelope
    assert (run.code, envelope["ok"]) == (0, True)
    assert envelope["value"] == [{"action": "decline"}, {"action": "accept", "content": {"name": "anonymous", "age": 30, "color": "green"}}]
    assert envelope["stderr"] == (
        '[mcp2repl] MCP server "ask" asked for input ("Who are you?"), but nobody can answer here (no stdin: papermill, '
        'nbclient, --json): declined. To send the defaults of its form instead, set "elicitation": "defaults" for "ask" in the config.\n'
        '[mcp2repl] MCP server "dflt" asked for input ("Who are you?"); nobody can answer here, so its defaults were sent '
        '(elicitation: "defaults"): {"name": "anonymous", "age": 30, "color": "green"}\n'
    )
