"""Stdio servers started before the MCP layer loads: adopted by their connection, or stopped.

The point is start-up time (the server's own start overlaps the SDK's import), so the session test
checks the order in a fresh interpreter: the server was spawned while ``mcp`` was not yet imported,
and the connection used that very process instead of starting a second one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest
from conftest import ECHO, ROOT

from mcp_kernel.servers.spawn import INHERITED, EarlyStarts, Launch, log_file, server_environment
from mcp_kernel.servers.spec import ServerSpec

pytestmark = pytest.mark.timeout(120)

SPEC = ServerSpec(name="echo", transport="stdio", command=sys.executable, args=[ECHO], env={"ECHO_MODE": "x"})


def gone(pid: int, seconds: float = 15) -> bool:
    try:
        psutil.Process(pid).wait(seconds)
    except psutil.NoSuchProcess:
        return True
    except psutil.TimeoutExpired:
        return False
    return True


def test_servers_inherit_what_the_sdk_lets_them_inherit(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, get_default_environment

    monkeypatch.setenv("SHELL", "() { bad; }")  # a shell function: never inherited
    monkeypatch.setenv("MCP2REPL_TEST_SECRET", "s3cret")
    assert INHERITED == tuple(DEFAULT_INHERITED_ENV_VARS)
    assert server_environment({"A": "1"}) == {**get_default_environment(), "A": "1"}
    assert "SHELL" not in server_environment({}) and "MCP2REPL_TEST_SECRET" not in server_environment({})


def test_an_early_process_is_adopted_and_serves_calls(tmp_path: Path) -> None:
    from mcp_kernel.servers.manager import ServerManager

    async def main() -> tuple[int, int | None, object]:
        early = EarlyStarts()
        await early.start([SPEC, dataclasses.replace(SPEC, name="remote", transport="http", command=None, url="http://127.0.0.1:9/mcp")], lambda: tmp_path)
        [(name, pid)] = early.waiting.items()
        manager = ServerManager(log_dir=tmp_path)
        manager.load("test", [SPEC], early)
        conn = manager.connections["echo"]
        await conn.wait_ready()
        result = await conn.call_tool("add", {"a": 2, "b": 3})
        adopted = conn.process.pid if conn.process else None
        await manager.close()
        return pid, adopted, result.structured_content

    pid, adopted, result = asyncio.run(main())
    assert adopted == pid and result == {"sum": 5}
    assert gone(pid)


def test_a_process_started_otherwise_is_stopped_not_adopted(tmp_path: Path) -> None:
    async def main() -> tuple[object, object, int, int]:
        early = EarlyStarts()
        await early.start([SPEC, dataclasses.replace(SPEC, name="other")], lambda: tmp_path)
        pids = early.waiting
        changed = Launch.of(dataclasses.replace(SPEC, args=[ECHO, "--flag"]), log_file(tmp_path, "echo"))
        taken = early.take("echo", changed)
        unknown = early.take("never-started", changed)
        early.discard_rest()  # "other": nobody took it
        await asyncio.wait(asyncio.all_tasks() - {asyncio.current_task()}, timeout=30)  # the stops, in the background
        return taken, unknown, pids["echo"], pids["other"]

    taken, unknown, first, second = asyncio.run(main())
    assert taken is None and unknown is None
    assert gone(first) and gone(second)


SESSION_SCRIPT = """
import asyncio, json, sys
from pathlib import Path
from mcp_kernel.servers import spawn

seen = []
real = spawn.spawn
async def watched(launch):
    seen.append("mcp" in sys.modules)
    return await real(launch)
spawn.spawn = watched

from mcp_kernel.session import Session, SessionOptions
import psutil

async def main():
    cwd = Path(sys.argv[1])
    s = Session(SessionOptions(cwd=cwd, config=None, profile=None, server=None, artifact_dir=cwd / "a"))
    await s.start()
    result = await s.execute("await mcp.echo.add({ a: 20, b: 22 })")
    servers = [p for p in psutil.Process().children(recursive=True) if p.cmdline()[1:] == [sys.argv[2]]]
    await s.close()
    print(json.dumps({"seen": seen, "value": result.data["text/plain"], "servers": len(servers)}))

asyncio.run(main())
"""


def test_a_session_starts_its_stdio_servers_before_it_loads_the_sdk(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}}))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MCP2REPL_STATE_DIR": str(tmp_path / "state")}
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(SESSION_SCRIPT), str(tmp_path), ECHO], capture_output=True, text=True, timeout=90, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    # spawned once, before the SDK was imported, and that process served the call
    assert report == {"seen": [False], "value": "{ sum: 42 }", "servers": 1}
