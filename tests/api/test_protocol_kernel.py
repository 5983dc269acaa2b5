"""The client side of MCP as a notebook user meets it: elicitation answered through Jupyter's stdin
channel (or by the config when nobody can answer), task tools, roots, log levels, resource
subscriptions and cancellation. A real kernel, real servers over stdio: the protocol fixture
(tests/fixtures/servers/protocol_server.py), which writes down what it was sent, and npm's
server-filesystem and server-everything.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EVERYTHING, FIXTURES, SERVERS, KernelProcess
from kernels import configured, converse

PROTOCOL = str(SERVERS / "protocol_server.py")
FILESYSTEM = FIXTURES / "node" / "node_modules" / ".bin" / "mcp-server-filesystem"

pytestmark = pytest.mark.timeout(180)


class Recorded:
    """The fixture's record file: one JSON object per message it was sent."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        found = [json.loads(line) for line in self.path.read_text().splitlines()]
        return [e for e in found if name is None or e["event"] == name]

    def wait_for(self, name: str, count: int = 1, seconds: float = 20.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + seconds
        while len(self.events(name)) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.events(name)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProcess, Recorded, Path]]:
    cwd = tmp_path_factory.mktemp("protocol")
    record = cwd / "record.jsonl"
    headless = cwd / "headless.jsonl"
    servers = {
        "p": {"command": sys.executable, "args": [PROTOCOL, "--record", str(record)], "log_level": "warning", "roots": ["."]},
        "quiet": {"command": sys.executable, "args": [PROTOCOL, "--record", str(headless)], "elicitation": "defaults", "roots": False},
        "never": {"command": sys.executable, "args": [PROTOCOL], "elicitation": "decline"},
    }
    (cwd / "data").mkdir()
    (cwd / "outside.txt").write_text("the kernel's folder, outside data/")
    if FILESYSTEM.exists():  # configured with one folder: that folder is its scope, whatever the client offers
        servers["scoped"] = {"command": str(FILESYSTEM), "args": [str(cwd / "data")]}
    with configured(cwd, {"mcpServers": servers, "allow_connect": "any"}) as kernel:  # fs and everything connect from cells
        yield kernel, Recorded(record), cwd


@pytest.fixture
def k(setup: tuple[KernelProcess, Recorded, Path]) -> KernelProcess:
    return setup[0]


@pytest.fixture
def rec(setup: tuple[KernelProcess, Recorded, Path]) -> Recorded:
    return setup[1]


