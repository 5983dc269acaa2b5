"""api.load, api.evalTool and the mcp-scripting skill's tools.search / tools.describe / tools.call, in a real Session."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator

import pytest
from conftest import SERVERS, SessionHarness

from mcp_kernel.servers.spec import ServerSpec
from mcp_kernel.servers.touched import touched


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    cwd = tmp_path_factory.mktemp("agent")
    (cwd / "lib").mkdir()
    (cwd / "lib" / "helpers.js").write_text("const base = 10;\nfunction add(a, b) { return a + b + base; }\nglobalThis.ns = { f: () => 1, deep: { g: () => 2 } };\n")
    (cwd / "data.txt").write_text("x")
    (cwd / "outside.js").write_text("1")
    os.symlink("/etc/hostname", cwd / "link.js")
    config = {
        "mcpServers": {
            "page": {"command": sys.executable, "args": [str(SERVERS / "eval_server.py")]},
            "demo": {"command": sys.executable, "args": ["-m", "mcp_kernel.demo.server"]},
        }
    }
    harness = SessionHarness(cwd, config)
    yield harness
    harness.close()


def test_load_evaluates_a_file_like_a_cell_and_returns_a_manifest(s: SessionHarness) -> None:
    text = (s.session.options.cwd / "lib" / "helpers.js").read_bytes()
    assert s.json("await api.load('lib/helpers.js')") == {
        "loaded": str(s.session.options.cwd.resolve() / "lib" / "helpers.js"),
        "digest": "sha256:" + hashlib.sha256(text).hexdigest(),
        "exports": ["add", "ns.deep.g", "ns.f"],
        "topLevel": ["add", "base", "ns"],
    }
    assert s.value("add(1, 2) + ns.deep.g()") == "15"
    assert s.value("(await api.load('lib/helpers.js')).topLevel.length") == "3"  # loading again works, like re-running a cell


@pytest.mark.parametrize(
    ("path", "name", "why"),
    [
        ("../x.js", "PermissionError", "'..' is not allowed"),
        ("lib/../../x.js", "PermissionError", "'..' is not allowed"),
        ("/etc/passwd.js", "PermissionError", "give a path relative to it, not an absolute one"),
        ("~/x.js", "PermissionError", "give a path relative to it, not an absolute one"),
        ("data.txt", "PermissionError", "this is not a .js file"),
        ("link.js", "PermissionError", "it is a link to /etc/hostname, outside"),
    ],
)
def test_load_refuses_escapes(s: SessionHarness, path: str, name: str, why: str) -> None:
    result, _ = s.run(f"await api.load({path!r})")
    cwd = s.session.options.cwd
    assert (result.error.name, result.error.message) == (name, f"api.load({path!r}): only .js files under the working directory ({cwd}) can be loaded; {why}".replace("'", '"', 2))


def test_load_missing_and_broken_files(s: SessionHarness) -> None:
    result, _ = s.run("await api.load('nope.js')")
    assert (result.error.name, result.error.message) == ("Error", f'api.load("nope.js"): no such file: {s.session.options.cwd.resolve()}/nope.js')
    (s.session.options.cwd / "bad.js").write_text("const = 1\n")
    result, _ = s.run("await api.load('bad.js')")
    assert (result.error.name, result.error.message) == ("SyntaxError", f"Unexpected token ({s.session.options.cwd.resolve()}/bad.js line 1, col 1)")


def test_eval_tool_sends_a_function_with_its_args_to_an_eval_style_tool(s: SessionHarness) -> None:
    code = "await api.evalTool('evaluate_script', (a) => { let t = ''; for (const w of a.words) t += w; return { title: document.title, t } }, { words: ['a', 'b'] })"
    assert s.json(code) == {"title": "Fixture page", "t": "ab"}
    assert s.value("await api.evalTool('', () => location.href)") == "'https://example.test/'"  # found by search
    result, _ = s.run("await api.evalTool('page.evaluate_script', () => { throw new Error('nope') })")
    assert (result.error.name, result.error.message.splitlines()[0]) == ("ToolError", "the script failed: <anonymous>:3: Error: nope")
    assert result.error.traceback[0] == "ToolError: page.evaluate_script: the script failed: <anonymous>:3: Error: nope"
    result, _ = s.run("await api.evalTool('take_snapshot', () => 1)")
    assert result.error.message == "api.evalTool: page.take_snapshot has no string parameter for code (function, script, code, javascript, js, expression, source); its parameters: none"
    result, _ = s.run("await api.evalTool('run_query', () => 1)")
    assert result.error.message.startswith('mcp.page.run_query: missing required argument "database"')
    result, _ = s.run("await api.evalTool('evaluate_script', () => 1, { n: 1n })")
    assert result.error.message == "api.evalTool(page.evaluate_script): args must be JSON-serialisable (Do not know how to serialize a BigInt)"


def test_skill_contract_search_describe_call(s: SessionHarness) -> None:
    found = s.json("await tools.search({ query: 'book by id', server: 'demo', limit: 1 })")
    assert found == {
        "items": [{"path": "demo.get_book", "server": "demo", "name": "get_book", "description": "Return the full record of one book, including units sold per year."}],
        "total": found["total"],
        "hasMore": True,
        "nextOffset": 1,
    }
    assert s.json("await tools.describe({ path: 'page.navigate_page' })") == {
        "path": "page.navigate_page",
        "inputTypeScript": "{ url: string }",
        "inputGuidance": "args.url: URL to open in the page.",
        "observedOutput": None,
    }
    called = s.json("await tools.call('demo.get_book', { book_id: 'b01' })")
    assert called["ok"] is True and called["data"]["structuredContent"]["title"] == "The Lantern Cartographer"
    assert called["data"]["content"][0]["type"] == "text"
    described = s.json("await tools.describe({ path: 'demo.get_book' })")
    assert described["observedOutput"]["target"] == "data.structuredContent"
    assert described["observedOutput"]["typeScript"].startswith("{ id: string; title: string;")
    assert s.json("await tools.call('demo.get_book', { book_id: 'zz' })") == {
        "ok": False,
        "error": {"code": "tool_error", "message": "Unknown book id 'zz'. Ids run from 'b01' to 'b40'; use search_books to find one."},
    }
    result, _ = s.run("await tools.describe({ path: 'demo.nope' })")
    assert result.error.name == "TypeError" and "nope" in result.error.message
    # written for the skill, unchanged
    skill = """
const found = await tools.search({ query: "search books", server: "demo" });
const path = found.items[0]?.path;
if (!path) return { error: "No matching tool" };
const result = await tools.call(path, { query: "dragon" });
if (!result.ok) return result;
const books = result.data.structuredContent ?? JSON.parse(result.data.content[0].text);
return books.results.filter((b) => b.rating >= 4).map((b) => b.id).length > 0;
"""
    assert s.value(skill) == "true"


def test_one_shot_server_selection() -> None:
    a, b = (ServerSpec(name=n, transport="stdio", command="x") for n in ("a", "my-srv"))
    assert touched("1 + 1", [a, b]) == []
    assert touched("api.print({x: 1})", [a, b]) == []
    assert touched("await mcp.a.add({})", [a, b]) == [a]
    assert touched("await mcp.my_srv.x(); api.callTool('my-srv', 't')", [a, b]) == [b]
    assert touched("await tools.add({})", [a, b]) == [a, b]
    assert touched("Object.keys(mcp)", [a, b]) == [a, b]
    assert touched("await mcp.a.x(); await api.searchTools('q')", [a, b]) == [a, b]
    assert touched("await api.evalTool('e', () => 1)", [a, b]) == [a, b]
