"""``mcp2repl serve`` from other MCP implementations: the Node SDK's client and the MCP Inspector CLI.

The Node SDK (``@modelcontextprotocol/sdk``, what most MCP clients are built on) runs the whole
scenario in tests/fixtures/node/serve_client.mjs over stdio and over Streamable HTTP; the Inspector
CLI (``@modelcontextprotocol/inspector-cli``) lists the tools and calls ``run``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from serving import MCP2REPL, NODE_BIN, clean_env, serve_http, write_config

NODE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "node"
CLIENT = NODE_DIR / "serve_client.mjs"
#: inspector-cli 1.0.3 reads its own package.json relative to the working directory: run it from its build folder
INSPECTOR = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build"

pytestmark = pytest.mark.skipif(shutil.which("node") is None or not (NODE_BIN / "mcp-server-memory").exists(), reason="needs Node and tests/fixtures/node (scripts/bootstrap.sh --test)")


def node_client(cwd: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(["node", str(CLIENT), *args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_scenario(seen: dict[str, Any]) -> None:
    assert seen["tools"] == ["run", "search_tools", "describe_tool", "list_servers"]
    assert 0 < seen["instructions"] < 1200
    assert [s["text"] for s in seen["state"]] == ["20", "42"]
    assert seen["data"]["value"] == "from node"
    assert (seen["error"]["isError"], seen["error"]["error"]) == (True, "RangeError")
    assert seen["error"]["text"].startswith("RangeError: out of range\n  at cell[")
    assert (seen["timeout"]["isError"], seen["timeout"]["error"]) == (True, "TimeoutError")
    assert seen["after"]["text"] == "20"
    assert seen["progress"]["value"] == "done" and seen["progressCount"] > 0 and seen["progressGrows"]
    assert seen["image"]["kinds"] == ["text", "image"]
    assert seen["approved"]["value"] == "deleted from-node"
    assert seen["asked"] == ['Run echo.delete, which may change or delete data? (call 1 of it in this step)\n  key: "from-node"']
    assert "the test cancels" in seen["cancelled"] or "AbortError" in seen["cancelled"], seen["cancelled"]
    assert seen["afterCancel"]["value"] is True
    assert any(p.startswith("memory.") for p in seen["search"])


def test_the_node_sdk_client_over_stdio(tmp_path: Path) -> None:
    write_config(tmp_path)
    check_scenario(node_client(tmp_path, "stdio", MCP2REPL, "serve"))


def test_the_node_sdk_client_over_streamable_http(tmp_path: Path) -> None:
    write_config(tmp_path)
    proc, url = serve_http(tmp_path)
    try:
        token = (tmp_path / ".mcp2repl" / "serve-token").read_text().strip()
        check_scenario(node_client(tmp_path, "http", url, token))
    finally:
        proc.terminate()
        proc.wait(30)


def inspector(cwd: Path, *args: str) -> Any:
    config = cwd / "mcp.json"
    command = ["node", "index.js", MCP2REPL, "serve", "--config", str(config), "--server", "demo", *args]
    done = subprocess.run(command, cwd=INSPECTOR, env=clean_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_inspector_cli_lists_and_calls(tmp_path: Path) -> None:
    write_config(tmp_path)
    listed = inspector(tmp_path, "--method", "tools/list")
    assert [t["name"] for t in listed["tools"]] == ["run", "search_tools", "describe_tool", "list_servers"]
    called = inspector(tmp_path, "--method", "tools/call", "--tool-name", "run", "--tool-arg", "code=(await mcp.demo.search_books({ query: 'dragon' })).results.length > 0")
    assert (called["isError"], called["content"][0]["text"], called["structuredContent"]["value"]) == (False, "true", True)
    failed = inspector(tmp_path, "--method", "tools/call", "--tool-name", "run", "--tool-arg", "code=nope()")
    assert failed["isError"] is True and failed["structuredContent"]["error"]["name"] == "ReferenceError"