def run_answering(k: KernelProcess, code: str, answers: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """Execute with stdin allowed, answering the input requests in order; (reply, outputs, prompts)."""
    talk = converse(k, code, answers)
    return talk.reply, talk.outputs, talk.prompts


def stderr(outputs: list[dict[str, Any]]) -> str:
    return "".join(o["text"] for o in outputs if o["type"] == "stream" and o["name"] == "stderr")


def value(outputs: list[dict[str, Any]]) -> Any:
    data = next(o["data"] for o in outputs if o["type"] == "execute_result")
    return data["application/json"] if "application/json" in data else data["text/plain"]


FORM_NOTICE = (
    '[mcp2repl] MCP server "p" asks: Who are you?\n'
    "  name (string, required): Your name\n"
    "  age (integer 0–150): Age in years [default: 30]\n"
    "  color (one of: red, green, blue) [default: green]\n"
)
FIELD_PROMPTS = ["name (string, required): ", "age (integer 0–150) [30]: ", "color (one of: red, green, blue) [green]: "]


# ---- elicitation -------------------------------------------------------------------------------


def test_a_form_is_asked_field_by_field_and_accepted(k: KernelProcess) -> None:
    reply, outputs, prompts = run_answering(k, "await mcp.p.form()", ["y", "Ada", "", "blue"])
    assert reply["status"] == "ok"
    assert prompts == ['Answer "p"? [y]es / [n]o (decline) / [c]ancel: ', *FIELD_PROMPTS]
    assert stderr(outputs) == FORM_NOTICE
    assert value(outputs) == {"action": "accept", "content": {"name": "Ada", "age": 30, "color": "blue"}}


def test_an_answer_that_does_not_fit_is_asked_again(k: KernelProcess) -> None:
    answers = ["yes", "A", "Ada", "old", "200", "41", "purple", "RED"]
    reply, outputs, prompts = run_answering(k, "await mcp.p.form()", answers)
    assert prompts[1:] == [FIELD_PROMPTS[0]] * 2 + [FIELD_PROMPTS[1]] * 3 + [FIELD_PROMPTS[2]] * 2
    assert stderr(outputs) == FORM_NOTICE + (
        "[mcp2repl] name: 'A' is too short; try again\n"
        '[mcp2repl] age: "old" is not an integer; try again\n'
        "[mcp2repl] age: 200 is greater than the maximum of 150; try again\n"
        '[mcp2repl] color: "purple" is not one of: red, green, blue; try again\n'
    )
    assert value(outputs) == {"action": "accept", "content": {"name": "Ada", "age": 41, "color": "red"}}


def test_a_form_can_be_declined_or_cancelled(k: KernelProcess) -> None:
    _, outputs, prompts = run_answering(k, "await mcp.p.form()", ["n"])
    assert value(outputs) == {"action": "decline"} and len(prompts) == 1
    _, outputs, _ = run_answering(k, "await mcp.p.form()", ["c"])
    assert value(outputs) == {"action": "cancel"}


def test_an_interrupt_while_a_question_waits_cancels_it(k: KernelProcess) -> None:
    """The abandoned question stops waiting, so the next one gets its own answer."""
    msg_id = k.kc.execute("await mcp.p.form()", allow_stdin=True)
    request = k.kc.get_stdin_msg(timeout=60)
    assert request["content"]["prompt"] == 'Answer "p"? [y]es / [n]o (decline) / [c]ancel: '
    k.km.interrupt_kernel()
    reply = k.reply(msg_id, 60)
    assert reply["ename"] == "InterruptError", reply
    _, outputs, prompts = run_answering(k, "await mcp.p.form()", ["n"])
    assert value(outputs) == {"action": "decline"} and len(prompts) == 1


def test_url_mode_shows_the_link(k: KernelProcess) -> None:
    _, outputs, prompts = run_answering(k, "await mcp.p.link()", ["y"])
    url = "https://example.com/connect?session=42"
    assert stderr(outputs) == f'[mcp2repl] MCP server "p" asks you to open a link: Connect your account\n  {url}\n'
    assert prompts == [f"Open {url} , then answer: done? [y]es / [n]o (decline) / [c]ancel: "]
    assert value(outputs) == {"action": "accept"}


def test_without_stdin_the_config_answers(k: KernelProcess) -> None:
    cell = k.run("await mcp.p.form()")  # no allow_stdin, like papermill and nbclient
    assert cell.stderr == (
        '[mcp2repl] MCP server "p" asked for input ("Who are you?"), but nobody can answer here (no stdin: papermill, '
        'nbclient, --json): declined. To send the defaults of its form instead, set "elicitation": "defaults" for "p" in the config.\n'
    )
    assert cell.result["application/json"] == {"action": "decline"}
    cell = k.run("await mcp.quiet.form({defaults: true})")
    assert cell.stderr == (
        '[mcp2repl] MCP server "quiet" asked for input ("Who are you?"); nobody can answer here, so its defaults were sent '
        '(elicitation: "defaults"): {"name": "anonymous", "age": 30, "color": "green"}\n'
    )
    assert cell.result["application/json"] == {"action": "accept", "content": {"name": "anonymous", "age": 30, "color": "green"}}
    cell = k.run("await mcp.quiet.form()")
    assert cell.stderr == '[mcp2repl] MCP server "quiet" asked for input ("Who are you?"); nobody can answer here, and name has no default: declined\n'
    assert cell.result["application/json"] == {"action": "decline"}


def test_elicitation_is_advertised_only_where_it_can_be_answered(setup: tuple[KernelProcess, Recorded, Path]) -> None:
    k, rec, cwd = setup
    (init,) = rec.events("initialize")
    assert init["capabilities"] == {"elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": True}}
    (quiet,) = Recorded(cwd / "headless.jsonl").events("initialize")
    assert quiet["capabilities"] == {"elicitation": {"form": {}, "url": {}}}  # "roots": false, as without "roots"
    # "decline": not advertised, so the SDK refuses the request the server should not have sent
    assert k.json("await mcp.never.form()") == {"code": -32600, "message": "Elicitation not supported"}


# ---- tasks -------------------------------------------------------------------------------------


def test_a_task_tool_returns_its_result_with_progress(k: KernelProcess, rec: Recorded) -> None:
    # an interactive jupyter_client session gets progress as stderr lines (terminal clients ignore display updates)
    _, outputs, _ = run_answering(k, "await mcp.p.research({topic: 'tides', seconds: 0.5})", [])
    assert value(outputs) == "'report on tides'"
    lines = stderr(outputs).splitlines()
    assert lines[0] == "[p.research] queued"  # the status message of the new task
    # progress notifications (done/total) and status messages from tasks/get, as they come
    assert {"[p.research] 0% Gathering sources", "[p.research] 33% Reading", "[p.research] 67% Writing report"} <= set(lines)
    assert "[p.research] Writing report..." in lines
    assert rec.events("task created")[-1]["ttl"] == 1800000


