"""What the fault suites (test_faults.py: during a call; test_faults_start.py: at start-up and
at close) share: hostile servers (tests/fixtures/servers/hostile_server.py) under a real
ServerManager, beside an echo server where a test checks that the other server keeps working."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from conftest import ECHO, SERVERS
from mcp.shared.exceptions import MCPError
from test_stdio import wait_unmarked

from mcp_kernel.servers.connection import ServerConnection, ServerUnavailable
from mcp_kernel.servers.manager import ManagerEvents, ServerManager
from mcp_kernel.servers.spec import ServerSpec, parse_spec

HOSTILE = str(SERVERS / "hostile_server.py")
PY = sys.executable
REQUEST_TIMEOUT = -32001
PROTOCOL_ERROR = -32099
DEFAULT_HINT = 'the default, MCP2REPL_CALL_TIMEOUT; to wait longer pass {timeout: seconds} to the call or set "timeout" for the server in its config'


def hostile(mode: str, *more: str, name: str = "h", **config: Any) -> ServerSpec:
    return parse_spec(name, {"command": PY, "args": [HOSTILE, mode, *more], **config})


class Run:
    """One manager with an echo server and the hostile one; what it told its owner."""

    def __init__(self) -> None:
        self.notices: list[str] = []
        self.logs: list[str] = []
        self.manager = ServerManager(ManagerEvents(notice=self.notices.append, log_message=lambda s, level, text: self.logs.append(text)))

    @property
    def echo(self) -> ServerConnection:
        return self.manager.connections["echo"]

    async def echo_works(self) -> None:
        assert (await self.echo.call_tool("echo", {"text": "still here"})).content[0].text == "still here"


def run(
    spec: ServerSpec | None, body: Callable[[Run, ServerConnection | None], Awaitable[Any]], mark: str | None = None, *, echo: bool = True
) -> Any:
    """Run ``body`` with the hostile server connected next to an echo server; then close and check for leftovers.

    ``echo=False``: no echo server, for a test whose body never calls it (each one is a Python
    process to start, about a second of a loaded machine's CPU, for nothing that test checks).
    """

    async def main() -> Any:
        r = Run()
        r.manager.load("test", [parse_spec("echo", {"command": PY, "args": [ECHO]})] if echo else [])
        try:
            await r.manager.wait_all(60)
            conn = None
            if spec is not None:
                conn = await r.manager.connect(spec)
            return await body(r, conn)
        finally:
            started = time.monotonic()
            await r.manager.close()
            assert time.monotonic() - started < 15

    result = asyncio.run(main())
    if mark is not None:
        assert wait_unmarked(mark, 5.0) == []
    return result


async def error_of(call: Awaitable[Any], within: float = 60) -> BaseException:
    started = time.monotonic()
    try:
        await call
    except (MCPError, ServerUnavailable) as exc:
        assert time.monotonic() - started < within
        return exc
    raise AssertionError("the call succeeded")


async def cancel_during(call: Awaitable[Any]) -> None:
    """What an interrupt does to a call: cancel it; it must end at once."""
    task = asyncio.ensure_future(call)
    await asyncio.sleep(0.5)
    task.cancel()
    started = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 2
