"""Tool discovery as users meet it in Jupyter: completion, inspection and the api.* functions."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from conftest import ECHO, KernelProcess


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    cwd = tmp_path_factory.mktemp("disc")
    config = {
        "mcpServers": {
            "demo": {"command": sys.executable, "args": ["-m", "mcp_kernel.demo.server"]},
            "echo": {"command": sys.executable, "args": [str(ECHO)]},
        }
    }
    (cwd / "mcp.json").write_text(json.dumps(config))
    kernel = KernelProcess(cwd)
    kernel.value("await api.servers({ wait: true }); 1")
    yield kernel
    kernel.kc.stop_channels()
    kernel.km.shutdown_kernel(now=True)


def test_completion_of_servers_tools_and_api(k: KernelProcess) -> None:
    reply = k.complete("mcp.")
    assert reply["matches"] == ["call", "demo", "echo", "servers", "tools"]
    reply = k.complete("mcp.demo.get_")
    assert reply["matches"] == ["get_author", "get_book"]
    types = reply["metadata"]["_jupyter_types_experimental"]
    assert types[1] == {
        "start": len("mcp.demo."),
        "end": len("mcp.demo.get_"),
        "text": "get_book",
        "type": "function",
        "signature": "get_book(args: { book_id: string }): Promise<Book>",
    }
    assert k.complete("tools.get_w")["matches"] == ["get_weather_v2"]
    assert k.complete('mcp.tools["echo.ad')["matches"] == ["echo.add"]
    api_names = k.complete("api.")["matches"]
    for name in ("searchTools", "library", "describeTool", "listTools", "guide", "callTool", "servers", "display"):
        assert name in api_names
    assert "hasOwnProperty" not in api_names


def test_completion_of_argument_names(k: KernelProcess) -> None:
    reply = k.complete("await tools.search_books({ query: 'x', ")
    assert reply["matches"] == ["genre", "limit"]
    sigs = [t["signature"] for t in reply["metadata"]["_jupyter_types_experimental"]]
    assert sigs[1] == "limit?: number"
    assert k.complete("await mcp.echo.add({ b")["matches"] == ["b"]


def test_inspect_shows_generated_doc(k: KernelProcess) -> None:
    reply = k.inspect("tools.get_book", 8)
    assert reply["found"] is True
    plain = reply["data"]["text/plain"]
    assert plain.startswith('mcp.demo.get_book — tool "get_book" on server "demo"')
    assert "async function get_book(args: {\n  book_id: string;\n}): Promise<{" in plain
    assert '// Example: await mcp.demo.get_book({ book_id: "example" })' in plain
    assert reply["data"]["text/markdown"].startswith("**mcp.demo.get_book** — tool `get_book` on server `demo`")
    inside = k.inspect("await mcp.echo.add({ a: 1, ")
    assert "async function add(" in inside["data"]["text/plain"]


def test_search_library_describe_list_guide(k: KernelProcess) -> None:
    top = k.json("({ v: (await api.searchTools('serch boks', { limit: 2 })).results.map(r => r.name) })")["v"]
    assert top[0] == "search_books"
    page = k.json("({ v: await api.searchTools('book', { limit: 2, offset: 2 }) })")["v"]
    assert page["query"] == "book" and len(page["results"]) == 2 and page["nextOffset"] in (4, None)
    empty = k.json("({ v: await api.searchTools('xyzzy') })")["v"]
    assert empty["results"] == [] and empty["note"].startswith('No tool matches "xyzzy" (searched')
    doc = k.json("({ v: (await api.library('sales report', { limit: 1 }))[0] })")["v"]
    assert "async function sales_report(args?: {" in doc
    assert "// Example: await mcp.demo.sales_report()" in doc
    described = k.json("await tools.get_book({ book_id: 'b02' }); ({ v: await api.describeTool('demo', 'get_book') })")["v"]
    assert described["annotations"]["readOnly"] is True
    assert described["example"] == 'await mcp.demo.get_book({ book_id: "example" })'
    assert described["observedOutput"]["source"] == "structuredContent"
    assert described["observedOutput"]["shape"].startswith("{ id: string; title: string;")
    listing = k.json("({ v: await api.listTools({ server: 'echo' }) })")["v"]
    assert {t["name"] for t in listing} >= {"echo", "add", "get-weather.v2", "delete"}
    assert "inputSchema" not in listing[0]
    topics = k.json("({ v: (await api.guide('save a big result to a file')).map(g => g.topic) })")["v"]
    assert topics[0] == "artifacts"


def test_example_calls_pass_validation(k: KernelProcess) -> None:
    calls = k.json("({ v: (await api.listTools({ server: 'demo' })).map(t => t.name) })")["v"]
    for name in calls:
        example = k.json(f"({{ v: (await api.describeTool('demo', {json.dumps(name)})).example }})")["v"]
        assert example.startswith(f"await mcp.demo.{name}(")
    # the generated example of a tool with required arguments runs through argument checks
    assert k.value("const r = await tools.call('get_author', { name_or_id: 'example' }); r.ok || r.error.code") == "'tool_error'"


def test_empty_answers_say_what_was_searched(k: KernelProcess) -> None:
    tools = k.json("({ v: (await api.listTools()).length })")["v"]
    servers = ", ".join(k.json("[...new Set((await api.listTools()).map((t) => t.server))]"))
    cell = k.run("await api.library('nonexistentzzz')")
    assert cell.text == "[]"  # still the documented string[]; the why is on stderr
    assert cell.stderr == (
        f'[mcp2repl] api.library: No tool matches "nonexistentzzz" (searched {tools} tools on 2 servers: {servers}). '
        "Try fewer or different words, or api.listTools().\n"
    )
    assert k.run("(await api.library('serch boks', { limit: 1 })).length").stderr == (
        "[mcp2repl] api.library: Matched similar words: serch → search, boks → book.\n"
    )
    assert k.json("({ v: (await api.guide('progress')).map(g => g.topic) })")["v"][0] == "progress"
    cell = k.run("await api.guide('xyzzy')")
    assert cell.text == "[]"
    assert cell.stderr == (
        '[mcp2repl] api.guide: No guidance matches "xyzzy" (searched 25 topics: titles, keywords and texts). Topics: calling '
        "tools, argument checks, results, errors, agent steps, agent commands, reading errors, loading helpers, concurrency, "
        "timeouts, interrupts, printing, artifacts, display, discovery, servers, login, resources and prompts, approvals, server questions, "
        "task tools, roots and log level, persistence, timers, "
        'progress. To find tools, use api.searchTools("xyzzy").\n'
    )
    assert k.run("(await api.guide('xyzzy')).length + (await api.library('nonexistentzzz')).length").text == "0"