def test_an_interrupt_cancels_the_task(k: KernelProcess, rec: Recorded) -> None:
    before = len(rec.events("task created"))
    msg_id = k.kc.execute("await mcp.p.research({topic: 'long', seconds: 30})")
    created = rec.wait_for("task created", before + 1)
    assert len(created) == before + 1
    k.km.interrupt_kernel()
    assert k.reply(msg_id, 60)["ename"] == "InterruptError"
    assert rec.wait_for("tasks/cancel")[-1] == {"event": "tasks/cancel", "taskId": created[-1]["taskId"]}


def test_the_calls_time_limit_cancels_the_task(k: KernelProcess, rec: Recorded) -> None:
    cell = k.run("await mcp.p.research({topic: 'slow', seconds: 30}, {timeout: 1})")
    assert cell.error["evalue"] == "no answer within 1 s (set by this call's {timeout: 1})"
    created = rec.events("task created")[-1]
    # the call waits (bounded) for the answer to tasks/cancel before it fails, so it is recorded by now
    assert rec.events("tasks/cancel")[-1] == {"event": "tasks/cancel", "taskId": created["taskId"]}


def test_server_everythings_task_tool_runs(k: KernelProcess) -> None:
    if not EVERYTHING.exists():
        pytest.skip("server-everything is not installed (run scripts/bootstrap.sh --test)")
    code = f"await api.connect('everything', {{command: {json.dumps(str(EVERYTHING))}}}); await mcp.everything.simulate_research_query({{topic: 'x'}})"
    try:
        text = k.run(code, timeout=90).result["text/plain"]
    finally:
        k.run("await api.disconnect('everything')")
    assert text.startswith("'# Research Report: x\\n")


def test_a_task_that_asks_is_answered_through_stdin(k: KernelProcess) -> None:
    """server-everything's ambiguous research task elicits on tasks/result (input_required); the person answers."""
    if not EVERYTHING.exists():
        pytest.skip("server-everything is not installed (run scripts/bootstrap.sh --test)")
    k.run(f"await api.connect('everything', {{command: {json.dumps(str(EVERYTHING))}}})", 60)
    try:
        code = "(await mcp.everything.simulate_research_query({topic: 'python', ambiguous: true}, {timeout: 60})).split('\\n')[0]"
        _, outputs, prompts = run_answering(k, code, ["y", "snake"])
    finally:
        k.run("await api.disconnect('everything')")
    assert prompts == [
        'Answer "everything"? [y]es / [n]o (decline) / [c]ancel: ',
        "interpretation (one of: programming = Python programming language, snake = Python snake species, "
        "comedy = Monty Python comedy group, required): ",
    ]
    assert value(outputs) == "'# Research Report: python (snake)'"


# ---- roots, log level, subscriptions, cancellation ------------------------------------------------


def test_roots_are_the_configured_folders_and_can_change(setup: tuple[KernelProcess, Recorded, Path]) -> None:
    k, rec, cwd = setup
    assert k.json("await mcp.p.roots()") == {"roots": [{"uri": cwd.as_uri(), "name": cwd.name}]}  # "roots": ["."]
    assert k.json("await api.setRoots('p', ['data'])") == {"server": "p", "roots": [str(cwd / "data")]}
    assert rec.wait_for("notifications/roots/list_changed")[-1] == {"event": "notifications/roots/list_changed"}
    assert k.json("await mcp.p.roots()") == {"roots": [{"uri": (cwd / "data").as_uri(), "name": "data"}]}
    for server in ("quiet", "never"):  # "roots": false, and no "roots" at all
        cell = k.run(f"await api.setRoots('{server}', ['data'])")
        assert cell.error["evalue"] == (
            f'server "{server}" was started without roots (its config lists none), so it was told this client has no roots; '
            'to offer folders, list them in its "roots" in the config'
        )
    k.run("await api.setRoots('p', ['.'])")


def test_server_filesystem_works_in_the_roots_it_is_given(setup: tuple[KernelProcess, Recorded, Path]) -> None:
    """server-filesystem started without folders asks the client for its roots (after start, and on list_changed)."""
    k, _, cwd = setup
    if not FILESYSTEM.exists():
        pytest.skip("server-filesystem is not installed (run scripts/bootstrap.sh --test)")
    (cwd / "data").mkdir(exist_ok=True)

    def allowed_once_it_is(folder: Path) -> str:
        # the server asks for roots on its own schedule: wait until the answer is there (bounded)
        wanted = json.dumps(f"Allowed directories:\n{folder}")
        k.run(f"for (let i = 0; i < 100 && (await mcp.fs.list_allowed_directories()).content !== {wanted}; i++) await sleep(100)", 60)
        return k.value("(await mcp.fs.list_allowed_directories()).content")

    k.run(f"await api.connect('fs', {{command: {json.dumps(str(FILESYSTEM))}, roots: ['.']}})", 60)
    try:
        assert allowed_once_it_is(cwd) == repr(f"Allowed directories:\n{cwd}")
        k.run("await api.setRoots('fs', ['data'])")
        assert allowed_once_it_is(cwd / "data") == repr(f"Allowed directories:\n{cwd / 'data'}")
        assert k.value(f"await mcp.fs.write_file({{path: {json.dumps(str(cwd / 'data' / 'a.txt'))}, content: 'hi'}}), 'ok'") == "'ok'"
    finally:
        k.run("await api.disconnect('fs')")


