"""api.load, api.evalTool and the mcp-scripting skill's tools.search / tools.describe / tools.call, in a real Session."""

from __future__ import annotations

import hashlib
import json
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
        "loaded": "lib/helpers.js",  # as the cell named it: no host path
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
        ("link.js", "PermissionError", "it is a link to a file outside it"),
    ],
)
def test_load_refuses_escapes(s: SessionHarness, path: str, name: str, why: str) -> None:
    result, _ = s.run(f"await api.load({path!r})")
    assert (result.error.name, result.error.message) == (name, f"api.load({path!r}): only .js files under the working directory can be loaded; {why}".replace("'", '"', 2))
    assert str(s.session.options.cwd) not in result.error.message and "/etc" not in result.error.message.split(": ", 1)[1]


def test_load_missing_and_broken_files(s: SessionHarness) -> None:
    result, _ = s.run("await api.load('nope.js')")
    assert (result.error.name, result.error.message) == ("Error", 'api.load("nope.js"): no such file in the working directory')
    (s.session.options.cwd / "bad.js").write_text("const = 1\n")
    result, _ = s.run("await api.load('bad.js')")
    assert (result.error.name, result.error.message) == ("SyntaxError", "Unexpected token (bad.js line 1, col 1)")
    (s.session.options.cwd / "lib" / "bad.js").write_text("let x = ;\n")
    result, _ = s.run("await api.load('./lib/bad.js')")
    assert (result.error.name, result.error.message) == ("SyntaxError", "Unexpected token (./lib/bad.js line 1, col 7)")
    assert str(s.session.options.cwd) not in "\n".join(result.error.traceback)


@pytest.mark.parametrize("path", ["a\0.js", "lib/\u0007.js", "a\nb.js"])
def test_load_of_a_path_with_control_characters_is_one_clear_error(s: SessionHarness, path: str) -> None:
    result, _ = s.run(f"await api.load({path!r})")
    assert result.error.name == "TypeError", result.error
    control = ord(next(c for c in path if c < " "))
    assert result.error.message.endswith(f"the path contains a control character (U+{control:04X}); give the plain path of a .js file")
    assert "ValueError" not in "\n".join(result.error.traceback)


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
    assert result.error.message == (
        'api.evalTool(page.run_query): the tool also requires "database"; give the tool\'s other arguments after the function\'s args: '
        'api.evalTool("run_query", () => 1, undefined, { database: … })'
    )
    result, _ = s.run("await api.evalTool('evaluate_script', () => 1, { n: 1n })")
    assert result.error.message == "api.evalTool(page.evaluate_script): args must be JSON-serialisable (Do not know how to serialize a BigInt)"


FENCED = 'Script ran on page and returned:\n```json\n{"n":127}\n```'


def test_every_call_form_unwraps_fenced_json(s: SessionHarness) -> None:
    """Regression (issue 23, 15): only api.evalTool read Chrome DevTools' fenced JSON; mcp.call, api.unwrap and
    the other forms gave the wrapper text, and a page function returning nothing gave it too."""
    fn = "{ function: '() => ({ n: 127 })' }"
    forms = [
        f"mcp.call('evaluate_script', {fn})",
        f"mcp.page.evaluate_script({fn})",
        f"mcp.tools['page.evaluate_script']({fn})",
        f"tools.evaluate_script({fn})",
        f"api.callTool('page', 'evaluate_script', {fn})",
        f"mcp.call('evaluate_script', {fn}, {{ raw: true }}).then(api.unwrap)",
        f"tools.call('page.evaluate_script', {fn}).then((r) => api.unwrap(r.data))",
        "api.evalTool('evaluate_script', () => ({ n: 127 }))",
    ]
    assert s.json(f"[{', '.join(f'await {f}' for f in forms)}]") == [{"n": 127}] * len(forms)
    assert s.json(f"(await mcp.call('evaluate_script', {fn}, {{ raw: true }})).content") == [{"type": "text", "text": FENCED}]
    nothing = ["api.evalTool('evaluate_script', () => { document.title; })", "mcp.page.evaluate_script({ function: '() => undefined' })"]
    assert s.json(f"[{', '.join(f'typeof await {f}' for f in nothing)}]") == ["undefined", "undefined"]
    # where the skill's readers find the value in tools.call's raw data
    assert s.value("(await tools.describe({ path: 'page.evaluate_script' })).observedOutput.target") == "'api.unwrap(data)'"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (FENCED, {"n": 127}),
        ('```json\n[1, 2]\n```\n', [1, 2]),
        ('Returned:\r\n```json\r\n"a```b"\r\n```', "a```b"),
        ('Result:\n```json\n{\n  "pretty": true\n}\n```', {"pretty": True}),
        ('Script ran on page and returned:\n```json\n"{\\"a\\": 1}"\n```', '{"a": 1}'),  # a string stays a string
    ],
)
def test_a_text_of_one_fenced_json_block_is_its_json(s: SessionHarness, text: str, expected: object) -> None:
    assert s.json(f"[api.unwrap({json.dumps(text)}), api.unwrap({{ content: [{{ type: 'text', text: {json.dumps(text)} }}] }})]") == [expected] * 2


