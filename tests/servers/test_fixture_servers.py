"""Tests that the fixture servers in tests/fixtures/servers behave exactly as documented.

Kernel tests rely on these servers to produce specific wire-level situations
(paginated listings, crashes, hangs, odd tool names, stderr noise), so each is
started for real and checked with the official MCP client. The echo server is
exercised over all three transports.
"""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    REQUEST_TIMEOUT,
    CallToolResult,
    ImageContent,
    PaginatedRequestParams,
    TextContent,
)

SERVERS = Path(__file__).resolve().parents[1] / "fixtures" / "servers"
TINY_PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR42mP4z8DAAMIM/4EAAB/uBfvxq7p3AAAAAElFTkSuQmCC"
ECHO_TOOLS = ["add", "big", "delete", "echo", "fail", "get-weather.v2", "image", "sleep", "stderr_noise"]

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """The kernel runs the SDK on asyncio; module scope lets a server session be shared."""
    return "asyncio"


# --------------------------------------------------------------------------------------
# Helpers (kept in this file on purpose: no conftest.py in this tree).
# --------------------------------------------------------------------------------------


@asynccontextmanager
async def stdio_session(script: str, errlog: IO[str] | None = None) -> AsyncIterator[ClientSession]:
    """Start ``tests/fixtures/servers/<script>`` over stdio and yield an initialised session."""
    params = StdioServerParameters(command=sys.executable, args=[str(SERVERS / script)])
    transport = stdio_client(params) if errlog is None else stdio_client(params, errlog=errlog)
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_until_listening(proc: anyio.abc.Process, port: int, log: IO[bytes]) -> None:
    """Poll the port until it accepts a connection; fail early (with the log) if the server died."""
    deadline = time.monotonic() + 120  # generous: a Python server took 9 s to listen at load 22
    while True:
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            if proc.returncode is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"server not listening on {port} (exit {proc.returncode}): {log.read().decode()}")
            await anyio.sleep(0.05)
        else:
            await stream.aclose()
            return


async def _stop(proc: anyio.abc.Process) -> None:
    """Terminate, then kill if it does not exit promptly."""
    if proc.returncode is None:
        proc.terminate()
        try:
            with anyio.fail_after(5):
                await proc.wait()
        except TimeoutError:
            proc.kill()
            await proc.wait()