def test_a_server_keeps_the_folders_it_was_configured_with(setup: tuple[KernelProcess, Recorded, Path]) -> None:
    """Regression: the kernel offered its working folder as the root of every server, and
    server-filesystem replaces its configured folders by the client's roots (asked for after
    initialize): configured with data/, it could read the whole working folder (session files and
    their keys) a second later. Without "roots" in its config a server is offered none."""
    k, _, cwd = setup
    if not FILESYSTEM.exists():
        pytest.skip("server-filesystem is not installed (run scripts/bootstrap.sh --test)")
    # server-filesystem asks for roots on its own schedule (~1.5 s after start here): watch for several seconds
    code = (
        "const seen = new Set(); const until = Date.now() + 5000;\n"
        "while (Date.now() < until) { seen.add((await mcp.scoped.list_allowed_directories({})).content); await sleep(100) }\n"
        "[...seen]"
    )
    assert k.json(code, 60) == [f"Allowed directories:\n{cwd / 'data'}"]
    cell = k.run("await mcp.scoped.read_text_file({path: 'outside.txt'})")
    assert cell.error is not None and cell.error["ename"] == "ToolError", cell.outputs
    assert "outside.txt" in cell.error["evalue"] and "the kernel's folder" not in cell.error["evalue"]
    cell = k.run(f"await mcp.scoped.read_text_file({{path: {json.dumps(str(cwd / 'outside.txt'))}}})")
    assert cell.error is not None and "Access denied" in cell.error["evalue"], cell.outputs


def test_log_level_from_the_config_and_from_a_cell(k: KernelProcess, rec: Recorded) -> None:
    assert rec.events("logging/setLevel")[0] == {"event": "logging/setLevel", "level": "warning"}
    assert k.json("await api.setLogLevel('p', 'debug')") == {"server": "p", "level": "debug"}
    assert rec.events("logging/setLevel")[-1] == {"event": "logging/setLevel", "level": "debug"}
    cell = k.run("await api.setLogLevel('p', 'loud')")
    assert cell.error["evalue"] == "api.setLogLevel: the level must be one of debug, info, notice, warning, error, critical, alert, emergency, got 'loud'"


def test_a_subscription_runs_its_callback_on_update(k: KernelProcess, rec: Recorded) -> None:
    k.run("globalThis.updates = []; sub = await mcp.p.resources.subscribe('memo://note', (e) => updates.push(e))")
    assert rec.wait_for("resources/subscribe")[-1] == {"event": "resources/subscribe", "uri": "memo://note"}
    k.run("await mcp.p.touch({uri: 'memo://note'}); await mcp.p.touch({uri: 'memo://other'})")
    # the callback runs when the engine is free: between cells too; wait for it in a cell
    k.run("for (let i = 0; i < 200 && !updates.length; i++) await sleep(50)", 30)
    assert k.json("updates") == [{"server": "p", "uri": "memo://note"}]
    assert k.value("await sub.unsubscribe()") == "true"
    assert rec.wait_for("resources/unsubscribe")[-1] == {"event": "resources/unsubscribe", "uri": "memo://note"}
    k.run("await mcp.p.touch({uri: 'memo://note'}); await sleep(300)")
    assert k.value("updates.length") == "1"


def test_cancellation_reaches_the_server(k: KernelProcess, rec: Recorded) -> None:
    # counted from what the module's earlier tests left (an interrupted form is cancelled too)
    waits, cancels = len(rec.events("waiting")), len(rec.events("notifications/cancelled"))
    cell = k.run("await mcp.p.wait({}, {timeout: 1})")
    assert cell.error["evalue"] == "no answer within 1 s (set by this call's {timeout: 1})"
    waited = rec.wait_for("waiting", waits + 1)[-1]
    cancelled = rec.wait_for("notifications/cancelled", cancels + 1)[-1]
    assert cancelled == {"event": "notifications/cancelled", "requestId": waited["id"], "reason": "timed out after 1s"}
    msg_id = k.kc.execute("await mcp.p.wait()")
    waited = rec.wait_for("waiting", waits + 2)[-1]
    k.km.interrupt_kernel()
    assert k.reply(msg_id, 60)["ename"] == "InterruptError"
    cancelled = rec.wait_for("notifications/cancelled", cancels + 2)[-1]
    assert cancelled == {"event": "notifications/cancelled", "requestId": waited["id"], "reason": "caller cancelled"}
