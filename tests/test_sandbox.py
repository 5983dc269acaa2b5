"""What a cell can reach: by default only the servers a config defines, and never files or the
environment through substitutions. Through a whole Session in-process, with real servers.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from conftest import ECHO, SessionHarness

SECRET = "s3cr3t-" + uuid.uuid4().hex[:8]


def children_with(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            line = " ".join(proc.cmdline())
            if marker in line and "guard.py" not in line:  # the server itself, not the launcher
                found.append(proc)
        except psutil.Error:
            continue
    return found


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    cwd = tmp_path_factory.mktemp("sandbox")
    config = {
        "mcpServers": {
            "echo": {"command": sys.executable, "args": [ECHO]},
            "spare": {"command": sys.executable, "args": [ECHO, "--host", "spare-mark"], "disabled": True},
        }
    }
    harness = SessionHarness(cwd, config)
    yield harness
    harness.close()


def test_a_cell_cannot_start_a_program(s: SessionHarness, tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    result, _ = s.run(f"await api.connect('x', {{ command: 'sh', args: ['-c', 'id > {target}'] }})")
    assert result.error.name == "PermissionError"
    assert result.error.message == (
        'api.connect("x", spec): cells may only (re)connect servers that the config defines (echo, spare), as api.connect("NAME"). '
        f'To add "x", define it in {s.session.options.cwd / "mcp.json"}; to let cells start any server, set "allow_connect": "any" '
        "in the config or MCP2REPL_ALLOW_CONNECT=any, which gives up the sandbox."
    )
    assert not target.exists()


def test_a_cell_cannot_reach_a_url_of_its_choosing(s: SessionHarness) -> None:
    result, _ = s.run("await api.connect('s', { url: 'http://127.0.0.1:9/mcp', headers: { 'X-Exfil': '${HOME}' } })")
    assert result.error.name == "PermissionError"
    assert [r.name for r in s.session.servers.loaded.rows()] == ["echo", "spare"] or "s" not in s.session.servers.loaded.connections


def test_configured_servers_can_be_connected_even_when_disabled(s: SessionHarness) -> None:
    assert s.value("(await api.connect('spare')).state") == "'ready'"
    assert len(children_with("spare-mark")) == 1
    assert s.value("await mcp.spare.add({ a: 1, b: 1 })") == "{ sum: 2 }"
    s.run("await api.disconnect('spare')")
    result, _ = s.run("await api.connect('nope')")
    assert (result.error.name, result.error.message) == (
        "TypeError",
        f'api.connect("nope"): the config ({s.session.options.cwd / "mcp.json"}) defines no server "nope"; it defines: echo, spare',
    )


def test_with_allow_connect_any_cell_specs_are_taken_literally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP2REPL_SANDBOX_SECRET", SECRET)
    (tmp_path / "secret.txt").write_text(SECRET)
    harness = SessionHarness(tmp_path, {"allow_connect": "any", "mcpServers": {}})
    try:
        marker = uuid.uuid4().hex
        code = (
            f"await api.connect('lit', {{ command: {json.dumps(sys.executable)}, args: [{json.dumps(ECHO)}, '--host', '{marker}'], "
            "env: { A: '${MCP2REPL_SANDBOX_SECRET}', B: '{file:secret.txt}' } }); 1"
        )
        assert harness.value(code) == "1"
        [proc] = children_with(marker)
        assert (proc.environ()["A"], proc.environ()["B"]) == ("${MCP2REPL_SANDBOX_SECRET}", "{file:secret.txt}")
        result, out = harness.run("await api.connect('cat', { command: '{file:secret.txt}' })")
        assert result.error is not None and SECRET not in result.error.message and SECRET not in out.text("stderr")
        assert "command not found: {file:secret.txt}" in result.error.message or "{file:secret.txt}" in result.error.message
    finally:
        harness.close()


def test_artifacts_cannot_become_a_config(tmp_path: Path) -> None:
    harness = SessionHarness(tmp_path, {"mcpServers": {}}, artifact_dir=tmp_path)
    try:
        result, _ = harness.run("await api.saveArtifact('mcp.json', { mcpServers: { x: { command: 'sh' } } })")
        assert result.error.name == "ArtifactError"
        assert "config file" in result.error.message
        assert json.loads((tmp_path / "mcp.json").read_text()) == {"mcpServers": {}}
    finally:
        harness.close()
