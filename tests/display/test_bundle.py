"""How cell results look, through a whole Session in-process: a value's own bundle, rich content, fitting."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SessionHarness


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    harness = SessionHarness(tmp_path_factory.mktemp("bundle"), {"mcpServers": {}}, max_output_chars=2000)
    yield harness
    harness.close()


def test_custom_display_protocol(s: SessionHarness) -> None:
    result, _ = s.run("({ [Symbol.for('Jupyter.display')]() { return {'text/html': '<b>hi</b>'} } })")
    assert result.data["text/html"] == "<b>hi</b>"
    assert "text/plain" in result.data


def test_a_value_can_choose_to_show_nothing(s: SessionHarness) -> None:
    result, _ = s.run("({ [Symbol.for('Jupyter.display')]() { return null } })")
    assert result.error is None and result.data is None


def test_records_get_a_table_and_keep_their_json(s: SessionHarness) -> None:
    result, _ = s.run("[{ id: 'a', n: 1 }, { id: 'b', n: 2 }]")
    assert result.data["application/json"] == [{"id": "a", "n": 1}, {"id": "b", "n": 2}]
    assert result.data["text/html"].startswith('<table class="mcp2repl-table">')


def test_results_over_the_limit_are_fitted_and_saved(s: SessionHarness, tmp_path: Path) -> None:
    result, _ = s.run("Array.from({ length: 500 }, (_, i) => ({ i, text: 'word '.repeat(10) }))")
    text = result.data["text/plain"]
    assert "full value: artifact result-cell" in text
    name = text.split("full value: artifact ")[1].split(" ")[0]
    saved = json.loads((s.session.artifacts.root / name).read_text())
    assert len(saved) == 500 and saved[499]["i"] == 499
    assert len(json.dumps(result.data)) < 2000 * 4


def test_emit_output_comes_before_the_result(s: SessionHarness) -> None:
    result, out = s.run("emit({ first: true }); await sleep(5); 'second'")
    assert [d[0].get("application/json") for d in out.displays] == [{"first": True}]
    assert result.data["text/plain"] == "'second'"


def test_a_value_too_deep_for_json_is_one_clear_type_error(s: SessionHarness) -> None:
    # its JSON went into the bundle as text, past the bundle's own depth check, and Python could not read it
    s.run("let deep = []; for (let i = 0; i < 1500; i++) deep = [deep]")
    for code in ("api.json(deep)", "api.display(deep, { mime: 'application/vnd.x+json' })"):
        result, out = s.run(code)
        assert result.error is not None and result.error.name == "TypeError", (code, result)
        mime = "application/json" if code.startswith("api.json") else "application/vnd.x+json"
        assert result.error.message == f"Cannot display a value nested more than 200 levels deep as {mime}; show a part of it, or its text with api.display(value)"
        assert out.displays == []
    result, out = s.run("api.display(deep); api.json([[{ a: 1 }]]); 'ok'")  # as text it shows; shallow JSON too
    assert result.data["text/plain"] == "'ok'" and len(out.displays) == 2