@asynccontextmanager
async def http_session(script: str, transport: str) -> AsyncIterator[ClientSession]:
    """Serve ``script`` over an HTTP transport on a free loopback port and yield a connected session."""
    port = _free_port()
    command = [sys.executable, str(SERVERS / script), "--transport", transport, "--port", str(port)]
    with tempfile.TemporaryFile() as log:
        proc = await anyio.open_process(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            await _wait_until_listening(proc, port, log)
            client: AbstractAsyncContextManager[Any] = (
                streamable_http_client(f"http://127.0.0.1:{port}/mcp")
                if transport == "streamable-http"
                else sse_client(f"http://127.0.0.1:{port}/sse")
            )
            async with client as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                yield session
        finally:
            await _stop(proc)


def session_for(script: str, transport: str) -> AbstractAsyncContextManager[ClientSession]:
    """A session to ``script`` over any of the three transports."""
    return stdio_session(script) if transport == "stdio" else http_session(script, transport)


def text_of(result: CallToolResult) -> str:
    """The single text block of a result."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


# --------------------------------------------------------------------------------------
# echo_server.py
# --------------------------------------------------------------------------------------


async def check_every_echo_tool(session: ClientSession) -> None:
    """Call each echo-server tool once and compare the exact results (shared by all transports)."""
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert sorted(tools) == ECHO_TOOLS
    assert tools["add"].output_schema is not None
    assert tools["add"].output_schema["properties"] == {"sum": {"title": "Sum", "type": "number"}}
    assert tools["echo"].output_schema is None

    echo = await session.call_tool("echo", {"text": "héllo\nworld"})
    assert (echo.is_error, echo.structured_content, text_of(echo)) == (False, None, "héllo\nworld")

    add = await session.call_tool("add", {"a": 2, "b": 3.5})
    assert add.structured_content == {"sum": 5.5}
    assert json.loads(text_of(add)) == {"sum": 5.5}

    started = time.monotonic()
    slept = await session.call_tool("sleep", {"ms": 50})
    assert time.monotonic() - started >= 0.05
    assert (slept.structured_content, text_of(slept)) == ({"result": 50}, "50")

    fail = await session.call_tool("fail", {"message": "kaboom"})
    assert (fail.is_error, text_of(fail)) == (True, "Error executing tool fail: kaboom")

    big = await session.call_tool("big", {"kb": 64})
    big_text = text_of(big)
    assert len(big_text.encode()) == 64 * 1024
    payload = json.loads(big_text)
    assert (payload["kb"], len(payload["rows"])) == (64, 64 * 1024 // 48)
    assert payload["rows"][7] == {"index": 7, "word": "item-00007"}
    assert json.loads(text_of(await session.call_tool("big", {"kb": 0}))) == {"kb": 0, "rows": [], "pad": ""}

    image = await session.call_tool("image", {})
    assert len(image.content) == 1
    block = image.content[0]
    assert isinstance(block, ImageContent)
    assert block.mime_type == "image/png"
    assert block.data == TINY_PNG_B64
    assert base64.b64decode(block.data).startswith(b"\x89PNG\r\n\x1a\n")

    noise = await session.call_tool("stderr_noise", {"text": "still fine"})
    assert text_of(noise) == "still fine"

    weather = await session.call_tool("get-weather.v2", {"city": "Oslo"})
    assert weather.structured_content == {"city": "Oslo", "temperature_c": 28, "conditions": "sunny"}

    deleted = await session.call_tool("delete", {"key": "k1"})
    assert (deleted.structured_content, text_of(deleted)) == (None, "deleted k1")


@pytest.mark.parametrize("transport", ["stdio", "streamable-http", "sse"])
async def test_echo_server_every_tool(transport: str) -> None:
    """Every tool, every transport, exact results."""
    async with session_for("echo_server.py", transport) as session:
        await check_every_echo_tool(session)


async def test_echo_server_stderr_does_not_corrupt_stdio() -> None:
    """Lines written to stderr reach the client's errlog, and the JSON-RPC channel keeps working."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        async with stdio_session("echo_server.py", errlog=errlog) as session:
            result = await session.call_tool("stderr_noise", {"text": "ping"})
            after = await session.call_tool("echo", {"text": "pong"})
        errlog.seek(0)
        stderr = errlog.read()
    assert (text_of(result), text_of(after)) == ("ping", "pong")
    assert [line for line in stderr.splitlines() if line.startswith("[echo_server stderr]")] == [
        "[echo_server stderr] 0: ping",
        "[echo_server stderr] 1: ping",
        "[echo_server stderr] 2: ping",
    ]


async def test_echo_server_rejects_bad_arguments() -> None:
    """Argument validation errors are tool errors (``is_error``), not protocol errors."""
    async with stdio_session("echo_server.py") as session:
        missing = await session.call_tool("echo", {})
        wrong_type = await session.call_tool("add", {"a": "two", "b": 1})
        unknown = await session.call_tool("no_such_tool", {})
    assert missing.is_error and "text" in text_of(missing)
    assert wrong_type.is_error and "a" in text_of(wrong_type)
    assert unknown.is_error and text_of(unknown) == "Unknown tool: no_such_tool"


# --------------------------------------------------------------------------------------
# paginated_server.py
# --------------------------------------------------------------------------------------


async def test_paginated_server_pages() -> None:
    """25 tools in pages of 10, 10 and 5, linked by opaque cursors; a bad cursor is INVALID_PARAMS."""
    async with stdio_session("paginated_server.py") as session:
        pages: list[tuple[list[str], str | None]] = []
        cursor: str | None = None
        while True:
            params = PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            page = await session.list_tools(params=params)
            pages.append(([tool.name for tool in page.tools], page.next_cursor))
            cursor = page.next_cursor
            if cursor is None:
                break
        with pytest.raises(MCPError) as bad_cursor:
            await session.list_tools(params=PaginatedRequestParams(cursor="offset-7"))
        called = await session.call_tool("tool_24", {"x": 5})
        default = await session.call_tool("tool_00", {})
        unknown = await session.call_tool("tool_25", {})

    assert pages == [
        ([f"tool_{i:02d}" for i in range(0, 10)], "offset-10"),
        ([f"tool_{i:02d}" for i in range(10, 20)], "offset-20"),
        ([f"tool_{i:02d}" for i in range(20, 25)], None),
    ]
    assert bad_cursor.value.error.code == INVALID_PARAMS
    assert bad_cursor.value.error.message == "Invalid cursor: 'offset-7'"
    assert text_of(called) == "tool_24 called with x=5"
    assert text_of(default) == "tool_00 called with x=0"
    assert unknown.is_error and text_of(unknown) == "Unknown tool: tool_25"


async def test_paginated_server_over_streamable_http() -> None:
    """The low-level server's hand-written HTTP wiring serves the same first page."""
    async with http_session("paginated_server.py", "streamable-http") as session:
        page = await session.list_tools()
        assert (len(page.tools), page.next_cursor) == (10, "offset-10")
        assert text_of(await session.call_tool("tool_03", {"x": 1})) == "tool_03 called with x=1"


# --------------------------------------------------------------------------------------
# crashing_server.py and hanging_server.py
# --------------------------------------------------------------------------------------


async def test_crashing_server_crash_is_a_client_error() -> None:
    """``crash`` kills the server mid-call: the pending call fails with CONNECTION_CLOSED, and so do later ones."""
    async with stdio_session("crashing_server.py") as session:
        assert text_of(await session.call_tool("ok", {})) == "ok"
        started = time.monotonic()
        with pytest.raises(MCPError) as crashed:
            await session.call_tool("crash", {}, read_timeout_seconds=10)
        assert time.monotonic() - started < 5, "the client should notice the closed pipe, not time out"
        with pytest.raises(MCPError) as after:
            await session.call_tool("ok", {}, read_timeout_seconds=5)
    assert crashed.value.error.code == CONNECTION_CLOSED
    assert after.value.error.code == CONNECTION_CLOSED


async def test_crashing_server_exits_with_status_3() -> None:
    """The exit status is the documented 3 (seen when the server is driven by hand)."""
    command = [sys.executable, str(SERVERS / "crashing_server.py")]
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "crash", "arguments": {}}}
    # Like a real client: wait for the initialize reply before calling, and keep stdin open
    # (EOF would make the server cancel the in-flight call instead of running it).
    async with await anyio.open_process(command, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        stdout = BufferedByteReceiveStream(proc.stdout)
        await proc.stdin.send((json.dumps(initialize) + "\n").encode())
        with anyio.fail_after(20):
            reply = json.loads(await stdout.receive_until(b"\n", 1 << 20))
            for message in (initialized, call):
                await proc.stdin.send((json.dumps(message) + "\n").encode())
            returncode = await proc.wait()
        rest = b"".join([chunk async for chunk in stdout])
    assert reply["id"] == 1 and "result" in reply
    assert returncode == 3
    assert rest == b""  # the crash call is never answered


async def test_hanging_server_times_out_and_session_survives() -> None:
    """``hang`` never answers: ``read_timeout_seconds`` raises REQUEST_TIMEOUT, and ``ok`` still works after."""
    async with stdio_session("hanging_server.py") as session:
        assert text_of(await session.call_tool("ok", {})) == "ok"
        started = time.monotonic()
        with pytest.raises(MCPError) as timed_out:
            await session.call_tool("hang", {}, read_timeout_seconds=0.5)
        elapsed = time.monotonic() - started
        assert text_of(await session.call_tool("ok", {})) == "ok"
    assert timed_out.value.error.code == REQUEST_TIMEOUT
    assert timed_out.value.error.message == "Request 'tools/call' timed out"
    assert 0.5 <= elapsed < 10
