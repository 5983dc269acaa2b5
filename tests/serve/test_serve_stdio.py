"""``mcp2repl serve`` over stdio, through the Python SDK's ClientSession, with real servers behind it.

Each test is what an MCP client (Claude, Codex, VS Code…) does with the four tools: state that
persists, ``data`` beside the code, errors, time limits, cancellation, progress, images and
questions put to the client's person. Before this face existed ``mcp2repl serve`` was an unknown
option (exit 2), so every test here failed.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from conftest import ECHO
from serving import ServeClient, start_served, text, write_config


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeClient]:
    yield from start_served(tmp_path_factory)


def test_initialize_teaches_the_runtime_in_few_bytes(served: ServeClient) -> None:
    init = served.init
    assert init.server_info.name == "mcp2repl"
    assert "mcp.<server>.<tool>" in init.instructions and "api.readArtifact" in init.instructions
    assert len(init.instructions.encode()) < 1200
    tools = served.call(served.session.list_tools())
    assert [t.name for t in tools.tools] == ["run", "search_tools", "describe_tool", "list_servers"]
    assert tools.tools[0].input_schema["required"] == ["code"]


def test_state_persists_across_runs(served: ServeClient) -> None:
    first = served.run("const kept = { n: 41 }; function bump() { return ++kept.n; }; kept.n")
    assert (first.is_error, text(first)) == (False, "41")
    second = served.run("bump()")
    assert text(second) == "42"
    assert second.structured_content["value"] == 42 and second.structured_content["ok"] is True


def test_data_is_bound_for_its_step_only(served: ServeClient) -> None:
    given = {"ids": ["b01", "b02"], "note": 'quotes " and \\ stay data, never code'}
    result = served.run("({ n: data.ids.length, note: data.note })", data=given)
    assert result.structured_content["value"] == {"n": 2, "note": given["note"]}
    assert text(served.run("typeof data")) == '"undefined"'
    served.run("globalThis.data = 'mine'")
    assert text(served.run("data", data=[1, 2])) == "[1,2]"  # the value's JSON, compact
    assert text(served.run("data")) == '"mine"'  # the user's own global comes back


def test_a_thrown_error_is_an_error_result_with_the_js_error(served: ServeClient) -> None:
    result = served.run("const before = 1;\nnull.nope")
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["name"] == "TypeError"
    assert "Cannot read properties of null (reading 'nope')" in error["message"]
    assert text(result).startswith("TypeError: Cannot read properties of null (reading 'nope')")
    assert "line 2" in text(result) and "bridge.js" not in text(result)
    assert text(served.run("before")) == "1"  # the step's declarations before the throw are kept


def test_bad_arguments_are_refused_by_the_schema(served: ServeClient) -> None:
    result = served.tool("run", {"cod": "1"})
    assert (result.is_error, text(result)) == (True, "run: 'code' is a required property")
    result = served.tool("run", {"code": "1", "timeout_s": -1})
    assert result.is_error and "timeout_s" in text(result)


def test_a_runaway_loop_ends_at_timeout_s_and_state_is_kept(served: ServeClient) -> None:
    served.run("globalThis.survivor = 'still here'")
    started = time.monotonic()
    result = served.run("while (true) {}", timeout_s=1)
    assert time.monotonic() - started < 30
    assert result.is_error and result.structured_content["error"]["name"] == "TimeoutError"
    assert text(served.run("survivor")) == '"still here"'


def test_a_clients_cancel_interrupts_the_step(served: ServeClient) -> None:
    pending = served.start_marked("spinning", "globalThis.ticks = 0; while (true) { ticks++; if (ticks === 1) MARK; await sleep(5); }")  # marked once it spins
    assert not pending.done(), "the step ended before it was cancelled"
    pending.cancel()  # the SDK sends notifications/cancelled for the request
    # the next run waits for the interrupted step, then sees its state; its loop no longer runs
    after = served.run("const seen = ticks; await sleep(300); ({ ran: seen > 0, stopped: ticks === seen })", timeout=60)
    assert after.structured_content["value"] == {"ran": True, "stopped": True}, text(after)
    assert "Traceback" not in served.stderr()


def test_cancelling_a_queued_run_leaves_the_running_one_alone(served: ServeClient) -> None:
    running = served.start_marked("first-run", "globalThis.laps = 0; MARK; while (laps < 200) { laps++; await sleep(10); } 'first done'")
    queued = served.start("run", {"code": "globalThis.second_ran = true"})
    time.sleep(0.2)  # let the second request reach the server and queue behind the first
    queued.cancel()
    assert running.result(90).structured_content["value"] == "first done"  # not interrupted by the other request's cancel
    assert text(served.run("typeof second_ran")) == '"undefined"'


def test_progress_arrives_during_a_long_step(served: ServeClient) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    result = served.tool("run", {"code": "await mcp.demo.slow_inventory_check({ seconds: 3, steps: 6 }); 'checked'"}, progress=progress)
    assert text(result) == '"checked"', text(result)
    assert seen, "no notifications/progress during a 3 s step"
    assert [n for n, _, _ in seen] == sorted({n for n, _, _ in seen})  # strictly increasing
    assert any("demo.slow_inventory_check" in (m or "") for _, _, m in seen), seen


def test_an_image_tool_gives_image_content(served: ServeClient) -> None:
    result = served.run("await mcp.everything.get_tiny_image()")
    kinds = [c.type for c in result.content]
    assert kinds == ["text", "image"], kinds
    image = result.content[1]
    assert image.mime_type == "image/png" and len(image.data) > 1000
    assert "The image above is the MCP logo." in text(result)
    shown = served.run("api.png(new Uint8Array([137, 80, 78, 71]))")
    assert [c.type for c in shown.content] == ["text", "image"]
    assert shown.content[1].data == "iVBORw=="


def test_search_describe_and_list_servers(served: ServeClient) -> None:
    found = served.tool("search_tools", {"query": "knowledge graph entities", "limit": 3})
    paths = [i["path"] for i in found.structured_content["items"]]
    assert any(p.startswith("memory.") for p in paths), paths
    assert found.structured_content["total"] >= len(paths)
    described = served.tool("describe_tool", {"path": "memory.create_entities"})
    assert described.structured_content["path"] == "memory.create_entities"
    assert "entities" in described.structured_content["inputTypeScript"]
    assert text(described).startswith("memory.create_entities(args: {")
    missing = served.tool("describe_tool", {"path": "memory.nope"})
    assert missing.is_error and "nope" in text(missing)
    servers = served.tool("list_servers", {})
    rows = {r["name"]: r for r in servers.structured_content["servers"]}
    assert {"demo", "everything", "memory", "echo"} <= set(rows)
    assert rows["memory"]["state"] == "ready" and rows["memory"]["tools"] >= 9
    assert "memory (stdio): ready" in text(servers)


def test_tools_compose_inside_one_step(served: ServeClient) -> None:
    code = """
    await mcp.memory.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: ["wrote notes"] }] });
    const books = (await mcp.demo.search_books({ query: "dragon" })).results;
    const graph = await mcp.memory.read_graph({});
    ({ people: graph.entities.map((e) => e.name), books: books.length > 0 })
    """
    result = served.run(code)
    value = result.structured_content["value"]
    assert "Ada" in value["people"] and value["books"] is True, text(result)
    assert set(result.structured_content) == {"ok", "value"}  # the envelope of mcp2repl --json: no trace unless asked


def test_elicitation_reaches_the_client_whole(served: ServeClient) -> None:
    served.asked.clear()
    served.answers.append(types.ElicitResult(action="accept", content={"name": "Ada", "check": True, "email": "ada@example.com"}))
    result = served.run("await mcp.everything.trigger_elicitation_request({})")
    assert len(served.asked) == 1, "the upstream form must reach the client as one elicitation"
    asked = served.asked[0]
    assert asked.message.startswith('MCP server "everything" asks: ')
    assert {"name", "check", "email"} <= set(asked.requested_schema["properties"])
    assert "Ada" in text(result)


def test_the_approval_gate_asks_the_client(served: ServeClient) -> None:
    served.asked.clear()
    served.answers.append(types.ElicitResult(action="accept", content={"yes": True}))
    result = served.run("await mcp.echo.delete_({ key: 'k1' })")
    assert text(result) == '"deleted k1"', text(result)
    assert served.asked[0].message == 'Run echo.delete, which may change or delete data? (call 1 of it in this step)\n  key: "k1"'
    assert served.asked[0].requested_schema["properties"]["yes"]["type"] == "boolean"
    assert served.asked[0].requested_schema["properties"]["for"]["enum"] == ["this call", "all its calls in this step", "all its calls in this session"]
    served.answers.append(types.ElicitResult(action="decline"))
    refused = served.run("await mcp.echo.delete_({ key: 'k2' })")
    assert refused.is_error and refused.structured_content["error"]["message"] == "not run (declined at the prompt)"
    assert refused.structured_content["error"]["code"] == "declined"  # what a program branches on, as e.code in a cell


def test_without_elicitation_the_policy_applies(tmp_path: Path) -> None:
    write_config(tmp_path)
    client = ServeClient(tmp_path, "--server", "echo", elicitation=False)
    try:
        result = client.run("await mcp.echo.delete_({ key: 'k1' })")
        assert result.is_error and result.structured_content["error"]["message"].startswith("echo.delete may change or delete data")
        assert client.asked == []
    finally:
        client.close()


def test_stdout_carries_only_json_rpc(tmp_path: Path) -> None:
    write_config(tmp_path)
    wire = tmp_path / "stdout.bin"
    client = ServeClient(tmp_path, "--server", "echo", record=wire)
    try:
        result = client.run("console.log('printed by the cell'); console.error('to stderr'); await mcp.echo.stderr_noise({ text: 'server chatter' })")
        assert "printed by the cell" in text(result)
        assert client.run("api.print({ shown: true }); 1").is_error is False
    finally:
        client.close()
    lines = wire.read_bytes().splitlines()
    assert lines
    for line in lines:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0", line


def test_the_default_time_limit_comes_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    client = ServeClient(tmp_path, "--timeout", "1")
    try:
        result = client.run("while (true) {}")
        assert result.structured_content["error"]["name"] == "TimeoutError"
        assert text(client.run("await sleep(1500); 'timeout_s wins'", timeout_s=30)) == '"timeout_s wins"'
    finally:
        client.close()


def test_a_config_that_lists_mcp2repl_itself_does_not_recurse(tmp_path: Path) -> None:
    """Claude Code's project .mcp.json is also a file mcp2repl reads: an entry for mcp2repl serve in it
    must not start a second generation (and a third…), only say what to change."""
    from serving import MCP2REPL

    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"mcp2repl": {"command": MCP2REPL, "args": ["serve"]}}}))
    client = ServeClient(tmp_path)
    try:
        rows = client.tool("list_servers", {}, timeout=120).structured_content["servers"]
        (row,) = [r for r in rows if r["name"] == "mcp2repl"]
        assert row["state"] == "error"
        assert "started as an MCP server of another one" in row["lastError"] and "--config FILE" in row["lastError"]
    finally:
        client.close()


def test_the_documented_run_example_runs(served: ServeClient) -> None:
    """The `run` call shown in docs/serve.md and in the skill, as written there."""
    root = Path(__file__).resolve().parents[2]
    example = '{"name": "run", "arguments": {"code": "const r = await mcp.demo.get_book({ book_id: data.id }); r.title", "data": {"id": "b01"}}}'
    assert example in (root / "docs" / "serve.md").read_text()
    call = json.loads(example)
    result = served.tool(call["name"], call["arguments"])
    assert result.structured_content["value"] == "The Lantern Cartographer", text(result)
    skill = '{ "code": "await mcp.demo.get_book({ book_id: data.id })", "data": { "id": "b01" } }'
    assert skill in (root / "skills" / "mcp2repl" / "SKILL.md").read_text()
    assert served.tool("run", json.loads(skill)).structured_content["value"]["title"] == "The Lantern Cartographer"


def test_secrets_are_masked_in_results(tmp_path: Path) -> None:
    config = {"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO], "env": {"API_KEY": "s3cret-value-123"}}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    client = ServeClient(tmp_path)
    try:
        result = client.run("const t = await mcp.echo.echo({ text: 'key=s3cret-value-123' }); console.log(t); t")
        wire = json.dumps(result.model_dump(mode="json"))
        assert "s3cret-value-123" not in wire
        assert "[redacted]" in text(result)
    finally:
        client.close()
