"""The server manager in-process with real stdio servers: typed calls, catalog events, connect and disconnect."""

from __future__ import annotations

import asyncio
import sys

import pytest
from conftest import ECHO, SERVERS

from mcp_kernel.servers.connection import ServerUnavailable
from mcp_kernel.servers.manager import ManagerEvents, ServerManager
from mcp_kernel.servers.spec import parse_spec


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_call_tool_and_catalog_events() -> None:
    async def main() -> None:
        snapshots: list[dict] = []
        manager = ServerManager(ManagerEvents(catalog_changed=snapshots.append))
        manager.load("test", [parse_spec("echo", {"command": sys.executable, "args": [ECHO]})])
        try:
            entry = await manager.resolve({"name": "add"})  # waits for the server, still starting
            result = await manager.call_tool(entry, {"a": 2, "b": 3})
            assert result.structured_content == {"sum": 5}
            assert [r.state for r in manager.rows()] == ["ready"]
            names = {t["name"] for t in snapshots[-1]["tools"]}
            assert {"add", "echo", "get-weather.v2"} <= names
            assert snapshots[-1]["servers"] == [{"name": "echo", "safe": "echo", "state": "ready"}]
        finally:
            await manager.close()

    run(main())


def test_a_server_is_in_the_catalog_the_moment_it_turns_ready() -> None:
    """Whoever sees "ready" finds its tools: a search right then (settled_entries) waits for nothing else.

    Under load, an agent's first search read "the demo offers no tools": the catalog was rebuilt one
    loop turn after the state turned ready, and a search in between saw neither "starting" nor a tool.
    """

    async def main() -> None:
        manager = ServerManager()
        manager.load("test", [parse_spec("echo", {"command": sys.executable, "args": [ECHO]})])
        try:
            conn = manager.connections["echo"]
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 60  # the echo server's start, generous for a loaded machine
            while conn.state == "starting" and loop.time() < deadline:  # noqa: ASYNC110 - the state itself is what is tested
                await asyncio.sleep(0)  # one loop turn: this task runs right after the one that set the state
            assert conn.state == "ready", conn.last_error
            assert "add" in {e.name for e in manager.catalog.entries}
            assert "add" in {e.name for e in await manager.settled_entries()}
        finally:
            await manager.close()

    run(main())


def test_connect_disconnect_and_an_unavailable_server() -> None:
    async def main() -> None:
        manager = ServerManager()
        manager.load("test", [])
        try:
            conn = await manager.connect(parse_spec("crashy", {"command": sys.executable, "args": [str(SERVERS / "crashing_server.py")]}))
            assert conn.state == "ready" and manager.find_server("crashy") is conn
            await manager.disconnect(conn)
            assert manager.find_server("crashy") is None and manager.catalog.entries == []
            with pytest.raises(ServerUnavailable) as failed:
                await manager.connect(parse_spec("ghost", {"command": "/nonexistent/ghost-server"}))
            assert str(failed.value).endswith("(server stderr: cannot start '/nonexistent/ghost-server': No such file or directory)")
            assert [(r.name, r.state) for r in manager.rows()] == [("ghost", "error")]
        finally:
            await manager.close()

    run(main())


def test_observed_shapes_are_sampled() -> None:
    manager = ServerManager()
    key = ("s", "t")
    wanted = [manager.observed.want(key) for _ in range(50)]
    assert wanted[:3] == [True, True, True] and sum(wanted) == 3 + 2  # the first three, then one in 25
    manager.observed.add(key, "structuredContent", {"id": "x", "n": 1})
    manager.observed.add(key, "structuredContent", {"id": "y"})
    assert manager.observed[key] == "{ id: string; n?: number }"
    assert manager.observed.source(key) == "structuredContent"
