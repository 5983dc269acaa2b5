"""``mcp2repl serve --session NAME``: an MCP client drives the named session a person can attach to.

Its steps run in the session's kernel (``.mcp2repl/sessions/NAME.json``), so ``mcp2repl --session
NAME`` and the step API see what the client did, and the other way round; the kernel outlives the
server.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving import MCP2REPL, ServeClient, clean_env, text, write_config


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeClient]:
    cwd = tmp_path_factory.mktemp("serve-named")
    write_config(cwd)
    client = ServeClient(cwd, "--session", "agent")
    yield client
    client.close()
    subprocess.run([MCP2REPL, "--stop", "agent"], cwd=cwd, env=clean_env(), capture_output=True, timeout=60)


def shell(cwd: Path, code: str) -> dict:
    done = subprocess.run([MCP2REPL, "--session", "agent", "--json", "-e", code], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=180)
    return json.loads(done.stdout)


def test_steps_run_in_the_named_kernel_both_ways(named: ServeClient) -> None:
    assert text(named.run("globalThis.fromClient = 'mcp'; 1", timeout=240)) == "1"
    assert (named.cwd / ".mcp2repl" / "sessions" / "kernels" / "agent.json").exists()
    assert shell(named.cwd, "fromClient")["value"] == "mcp"
    shell(named.cwd, "globalThis.fromShell = 'cli'")
    assert text(named.run("fromShell")) == '"cli"'
    record = json.loads((named.cwd / ".mcp2repl" / "sessions" / "agent.ipynb").read_text())  # the session's notebook names who stepped
    assert [(c["source"], c["metadata"]["mcp2repl"]["client"]) for c in record["cells"]] == [
        ("globalThis.fromClient = 'mcp'; 1", "serve"),
        ("fromClient", "cli"),
        ("globalThis.fromShell = 'cli'", "cli"),
        ("fromShell", "serve"),
    ]


def test_data_search_and_servers_go_through_the_kernel(named: ServeClient) -> None:
    assert named.run("data.n * 2", data={"n": 21}).structured_content["value"] == 42
    assert text(named.run("typeof data")) == '"undefined"'
    found = named.tool("search_tools", {"query": "books", "limit": 2})
    assert found.structured_content["items"][0]["server"] == "demo", text(found)
    rows = named.tool("list_servers", {}).structured_content["servers"]
    assert {r["name"] for r in rows} >= {"demo", "memory"}


def test_a_cancel_interrupts_the_kernels_step(named: ServeClient) -> None:
    pending = named.start_marked("named-spin", "globalThis.spins = 0; while (true) { spins++; if (spins === 1) MARK; await sleep(5); }", within=120)
    pending.cancel()
    after = named.run("const seen = spins; await sleep(300); seen > 0 && spins === seen", timeout=120)
    assert text(after) == "true"
    timed = named.run("while (true) {}", timeout_s=1)
    assert timed.structured_content["error"]["name"] == "TimeoutError"
    assert "state is kept" in timed.structured_content["error"]["message"]


def test_progress_comes_from_the_kernels_call_display(named: ServeClient) -> None:
    seen: list[str] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    result = named.tool("run", {"code": "await mcp.demo.slow_inventory_check({ seconds: 3, steps: 6 }); 'ok'"}, progress=progress)
    assert result.structured_content["value"] == "ok"
    assert any("demo.slow_inventory_check" in m for m in seen), seen