@pytest.mark.parametrize(
    "text",
    [
        "Two lines\nof prose:\n```json\n1\n```",  # more than one lead-in line
        "No colon here\n```json\n1\n```",  # a line that does not introduce the block
        "Returned:\n```json\n1\n```\nand more",
        "Returned:\n```json\n1\n```\n```json\n2\n```",
        "Returned:\n```js\n1\n```",
        "Returned:\n```json\nnot json\n```",
        "```json\n```",
        "Returned: ```json 1 ```",
    ],
)
def test_other_texts_with_fences_stay_text(s: SessionHarness, text: str) -> None:
    assert s.json(f"const t = {json.dumps(text)};\n[api.unwrap(t) === t, api.unwrap({{ content: [{{ type: 'text', text: t }}] }}) === t]") == [True, True]


def test_eval_tool_passes_the_tools_other_arguments(s: SessionHarness) -> None:
    """Regression (issue 23, 14): api.evalTool sent only the code, so a tool that needs more (Chrome DevTools'
    pageId) could not be used, and the error named an argument evalTool gave no way to pass."""
    assert s.value("await api.evalTool('evaluate_script', () => document.title, undefined, { pageId: 1 })") == "'Fixture page'"
    assert s.value("await api.evalTool('evaluate_script', (a) => a.n + 1, { n: 1 }, { pageId: 1 })") == "2"
    result, _ = s.run("await api.evalTool('evaluate_script', () => document.title, undefined, { pageId: 2 })")
    assert result.error.message == "No page found with ID 2"  # the tool got it
    assert s.value("(await api.evalTool('run_query', () => 1, null, { database: 'db' })).result.split('\\n')[0]") == "'db: (...__elements) => {'"
    result, _ = s.run("await api.evalTool('evaluate_script', () => 1, undefined, 5)")
    assert result.error.message == (
        "api.evalTool(page.evaluate_script, fn, args, toolArgs): toolArgs are the tool's other arguments, an object like { pageId: 1 }; got 5"
    )
    result, _ = s.run("await api.evalTool('evaluate_script', () => 1, undefined, { function: '() => 2' })")
    assert result.error.message == 'api.evalTool(page.evaluate_script): toolArgs cannot hold "function": api.evalTool sends the function there'


def test_eval_tool_says_the_function_runs_in_the_page(s: SessionHarness) -> None:
    """Regression (issue 23, 17): a function reading a kernel variable failed with the page's bare
    "here is not defined", nothing saying that it runs in the page and values go in through args."""
    hint = "\n  hint: the function runs in the page, not in the kernel, so it cannot see the kernel's here; pass values in through args: "
    result, _ = s.run("const here = 1;\nawait api.evalTool('evaluate_script', () => here + 1)")
    first, *_ = result.error.message.split("\n")
    assert first == "the script failed: <anonymous>:3: ReferenceError: here is not defined"  # the page's error, then its hint
    assert result.error.message.endswith(hint + 'api.evalTool("evaluate_script", ({ here }) => here + 1, { here })')
    assert s.value('await api.evalTool("evaluate_script", ({ here }) => here + 1, { here })') == "2"  # the call it shows works
    result, _ = s.run("await api.evalTool('evaluate_script', (a) => a.n + here, { n: 1 }, { pageId: 1 })")
    assert result.error.message.endswith(hint + 'api.evalTool("evaluate_script", (args) => … args.here …, { ...args, here }, { pageId: 1 })')
    result, _ = s.run("await api.evalTool('evaluate_script', () => document.here + missing)")
    assert result.error.message.endswith(hint.replace("here;", "missing;") + 'api.evalTool("evaluate_script", ({ missing }) => document.here + missing, { missing })')
    result, _ = s.run("await api.evalTool('evaluate_script', () => (0, eval)('nowh' + 'ere'))")  # the page's own code missed it
    assert "hint" not in result.error.message and "nowhere is not defined" in result.error.message


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
        "approval": "runs without asking: it may change or delete data (not marked read-only, so destructive by MCP's default) but \"confirm_destructive\" is off",
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


def test_load_of_a_big_or_deep_file_is_prepared_off_the_loop_like_a_cell(s: SessionHarness) -> None:
    cwd = s.session.options.cwd
    (cwd / "big.js").write_text("const bigData = [" + "1," * 1_000_000 + "];\n")  # 2 MB
    assert s.value("const loaded = await api.load('big.js'); [loaded.topLevel, bigData.length]") == "[ [ 'bigData' ], 1000000 ]"
    (cwd / "deep.js").write_text("const deep = " + "[" * 5000 + "]" * 5000 + ";\n")
    result, _ = s.run("await api.load('deep.js')")
    assert (result.error.name, result.error.message) == (
        "SyntaxError",
        "api.load: deep.js line 1: nested too deeply: 5,000 levels of brackets (limit 1,000). "
        "Build deep data at run time (JSON.parse of a string, or a loop) and split deep code into functions",
    )
    assert s.value("40 + 2") == "42"
