"""The fault suite, in-process, at start-up and at close: hostile servers under ServerManager
(the faults during a call, and the shared helpers' rules, are in test_faults.py and fault_run.py).
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import EVERYTHING
from fault_run import PY, Run, error_of, hostile, run
from test_stdio import marked

import mcp_kernel
from mcp_kernel.servers.connection import ServerConnection, ServerUnavailable
from mcp_kernel.servers.spec import ServerSpec, parse_spec

pytestmark = pytest.mark.timeout(120)


# ---- faults at start-up -----------------------------------------------------------------------------


def test_a_server_that_never_answers_initialize(monkeypatch: pytest.MonkeyPatch) -> None:
    mark = f"fault-{uuid.uuid4().hex[:8]}"

    async def body(r: Run, conn: Any) -> None:
        # only now: the healthy echo server started under the default limit (2 s failed it on a loaded machine)
        monkeypatch.setenv("MCP2REPL_START_TIMEOUT", "2")
        error = await error_of(r.manager.connect(hostile("no-init", "--mark", mark)), within=20)
        assert str(error) == 'MCP server "h" is unavailable: no answer within 2 s during start-up (MCP2REPL_START_TIMEOUT)'
        assert marked(mark) == []
        await r.echo_works()

    run(None, body, mark)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"command": "false"}, 'MCP server "x" is unavailable: the server exited with status 1 during start-up'),
        (
            {"command": PY, "args": ["-c", "import sys; sys.stderr.write('one\\n  two\\nthree\\n' + 'x' * 400 + '\\n'); sys.exit(2)"]},
            'MCP server "x" is unavailable: the server exited with status 2 during start-up (server stderr: two | three | '
            + "x" * 300
            + "… (100 more characters cut))",
        ),
        (
            {"command": "/nonexistent/mcp2repl-fault"},
            'MCP server "x" is unavailable: the server exited with status 127 during start-up'
            " (server stderr: cannot start '/nonexistent/mcp2repl-fault': No such file or directory)",
        ),
    ],
    ids=["false", "stderr", "missing"],
)
def test_a_server_that_exits_at_once(spec: dict[str, Any], message: str) -> None:
    async def body(r: Run, conn: Any) -> None:
        error = await error_of(r.manager.connect(parse_spec("x", spec)), within=20)
        assert str(error) == message

    run(None, body, echo=False)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("kind", ["http", "sse"])
def test_an_http_server_that_is_down_is_named(kind: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}/{'mcp' if kind == 'http' else 'sse'}"

    async def body(r: Run, conn: Any) -> None:
        error = await error_of(r.manager.connect(parse_spec("web", {"type": kind, "url": url})), within=30)
        assert str(error) == f'MCP server "web" is unavailable: {url}: All connection attempts failed'

    run(None, body, echo=False)


@pytest.mark.parametrize("status", ["401 Unauthorized", "403 Forbidden"])
def test_an_http_auth_failure_names_the_status_and_the_url(status: str) -> None:
    async def body(r: Run, conn: Any) -> None:
        async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno".encode())
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(refuse, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp"
        try:
            http = await error_of(r.manager.connect(parse_spec("web", {"type": "http", "url": url})), within=30)
            sse = await error_of(r.manager.connect(parse_spec("web", {"type": "sse", "url": url})), within=30)
        finally:
            server.close()
        # a 401 without a Bearer challenge: no OAuth login to try, so the message says what to configure
        hint = (
            '; the server needs authorization but offers no OAuth login (no Bearer challenge). Pass a token: "headers": '
            '{"Authorization": "Bearer ${TOKEN}"}, or configure OAuth with an "auth" block ({"type": "oauth"}, or '
            '"client_credentials" with client_id and client_secret)'
            if status.startswith("401")
            else ""
        )
        assert str(http) == f'MCP server "web" is unavailable: Server returned an error response (HTTP {status} from {url}){hint}'
        assert str(sse) == f"MCP server \"web\" is unavailable: Client error '{status}' for url '{url}'{hint}"

    run(None, body, echo=False)


# ---- who we are and what we can do -------------------------------------------------------------


def test_client_info_and_capabilities(tmp_path: Path) -> None:
    record = tmp_path / "initialize.jsonl"

    async def body(r: Run, conn: Any) -> None:
        assert (await conn.call_tool("call", {})).content[0].text == "ok"

    run(hostile("record", "--record", str(record)), body, echo=False)
    (params,) = [__import__("json").loads(line) for line in record.read_text().splitlines()]
    assert params["clientInfo"] == {"name": "mcp2repl", "version": mcp_kernel.__version__}
    # no sampling (we would decline it), no roots (the config gives none); elicitation (a person or the config answers)
    assert params["capabilities"] == {"elicitation": {"form": {}, "url": {}}}


def test_capabilities_follow_the_config(tmp_path: Path) -> None:
    record = tmp_path / "initialize.jsonl"

    async def body(r: Run, conn: Any) -> None:
        assert (await conn.call_tool("call", {})).content[0].text == "ok"

    run(hostile("record", "--record", str(record), elicitation="decline", roots=["."]), body, echo=False)
    (params,) = [__import__("json").loads(line) for line in record.read_text().splitlines()]
    assert params["capabilities"] == {"roots": {"listChanged": True}}  # only what the config answers with


def test_a_tool_that_requires_tasks_runs_as_a_task() -> None:
    """server-everything's simulate-research-query (taskSupport "required", TypeScript SDK) runs
    through tools/call + task, tasks/get and tasks/result; its status messages arrive as progress."""
    if not EVERYTHING.exists():
        pytest.skip("server-everything is not installed (run scripts/bootstrap.sh --test)")
    seen: list[str | None] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    async def body(r: Run, conn: Any) -> None:
        result = await conn.call_tool("simulate-research-query", {"topic": "tides"}, progress=progress)
        assert result.content[0].text.startswith("# Research Report: tides\n")
        # polled every pollInterval (1 s), as long as each stage lasts: which stages a poll lands in is
        # timing, so: several of them, each once, in order
        stages = ["Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."]
        assert len(seen) >= 2 and seen == sorted(set(seen), key=stages.index), seen

    run(parse_spec("everything", {"command": str(EVERYTHING)}), body, echo=False)


# ---- no process left behind ----------------------------------------------------------------------


def test_closing_a_server_that_ignores_everything_leaves_nothing() -> None:
    mark = f"fault-{uuid.uuid4().hex[:8]}"

    async def body(r: Run, conn: Any) -> float:
        assert (await conn.call_tool("ok", {})).content[0].text == "ok"
        assert len(marked(mark)) == 3  # the server, a child that ignores SIGTERM, a setsid grandchild
        started = time.monotonic()
        await r.manager.disconnect(conn)
        assert marked(mark) == []
        await r.echo_works()
        return time.monotonic() - started

    assert run(hostile("orphans", "--mark", mark), body, mark) < 10


def test_a_start_given_up_is_not_shown_as_starting(tmp_path: Path) -> None:
    """An interrupted login (or any close during start-up) must not leave the server shown as
    "starting" while its start winds down: the next cell's api.servers() reads the state at once."""
    spec = ServerSpec(name="mute", transport="stdio", command=sys.executable, args=["-c", "import time; time.sleep(60)"])

    async def main() -> tuple[str, str, str]:
        conn = ServerConnection(spec, tmp_path)
        conn.start()
        await asyncio.sleep(0.5)
        before = conn.state
        closing = asyncio.ensure_future(conn.close())
        await asyncio.sleep(0.1)  # the close has begun; the server ignores stdin's end, so it takes seconds
        during = conn.state
        await closing
        return before, during, conn.state

    assert asyncio.run(main()) == ("starting", "stopped", "stopped")


def test_a_call_in_flight_ends_when_its_stubborn_server_is_closed() -> None:
    """A server that ignores SIGTERM and stdin's end, closed while a call waits on it (api.disconnect
    from a timer): the close kills it after the grace, and the call ends then, saying why."""
    mark = f"fault-{uuid.uuid4().hex[:8]}"

    async def body(r: Run, conn: Any) -> None:
        call = asyncio.ensure_future(conn.call_tool("call", {}, timeout=120))
        await asyncio.sleep(0.5)
        started = time.monotonic()
        await r.manager.disconnect(conn)
        error = await error_of(call, within=20)
        assert time.monotonic() - started < 20
        assert (type(error), str(error)) == (ServerUnavailable, 'MCP server "h" was closed during call (api.disconnect, a reconnect or shutdown)')
        assert marked(mark) == []
        await r.echo_works()

    run(hostile("orphans", "--mark", mark), body, mark)
