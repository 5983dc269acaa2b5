"""A 2026-07-28 server over Streamable HTTP restarted behind the same URL: there is no session to
lose (the stateless core), only the ``subscriptions/listen`` stream, which the kernel opens again,
so a cell's subscription keeps working. A real kernel, the SDK's MCPServer fixture over HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SERVERS, KernelProcess

MODERN = str(SERVERS / "modern_server.py")

pytestmark = pytest.mark.timeout(240)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HttpServer:
    def __init__(self, port: int, record: Path) -> None:
        self.port, self.record = port, record
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([sys.executable, MODERN, "--http", str(self.port), "--record", str(self.record)], stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"the fixture server did not listen on port {self.port} within 60 s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(30)

    def listens(self) -> list[int]:
        """The pid of each process that got a subscriptions/listen."""
        if not self.record.exists():
            return []
        rows = [json.loads(line) for line in self.record.read_text().splitlines()]
        return [r["pid"] for r in rows if r["method"] == "subscriptions/listen"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProcess, HttpServer]]:
    cwd = tmp_path_factory.mktemp("listen-http")
    server = HttpServer(free_port(), cwd / "record.jsonl")
    server.start()
    (cwd / "mcp.json").write_text(json.dumps({"mcpServers": {"web": {"url": f"http://127.0.0.1:{server.port}/mcp"}}}))
    kernel = KernelProcess(cwd)
    kernel.wait_for_servers()
    yield kernel, server
    kernel.close()
    server.stop()


def test_a_subscription_is_listened_to_again_after_an_http_restart(setup: tuple[KernelProcess, HttpServer]) -> None:
    k, server = setup
    rows = k.json("await api.servers()")
    assert (rows[0]["protocol"], rows[0]["state"]) == ("2026-07-28", "ready")
    k.run("globalThis.updates = []; sub = await mcp.web.resources.subscribe('memo://note', (e) => updates.push(e))")
    k.run("await mcp.web.touch()")
    k.run("for (let i = 0; i < 300 && updates.length < 1; i++) await sleep(50)", 30)
    assert k.json("updates") == [{"server": "web", "uri": "memo://note"}]
    first = server.process.pid if server.process else None
    server.stop()
    server.start()
    # either the listener opens the stream again by itself (backing off while the server was away), or the
    # connection saw the server go and the next call reconnects, telling the new process the subscription first
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and server.process is not None and server.process.pid not in server.listens():
        if k.run("await api.servers()").result["application/json"][0]["state"] != "ready":
            break
        time.sleep(0.5)
    k.run("await mcp.web.touch()", 60)
    assert server.process is not None and server.process.pid != first and server.process.pid in server.listens(), "listened to again"
    k.run("for (let i = 0; i < 300 && updates.length < 2; i++) await sleep(50)", 30)
    assert k.json("updates") == [{"server": "web", "uri": "memo://note"}] * 2
