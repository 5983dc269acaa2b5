"""``mcp2repl serve --http``: Streamable HTTP behind a bearer token, one session per MCP session.

Real clients over a real socket: the Python SDK's ClientSession (handshake, 2025-11-25) and its
high-level ``Client`` (2026-07-28, stateless), and plain HTTP requests for what the token and the
Origin/Host checks refuse.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from serving import MCP2REPL, clean_env, serve_http, text

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class Served:
    def __init__(self, cwd: Path, proc: subprocess.Popen[str], url: str) -> None:
        self.cwd, self.proc, self.url = cwd, proc, url
        self.token = (cwd / ".mcp2repl" / "serve-token").read_text().strip()
        self.auth = {"Authorization": f"Bearer {self.token}"}


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    cwd = tmp_path_factory.mktemp("serve-http")
    (cwd / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": {"command": os.sys.executable, "args": ["-m", "mcp_kernel.demo.server"]}}}))
    proc, url = serve_http(cwd)
    yield Served(cwd, proc, url)
    proc.terminate()
    proc.wait(30)


def _client(served: Served) -> httpx2.AsyncClient:
    """The client's HTTP: the token, and patience for a step that starts a session kernel (minutes on a loaded box)."""
    return httpx2.AsyncClient(headers=served.auth, timeout=httpx2.Timeout(30, read=300))


async def _legacy(served: Served, steps: list[dict[str, Any]]) -> list[Any]:
    """One handshake-era client (its own MCP session), running ``steps`` in order."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(served.url, http_client=_client(served)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return [await session.call_tool("run", step) for step in steps]


async def _modern(served: Served, steps: list[dict[str, Any]]) -> tuple[str, list[Any]]:
    """A 2026-07-28 client: no handshake, no MCP session."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client(served.url, http_client=_client(served))) as client:
        return client.session.protocol_version, [await client.call_tool("run", step) for step in steps]


def test_requests_without_the_token_get_401_and_reach_no_session(http: Served) -> None:
    with httpx2.Client() as h:
        missing = h.post(http.url, json=INIT, headers=ACCEPT)
        wrong = h.post(http.url, json=INIT, headers={**ACCEPT, "Authorization": "Bearer not-the-token"})
        ok = h.post(http.url, json=INIT, headers={**ACCEPT, **http.auth})
    for refused in (missing, wrong):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer ")
        assert "mcp-session-id" not in refused.headers
    assert ok.status_code == 200 and ok.headers.get("mcp-session-id")


def test_the_token_is_generated_owner_only_and_never_printed(http: Served) -> None:
    path = http.cwd / ".mcp2repl" / "serve-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(http.token) >= 40


def test_an_origin_of_another_site_is_refused(http: Served) -> None:
    with httpx2.Client() as h:
        evil = h.post(http.url, json=INIT, headers={**ACCEPT, **http.auth, "Origin": "http://evil.example"})
        host = h.post(http.url, json=INIT, headers={**ACCEPT, **http.auth, "Host": "evil.example"})
    assert evil.status_code == 403
    assert host.status_code == 421


def test_each_mcp_session_has_its_own_state(http: Served) -> None:
    async def both() -> tuple[list[Any], list[Any]]:
        first = await _legacy(http, [{"code": "globalThis.mine = 'A'; mine"}, {"code": "mine"}])
        second = await _legacy(http, [{"code": "typeof mine"}])
        return first, second

    first, second = asyncio.run(both())
    assert [text(r) for r in first] == ['"A"', '"A"']
    assert text(second[0]) == '"undefined"'


def test_a_stateless_client_runs_in_the_shared_session(http: Served) -> None:
    version, results = asyncio.run(_modern(http, [{"code": "globalThis.shared = (globalThis.shared || 0) + 1"}]))
    assert version == "2026-07-28"
    _, again = asyncio.run(_modern(http, [{"code": "shared"}, {"code": "data.x * 2", "data": {"x": 21}}]))
    assert [text(r) for r in results + again] == ["1", "1", "42"]
    legacy = asyncio.run(_legacy(http, [{"code": "typeof shared"}]))
    assert text(legacy[0]) == '"undefined"'  # a connection of its own does not see it


