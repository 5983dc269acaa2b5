"""One kernel, two MCP revisions: the SDK's own 2026-07-28 server (``MCPServer``, the fixture
tests/fixtures/servers/modern_server.py, which writes down every request it was sent) beside the
hand-written 2025-11-25-only protocol fixture. Each connection negotiates the newest revision its
server speaks, and a cell sees the same behaviour on both: tool calls, questions answered through
Jupyter's stdin channel, subscriptions that survive a server restart, log levels.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SERVERS, KernelProcess

MODERN = str(SERVERS / "modern_server.py")
PROTOCOL = str(SERVERS / "protocol_server.py")

pytestmark = pytest.mark.timeout(240)


class Requests:
    """The modern fixture's record: one JSON object per request it was sent."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def all(self, method: str | None = None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        found = [json.loads(line) for line in self.path.read_text().splitlines()]
        return [r for r in found if method is None or r["method"] == method]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProcess, Requests, Path]]:
    cwd = tmp_path_factory.mktemp("revisions")
    record = cwd / "modern.jsonl"
    servers = {
        "m": {"command": sys.executable, "args": [MODERN, "--record", str(record), "--ttl-ms", "600000"]},
        "p": {"command": sys.executable, "args": [PROTOCOL, "--record", str(cwd / "legacy.jsonl")]},
        "never": {"command": sys.executable, "args": [MODERN], "elicitation": "decline"},
    }
    (cwd / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    kernel = KernelProcess(cwd)
    kernel.wait_for_servers()
    yield kernel, Requests(record), cwd / "legacy.jsonl"
    kernel.close()


@pytest.fixture
def k(setup: tuple[KernelProcess, Requests, Path]) -> KernelProcess:
    return setup[0]


@pytest.fixture
def rec(setup: tuple[KernelProcess, Requests, Path]) -> Requests:
    return setup[1]


def run_answering(k: KernelProcess, code: str, answers: list[str]) -> tuple[dict[str, Any], list[str], Any]:
    """Execute with stdin allowed, answering the input requests in order; (reply, prompts, value)."""
    msg_id = k.kc.execute(code, allow_stdin=True)
    prompts: list[str] = []
    left = list(answers)
    while left:
        request = k.kc.get_stdin_msg(timeout=60)
        if request["msg_type"] == "input_request":
            prompts.append(request["content"]["prompt"])
            k.kc.input(left.pop(0))
    reply = k.reply(msg_id, 60)
    result = None
    while True:
        msg = k.kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id:
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            if msg["msg_type"] == "execute_result":
                result = msg["content"]["data"]["text/plain"]
    return reply, prompts, result


def run_collecting(k: KernelProcess, code: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Execute with stdin allowed (an interactive client: progress comes as stderr lines); (reply, outputs)."""
    msg_id = k.kc.execute(code, allow_stdin=True)
    reply = k.reply(msg_id, 60)
    outputs: list[dict[str, Any]] = []
    while True:
        msg = k.kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id:
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return reply, outputs
            outputs.append({"msg_type": msg["msg_type"], **msg["content"]})


def test_each_server_shows_the_revision_it_speaks(k: KernelProcess) -> None:
    rows = {r["name"]: r for r in k.json("await api.servers()")}
    assert (rows["m"]["protocol"], rows["m"]["state"], rows["m"]["server"]) == ("2026-07-28", "ready", "modern-fixture")
    assert (rows["p"]["protocol"], rows["p"]["state"], rows["p"]["server"]) == ("2025-11-25", "ready", "protocol-fixture")


def test_tools_are_called_on_both(k: KernelProcess, rec: Requests) -> None:
    assert k.value("(await mcp.m.add({a: 2, b: 3})).result") == "5"
    assert k.value("await mcp.p.touch({uri: 'memo://x'})") == "'touched'"
    calls = rec.all("tools/call")
    assert calls and {c["protocol"] for c in calls} == {"2026-07-28"}
    assert rec.all("initialize") == []  # the stateless core: no handshake


def test_an_input_request_is_answered_through_stdin(k: KernelProcess, rec: Requests) -> None:
    reply, prompts, result = run_answering(k, "await mcp.m.greet()", ["y", "Ada"])
    assert reply["status"] == "ok", reply
    assert prompts == ['Answer "m"? [y]es / [n]o (decline) / [c]ancel: ', "name (string, required): "]
    assert result == "{ result: 'Hello, Ada!' }"
    # asked as 2026-07-28 asks: an input-required result, then the same call again with the answer
    assert [c["protocol"] for c in rec.all("tools/call")[-2:]] == ["2026-07-28", "2026-07-28"]


def test_a_subscription_survives_a_server_restart(k: KernelProcess, rec: Requests) -> None:
    k.run("globalThis.updates = []; sub = await mcp.m.resources.subscribe('memo://note', (e) => updates.push(e))")
    listens = len(rec.all("subscriptions/listen"))
    assert listens >= 1 and rec.all("resources/subscribe") == []
    k.run("await mcp.m.touch()")
    k.run("for (let i = 0; i < 300 && updates.length < 1; i++) await sleep(50)", 30)
    assert k.json("updates") == [{"server": "m", "uri": "memo://note"}]
    restarted(k, "m", "modern.jsonl")  # the never server runs the same script
    # the next call reconnects; the new process is told the subscription before the call runs
    k.run("await mcp.m.touch()", 60)
    k.run("for (let i = 0; i < 300 && updates.length < 2; i++) await sleep(50)", 30)
    assert k.json("updates") == [{"server": "m", "uri": "memo://note"}] * 2
    pids = {r["pid"] for r in rec.all("subscriptions/listen")}
    assert len(pids) == 2, "the restarted server was listened to again"
    assert k.value("await sub.unsubscribe()") == "true"
    k.run("await mcp.m.touch(); await sleep(300)")
    assert k.value("updates.length") == "2"


def restarted(k: KernelProcess, server: str, process: str) -> None:
    """Kill the server's process and wait until the kernel noticed (the next call reconnects)."""
    k.server_process(process).kill()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the cell may also show the notice that the server disconnected
        rows = k.run("await api.servers()").result["application/json"]
        if next(r for r in rows if r["name"] == server)["state"] != "ready":
            return
        time.sleep(0.2)
    raise AssertionError(f"the kernel did not notice within 30 s that {server} was killed")


def test_a_legacy_subscription_is_sent_again_after_a_restart(setup: tuple[KernelProcess, Requests, Path]) -> None:
    k, _, legacy = setup
    k.run("globalThis.old = []; osub = await mcp.p.resources.subscribe('memo://x', (e) => old.push(e))")
    restarted(k, "p", "protocol_server.py")
    k.run("await mcp.p.touch({uri: 'memo://x'})", 60)
    k.run("for (let i = 0; i < 300 && !old.length; i++) await sleep(50)", 30)
    assert k.json("old") == [{"server": "p", "uri": "memo://x"}]
    subscribes = [json.loads(line) for line in legacy.read_text().splitlines() if '"resources/subscribe"' in line]
    assert subscribes == [{"event": "resources/subscribe", "uri": "memo://x"}] * 2
    assert k.value("await osub.unsubscribe()") == "true"


def test_the_log_level_rides_each_request(k: KernelProcess, rec: Requests) -> None:
    # 2026-07-28: a server sends log lines only when a request asks; unset, the kernel asks for info
    logged = "await api.serverLog('m')"
    before = k.run(logged).text.count("[info] hello from chatty")
    cell = k.run("await mcp.m.chatty()")
    assert (cell.text, cell.stderr) == ("{ result: 'said' }", "")  # a server's info line never reaches the cell's output
    assert rec.all("tools/call")[-1]["logLevel"] == "info"
    assert k.run(logged).text.count("[info] hello from chatty") == before + 1
    assert k.json("await api.setLogLevel('m', 'error')") == {"server": "m", "level": "error"}
    assert k.run("await mcp.m.chatty()").text == "{ result: 'said' }"
    assert rec.all("tools/call")[-1]["logLevel"] == "error"
    assert k.run(logged).text.count("[info] hello from chatty") == before + 1  # below the level: not sent
    assert rec.all("logging/setLevel") == []


def test_the_tool_list_is_not_fetched_again_while_fresh(k: KernelProcess, rec: Requests) -> None:
    # the fixture's tools/list says ttlMs 600000: listed once, by the first process; the restarted one was not asked
    pids = list(dict.fromkeys(r["pid"] for r in rec.all("tools/call")))
    assert len(pids) == 2, "the subscription test restarted the server"
    assert [r["pid"] for r in rec.all("tools/list")] == pids[:1]
    assert k.value("(await mcp.m.add({a: 1, b: 1})).result") == "2"  # the kept list serves the new process


def test_a_capability_the_server_needs_is_named(k: KernelProcess) -> None:
    cell = k.run("await mcp.never.greet()")
    assert cell.error["evalue"] == (
        'MCP server "never" needs elicitation (its config says "elicitation": "decline"; "ask" or "defaults" offer it), '
        "which mcp2repl did not offer it"
    ), cell.error


def test_a_task_tool_runs_through_the_tasks_extension(k: KernelProcess, rec: Requests) -> None:
    reply, outputs = run_collecting(k, "await mcp.m.research({topic: 'tides', seconds: 0.5})")
    assert reply["status"] == "ok", reply
    assert [o["data"]["text/plain"] for o in outputs if o["msg_type"] == "execute_result"] == ["'report on tides'"]
    lines = "".join(o["text"] for o in outputs if o["msg_type"] == "stream" and o["name"] == "stderr").splitlines()
    assert lines[0] == "[m.research] Gathering sources"  # the new task's status message, then each from tasks/get
    assert {"[m.research] Reading", "[m.research] Writing report"} <= set(lines), lines
    gets = rec.all("tasks/get")
    assert gets and {g["protocol"] for g in gets} == {"2026-07-28"}
    assert k.value("await mcp.m.research({topic: 'tides', seconds: 0.1})") == "'report on tides'"


def test_an_interrupt_cancels_the_task(k: KernelProcess, rec: Requests) -> None:
    cancels = len(rec.all("tasks/cancel"))
    gets = len(rec.all("tasks/get"))
    msg_id = k.kc.execute("await mcp.m.research({topic: 'slow', seconds: 60})")
    deadline = time.monotonic() + 60
    while len(rec.all("tasks/get")) <= gets and time.monotonic() < deadline:  # the task runs: it is being polled
        time.sleep(0.1)
    k.km.interrupt_kernel()
    assert k.reply(msg_id, 60)["ename"] == "InterruptError"
    deadline = time.monotonic() + 30
    while len(rec.all("tasks/cancel")) <= cancels and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(rec.all("tasks/cancel")) == cancels + 1, "tasks/cancel reached the server"
