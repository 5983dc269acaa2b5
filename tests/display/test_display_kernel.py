"""Rich display, shaping, artifacts and the call trace, asserted on the messages a frontend gets."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EVERYTHING, KernelProcess


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    cwd = tmp_path_factory.mktemp("display")
    kernel = KernelProcess(cwd, MCP2REPL_MAX_OUTPUT_CHARS="3000", MCP2REPL_ARTIFACT_DIR=str(cwd / "artifacts"), MCP2REPL_ALLOW_CONNECT="any")
    kernel.run("await api.servers({ wait: true })")
    yield kernel
    kernel.close()


def test_image_tool_renders_as_image(k: KernelProcess) -> None:
    [out] = k.outputs("await tools.render_cover({ book_id: 'b07' })")
    assert out["type"] == "execute_result"
    assert set(out["data"]) == {"text/plain", "image/png"}
    assert out["data"]["text/plain"].startswith("<image/png image, ")
    import base64

    assert base64.b64decode(out["data"]["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"


def test_display_and_update_by_id(k: KernelProcess) -> None:
    outs = k.outputs(
        "const h = api.display({ step: 1 }); h.update({ step: 2 }); api.display('x', { display_id: h.display_id, update: true, mime: 'text/markdown' }); 1"
    )
    first, second, third, result = outs
    assert first["type"] == "display_data" and first["data"]["application/json"] == {"step": 1}
    display_id = first["transient"]["display_id"]
    assert second == {
        "type": "update_display_data",
        "data": {"text/plain": "{ step: 2 }", "application/json": {"step": 2}},
        "metadata": {},
        "transient": {"display_id": display_id},
    }
    assert third["data"] == {"text/markdown": "x", "text/plain": "<text/markdown>"}
    assert result["data"]["text/plain"] == "1"


def test_helpers_and_custom_display_protocol(k: KernelProcess) -> None:
    outs = k.outputs(
        "api.markdown('# Title'); api.svg('<svg xmlns=\"http://www.w3.org/2000/svg\"/>'); ({ [Symbol.for('Jupyter.display')]() { return { 'text/html': '<i>mine</i>' } } })"
    )
    assert outs[0]["data"]["text/markdown"] == "# Title"
    assert outs[1]["data"]["image/svg+xml"] == '<svg xmlns="http://www.w3.org/2000/svg"/>'
    assert outs[2]["data"]["text/html"] == "<i>mine</i>"


def test_print_records_table_json_and_html(k: KernelProcess) -> None:
    outs = k.outputs("await api.print([{ id: 'a', n: 1 }, { id: 'b', n: 2 }])")
    [out] = outs  # the envelope returned as the cell's result shows nothing more
    assert out["type"] == "display_data"
    assert out["data"]["text/plain"] == "id   n\n──────\na    1\nb    2"
    assert "application/json" not in out["data"]  # JupyterLab would prefer its JSON viewer to the table
    assert out["data"]["text/html"].startswith('<table class="mcp2repl-table"><thead><tr><th>id</th><th>n</th></tr>')
    [other] = k.outputs("await api.print({ id: 'a', tags: [1, 2] })")
    assert other["data"]["application/json"] == {"id": "a", "tags": [1, 2]}
    assert other["metadata"] == {"application/json": {"expanded": False}}


def test_print_cut_saves_artifact_and_view_is_reproducible(k: KernelProcess) -> None:
    code = (
        "const rows = Array.from({ length: 400 }, (_, i) => ({ i, text: 'word '.repeat(30) }));"
        "globalThis.env = await api.print(rows, { maxChars: 2000 });"
        "const again = await api.print(await api.readArtifact(env.artifact), { maxChars: 2000 });"
        "({ cut: env.cut, chars: env.chars <= 2000, same: JSON.stringify(again.value) === JSON.stringify(env.value), name: env.artifact.name })"
    )
    outs = k.outputs(code)
    result = outs[-1]["data"]["application/json"]
    assert result == {"cut": True, "chars": True, "same": True, "name": result["name"]}
    saved = json.loads((k.cwd / "artifacts" / result["name"]).read_text())
    assert len(saved) == 400 and saved[399]["i"] == 399
    view = outs[0]["data"]["text/plain"]
    assert f"full value: artifact {result['name']}" in view


def test_print_result_too_large_shape(k: KernelProcess) -> None:
    outs = k.outputs(
        "const e = await api.print({ big: 'x'.repeat(10000), n: 1 }, { maxChars: 100, fit: false }); ({ ok: e.ok, error: e.error, top: e.largeFields[0].path, hint: typeof e.hint.projection, art: !!e.artifact })"
    )
    assert outs[0]["data"]["text/plain"].startswith("ResultTooLarge: the value's JSON is 10016 chars; the limit is 100.")
    assert outs[-1]["data"]["application/json"] == {"ok": False, "error": "ResultTooLarge", "top": "big", "hint": "object", "art": True}


def test_large_cell_result_is_fitted_with_artifact(k: KernelProcess) -> None:
    [out] = k.outputs("Array.from({ length: 2000 }, (_, i) => ({ i, label: 'item ' + i }))")
    text = out["data"]["text/plain"]
    assert len(json.dumps(out["data"])) < 3000 * 3
    assert "full value: artifact result-cell" in text
    name = text.split("full value: artifact ")[1].split(" ")[0]
    assert len(json.loads((k.cwd / "artifacts" / name).read_text())) == 2000


def test_emit_comes_before_the_result(k: KernelProcess) -> None:
    outs = k.outputs("emit({ first: true }); await sleep(10); 'second'")
    assert [o["type"] for o in outs] == ["display_data", "execute_result"]
    assert outs[0]["data"]["application/json"] == {"first": True}


def test_artifact_card_renders(k: KernelProcess) -> None:
    [out] = k.outputs("await api.saveArtifact('notes.txt', 'hello')")
    assert out["data"]["text/plain"] == 'artifact notes.txt (5 B, text); read it with await api.readArtifact("notes.txt")'
    assert "<b>notes.txt</b> · 5 B · text" in out["data"]["text/html"]


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm test servers not installed (scripts/bootstrap.sh --test)")
def test_mcp_content_items_render_natively(k: KernelProcess) -> None:
    k.run(f"await api.connect('everything', {{ command: {json.dumps(str(EVERYTHING))} }})")
    [out] = k.outputs("await mcp.everything.get_resource_links({ count: 2 })")
    html = out["data"]["text/html"]
    assert html.count("<a href=") == 2
    [img] = k.outputs("(await mcp.everything.get_tiny_image({})).find(x => x.type === 'image')")
    assert "image/png" in img["data"]


def test_call_trace_display_and_reply_metadata(k: KernelProcess) -> None:
    cell = k.run("await tools.slow_inventory_check({ seconds: 1, steps: 4 }); await tools.list_genres(); (await api.calls()).map(c => c.tool)")
    outs, trace = cell.all, cell.traces
    assert trace[0]["type"] == "display_data"
    # nbclient-like clients read text/plain only: the live form carries it too
    assert trace[0]["data"]["text/plain"].startswith("⏳ 1 tool call, ")
    assert " · in flight: demo.slow_inventory_check" in trace[0]["data"]["text/plain"]
    assert "<progress" in "".join(o["data"]["text/html"] for o in trace)
    final = trace[-1]
    assert final["type"] == "update_display_data"
    assert final["data"]["text/plain"].startswith("✓ 2 tool calls, ")
    calls = cell.metadata["mcp2repl"]["calls"]
    assert [(c["server"], c["tool"], c["ok"]) for c in calls] == [("demo", "slow_inventory_check", True), ("demo", "list_genres", True)]
    assert calls[0]["ms"] >= 900 and calls[1]["bytesIn"] > 0
    assert outs[-1]["data"]["application/json"] == ["slow_inventory_check", "list_genres"]


def test_fast_cells_get_no_trace_display(k: KernelProcess) -> None:
    started = time.monotonic()
    outs = k.outputs("await tools.list_genres(); 1", keep_trace=True)
    assert time.monotonic() - started < 5
    assert [o["type"] for o in outs] == ["execute_result"]


def test_progress_can_be_switched_off(tmp_path: Path) -> None:
    kernel = KernelProcess(tmp_path, MCP2REPL_PROGRESS="off")
    try:
        kernel.run("await api.servers({ wait: true })")
        outs = kernel.outputs("await tools.slow_inventory_check({ seconds: 0.8, steps: 2 }); 1", keep_trace=True)
        assert [o["type"] for o in outs] == ["execute_result"]
    finally:
        kernel.close()


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm test servers not installed (scripts/bootstrap.sh --test)")
def test_elicitation_is_claimed_where_it_can_be_answered_and_sampling_is_not(k: KernelProcess) -> None:
    """Elicitation is advertised under the default policy ("ask": a person, or a clear decline when
    nobody can answer) and "defaults"; sampling, which the kernel can only decline, is not. Servers
    that check (server-everything does) offer or leave out the tools that need them accordingly."""
    asking = lambda names: sorted(n for n in names if n.startswith(("trigger_elicitation", "trigger_sampling", "trigger_url_elicitation")))  # noqa: E731
    k.run(f"await api.connect('everything', {{ command: {json.dumps(str(EVERYTHING))} }})")
    names = k.json("Object.keys(mcp.everything)")
    assert "echo" in names
    assert asking(names) == ["trigger_elicitation_request", "trigger_url_elicitation"]
    k.run(f"await api.connect('everything', {{ command: {json.dumps(str(EVERYTHING))}, elicitation: 'decline' }})")
    assert asking(k.json("Object.keys(mcp.everything)")) == []


def test_console_flood_is_cut_and_kept_as_an_artifact(tmp_path: Path) -> None:
    """Regression: with MCP2REPL_MAX_OUTPUT_CHARS=300, one log line sent 100,001 chars and 2,000 lines 18.9 KB."""
    kernel = KernelProcess(tmp_path, MCP2REPL_MAX_OUTPUT_CHARS="300", MCP2REPL_PROGRESS="off")
    try:
        cell = kernel.run('console.log("y".repeat(100000))')
        assert cell.stream("stdout") == "y" * 300 + "\n[mcp2repl] console output cut at 300 characters (MCP2REPL_MAX_CONSOLE_CHARS); the whole log is saved when the cell ends\n"
        assert cell.stderr == '[mcp2repl] whole console log (100,001 characters, 1 line): await api.readArtifact("console-cell1.txt")\n'
        assert kernel.value('(await api.readArtifact("console-cell1.txt")) === "y".repeat(100000) + "\\n"') == "true"
        cell = kernel.run('for (let i = 0; i < 2000; i++) console.log("line " + i)')
        shown = cell.stream("stdout")
        assert len(shown) < 450 and shown.startswith("line 0\nline 1\n") and "line 38" not in shown
        assert cell.stderr == '[mcp2repl] whole console log (18,890 characters, 2,000 lines): await api.readArtifact("console-cell3.txt")\n'
        # a separate budget when asked for
    finally:
        kernel.close()
    kernel = KernelProcess(tmp_path, MCP2REPL_MAX_OUTPUT_CHARS="300", MCP2REPL_MAX_CONSOLE_CHARS="1000", MCP2REPL_PROGRESS="off")
    try:
        cell = kernel.run('console.log("y".repeat(999)); console.error("e".repeat(5))')
        assert cell.stream("stdout") == "y" * 999 + "\n"
        assert cell.stderr == "[mcp2repl] console output cut at 1,000 characters (MCP2REPL_MAX_CONSOLE_CHARS); the whole log is saved when the cell ends\n" + (
            '[mcp2repl] whole console log (1,006 characters, 2 lines): await api.readArtifact("console-cell1-2.txt")\n'
        )
    finally:
        kernel.close()


def test_artifact_folder_cap_evicts_auto_saved_and_says_so(tmp_path: Path) -> None:
    """Regression: every cut api.print or result wrote its whole value, without bound."""
    kernel = KernelProcess(tmp_path, MCP2REPL_MAX_OUTPUT_CHARS="300", MCP2REPL_ARTIFACT_MAX_FILES="3", MCP2REPL_PROGRESS="off")
    try:
        assert kernel.value('(await api.saveArtifact("mine", {a: 1})).name') == "'mine.json'"
        for _ in (2, 3):
            assert kernel.run("api.print(Array.from({length: 500}, (_, i) => i))").stderr == ""
        cell = kernel.run("api.print(Array.from({length: 500}, (_, i) => i))")
        assert cell.stderr == "[mcp2repl] artifacts: removed 1 auto-saved artifact(s) (0.0 MB) to stay within the folder's cap: result-cell2.json\n"
        names = kernel.json("(await api.artifacts()).map(h => h.name).sort()")
        assert names == ["mine.json", "result-cell3.json", "result-cell4.json"]
        for n in range(2):
            kernel.run(f'(await api.saveArtifact("keep{n}", 1)).name')
        cell = kernel.run('(await api.saveArtifact("keep2", 1)).name')  # the user's own saves fill the cap: refused, nothing removed
        assert cell.error["ename"] == "ArtifactError" and "saved with api.saveArtifact, which are never removed automatically" in cell.error["evalue"]
        assert kernel.json("(await api.artifacts()).map(h => h.name).sort()") == ["keep0.json", "keep1.json", "mine.json"]
    finally:
        kernel.close()


def test_project_and_print_say_what_matched_nothing(k: KernelProcess) -> None:
    note = '[mcp2repl] api.project: $path "n.x" matched nothing: no key "n" at the top level; keys there: a, b, c\n'
    cell = k.run("const nx = { a: 1, b: 2, c: 3 }; api.project(nx, { $path: 'n.x' })")
    assert cell.reply["status"] == "ok"
    assert cell.outputs == [{"type": "stream", "name": "stderr", "text": note}]  # undefined: no result, one note
    cell = k.run("api.project(nx, { $path: 'n.x' }) ?? 'fallback'")  # the value stays what programs expect
    assert cell.outputs == [{"type": "stream", "name": "stderr", "text": note}, cell.outputs[1]] and cell.text == "'fallback'"
    cell = k.run("api.project([{ id: 1, title: 'a' }], { id: true, titel: true })")
    assert cell.stderr == '[mcp2repl] api.project: field "titel" matched nothing; keys there: id, title\n'
    assert cell.result["application/json"] == [{"id": 1}]
    cell = k.run("await api.print(nx, { projection: { $path: 'n' } }); 1")
    assert cell.stderr == '[mcp2repl] api.print: projection $path "n" matched nothing: no key "n" at the top level; keys there: a, b, c\n'
    assert k.value("api.project(nx, { $path: 'b' })") == "2"  # a match: the value alone, no note