def test_a_named_session_is_shared_by_clients_and_the_command_line(http: Served) -> None:
    try:
        asyncio.run(_legacy(http, [{"code": "globalThis.handoff = { by: 'first client' }", "session": "team"}]))
        _, seen = asyncio.run(_modern(http, [{"code": "handoff.by", "session": "team"}]))
        assert text(seen[0]) == '"first client"'
        shell = subprocess.run([MCP2REPL, "--session", "team", "--json", "-e", "handoff.by"], cwd=http.cwd, env=clean_env(), capture_output=True, text=True, timeout=120)
        assert json.loads(shell.stdout)["value"] == "first client", shell.stderr
        bad = asyncio.run(_legacy(http, [{"code": "1", "session": "../escape"}]))
        assert bad[0].is_error and "invalid session name" in text(bad[0])
    finally:
        subprocess.run([MCP2REPL, "--stop", "team"], cwd=http.cwd, env=clean_env(), capture_output=True, timeout=60)


def test_ending_an_mcp_session_closes_its_session(http: Served) -> None:
    """Each MCP session's in-process Session starts its own MCP servers; a client that ends its MCP
    session (the SDK's DELETE on close) takes them with it."""
    import psutil

    def demos() -> int:
        found = 0
        for child in psutil.Process(http.proc.pid).children(recursive=True):
            try:
                found += child.status() != psutil.STATUS_ZOMBIE and "mcp_kernel.demo.server" in " ".join(child.cmdline())
            except psutil.Error:  # gone (or a zombie) between the listing and the look
                pass
        return found

    before = demos()

    async def one_client() -> int:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async with streamable_http_client(http.url, http_client=_client(http)) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("run", {"code": "await mcp.demo.list_genres({})"})
                return demos()

    during = asyncio.run(one_client())
    assert during == before + 1
    deadline = time.monotonic() + 60
    while demos() > before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert demos() == before


def test_the_token_can_come_from_the_environment(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    proc, url = serve_http(tmp_path, env=clean_env(MCP2REPL_SERVE_TOKEN="s3cret-from-env"))
    try:
        with httpx2.Client() as h:
            assert h.post(url, json=INIT, headers={**ACCEPT, "Authorization": "Bearer s3cret-from-env"}).status_code == 200
    finally:
        proc.terminate()
        proc.wait(30)
    assert not (tmp_path / ".mcp2repl" / "serve-token").exists()
    assert "s3cret-from-env" not in (tmp_path / "serve-http.log").read_text()


def test_the_printed_address_takes_connections_at_once(tmp_path: Path) -> None:
    """busy-check: a client that read the address was refused, as uvicorn had not called listen() yet.
    The serve process is stopped right after it prints: the socket must already take connections."""
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    proc = subprocess.Popen([MCP2REPL, "serve", "--http", "127.0.0.1:0"], cwd=tmp_path, env=clean_env(), stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        proc.send_signal(signal.SIGSTOP)
        port = int(line.split("/mcp")[0].rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=30):  # refused if it were not listening
            pass
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.terminate()
        proc.wait(30)


def test_a_non_loopback_address_needs_allow_remote(tmp_path: Path) -> None:
    refused = subprocess.run([MCP2REPL, "serve", "--http", "0.0.0.0:0"], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr == "mcp2repl serve: error: --http 0.0.0.0:0: 0.0.0.0 is not a loopback address; add --allow-remote to serve other machines\n"
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    proc = subprocess.Popen([MCP2REPL, "serve", "--http", "0.0.0.0:0", "--allow-remote"], cwd=tmp_path, env=clean_env(), stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        port = int(line.split("/mcp")[0].rsplit(":", 1)[1])
        with httpx2.Client() as h:
            assert h.post(f"http://127.0.0.1:{port}/mcp", json=INIT, headers=ACCEPT).status_code == 401  # still the token
    finally:
        proc.terminate()
        proc.wait(30)
