"""Secrets from a config never leave the kernel: not in banners, server states, errors, output,
artifacts or the input history. A real Session (and one real kernel for the history file)."""

from __future__ import annotations

import json
import socket
import sqlite3
import stat
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ECHO, KernelProcess, SessionHarness

from mcp_kernel.kernel import history
from mcp_kernel.kernel.history import History
from mcp_kernel.servers.secrets import MASK, Redactor

TOKEN = "tok-" + uuid.uuid4().hex
FILE_TOKEN = "file-" + uuid.uuid4().hex
SHORT = "k" + uuid.uuid4().hex[:7]  # short enough that a config error message quotes it


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def config(folder: Path) -> dict:
    (folder / "token.txt").write_text(FILE_TOKEN + "\n")
    port = closed_port()
    return {
        "mcpServers": {
            "echo": {"command": sys.executable, "args": [ECHO], "env": {"ECHO_TOKEN": "{file:token.txt}"}},
            "web": {
                "type": "http",
                "url": f"http://user:${{SECRET_TOKEN}}@127.0.0.1:{port}/mcp?api_key=${{SECRET_TOKEN}}",
                "headers": {"Authorization": "Bearer ${SECRET_TOKEN}"},
            },
            "typo": {"command": sys.executable, "args": "-t ${SHORT_TOKEN}"},
        }
    }


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    folder = tmp_path_factory.mktemp("secrets")
    mp = pytest.MonkeyPatch()
    mp.setenv("SECRET_TOKEN", TOKEN)
    mp.setenv("SHORT_TOKEN", SHORT)
    harness = SessionHarness(folder, config(folder))
    harness.run("await api.servers({ wait: true })")
    yield harness
    harness.close()
    mp.undo()


def test_the_redactor_masks_longest_first() -> None:
    redact = Redactor(["abcdef", "abcdefgh"])
    assert redact.text("x abcdefgh y abcdef") == f"x {MASK} y {MASK}"
    assert redact.data({"k abcdef": ["abcdefgh", 1, None]}) == {f"k {MASK}": [MASK, 1, None]}
    assert Redactor().text("abcdef") == "abcdef"


def test_banner_and_server_states_show_no_secret(s: SessionHarness) -> None:
    lines = "\n".join(s.session.server_lines())
    assert TOKEN not in lines and SHORT not in lines and "web (http) error" in lines
    assert f'typo (stdio) error: mcp.json: server "typo": "args" must be a list of strings, got "-t {MASK}"' in lines
    states = s.value("JSON.stringify(await api.servers())")
    assert TOKEN not in states and FILE_TOKEN not in states


def test_errors_of_calls_show_no_secret(s: SessionHarness) -> None:
    result, out = s.run("await mcp.web.anything({})")
    assert result.error is not None
    assert TOKEN not in "\n".join(result.error.traceback) and TOKEN not in out.text("stderr")


def test_output_and_artifacts_show_no_secret(s: SessionHarness) -> None:
    result, out = s.run(f"console.log('env:', '{FILE_TOKEN}'); await mcp.echo.echo({{ text: '{TOKEN}' }})")
    assert out.text() == f"env: {MASK}\n"
    assert result.data["text/plain"] == f"'{MASK}'"
    handle = s.json(f"await api.saveArtifact('leak.txt', 'token {TOKEN}')")
    assert (s.session.artifacts.root / handle["name"]).read_text() == f"token {MASK}"


def test_a_big_artifact_written_in_pieces_shows_no_secret(s: SessionHarness) -> None:
    handle = s.json(f"await api.saveArtifact('leaks', Array.from({{ length: 200000 }}, (_, i) => ({{ i, t: 'token {TOKEN}' }})))")
    text = (s.session.artifacts.root / handle["name"]).read_text()
    assert len(text) > 4 << 20  # more than one piece
    assert TOKEN not in text and text.count(MASK) == 200000


def test_the_server_still_gets_the_real_value(s: SessionHarness) -> None:
    assert s.value(f"(await mcp.echo.echo({{ text: '{FILE_TOKEN}' }})) === '{FILE_TOKEN}'") == "true"


def test_history_is_owner_only_capped_and_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hist" / "history.sqlite"
    monkeypatch.setattr(history, "MAX_BYTES", 64 * 1024)
    monkeypatch.setattr(history, "CHECK_EVERY", 1)
    for _ in range(6):
        h = History(path)
        for line in range(5):
            h.store(line, "x" * 5000, "y" * 5000)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    sessions = [row[0] for row in sqlite3.connect(path).execute("SELECT DISTINCT session FROM history ORDER BY session")]
    assert sessions[-1] == h.session and len(sessions) < 6  # the oldest were dropped
    h.store(99, "z" * (history.MAX_ENTRY + 10))
    assert h.range(0, 99, None)[0][2].endswith("… (10 more characters not kept)")


def test_kernel_history_file_has_no_secret(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO], "env": {"T": "${SECRET_TOKEN}"}}}}))
    hist = tmp_path / "history.sqlite"
    kernel = KernelProcess(tmp_path, SECRET_TOKEN=TOKEN, MCP2REPL_HISTORY=str(hist))
    try:
        assert kernel.value(f"'{TOKEN}'.length") == str(len(TOKEN))
    finally:
        kernel.close(graceful=True)
    stored = "\n".join(str(row) for row in sqlite3.connect(hist).execute("SELECT source, output FROM history"))
    assert TOKEN not in stored and MASK in stored
