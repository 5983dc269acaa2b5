"""Secrets from a config never leave the kernel: not in banners, server states, errors, output,
artifacts or the input history. A real Session (and one real kernel for the history file)."""

from __future__ import annotations

import base64
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
QUOTED = 'q"t\\' + uuid.uuid4().hex[:8]  # a quote and a backslash: JSON-escaped wherever JSON holds it
NUMBER = "48151" + str(uuid.uuid4().int)[:8]  # all digits: a JSON number when a tool sends it as one
PEM_LINES = [base64.b64encode(uuid.uuid4().bytes * 3).decode() for _ in range(4)]
PEM = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(PEM_LINES) + "\n-----END PRIVATE KEY-----\n"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def config(folder: Path) -> dict:
    (folder / "token.txt").write_text(FILE_TOKEN + "\n")
    (folder / "key.pem").write_text(PEM)
    port = closed_port()
    return {
        "mcpServers": {
            "echo": {
                "command": sys.executable,
                "args": [ECHO],
                "env": {"ECHO_TOKEN": "{file:token.txt}", "KEY": "{file:key.pem}", "NUM": "${NUMBER_TOKEN}"},
            },
            "quoted": {"command": sys.executable, "args": "-t ${QUOTED_TOKEN}"},
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
    mp.setenv("QUOTED_TOKEN", QUOTED)
    mp.setenv("NUMBER_TOKEN", NUMBER)
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
    # arguments go out unmasked; what comes back holds no form of the secret (reversed), so it is not masked either
    assert s.value(f"const sent = [...'{FILE_TOKEN}'].reverse().join(''); (await mcp.echo.echo({{ text: sent }})) === sent") == "true"


# ---- every form of a secret, and JS never holding one (issue 22, item 6) ----------------------------


def test_a_multi_line_secret_is_masked_line_by_line_but_not_its_armour() -> None:
    redact = Redactor([PEM.rstrip("\n")])
    assert redact.text(PEM) == f"{MASK}\n"  # whole: one mask
    assert redact.text(f"key line: {PEM_LINES[2]}!") == f"key line: {MASK}!"
    assert redact.text(PEM.replace("\n", "\r\n")) == "-----BEGIN PRIVATE KEY-----\r\n" + f"{MASK}\r\n" * 4 + "-----END PRIVATE KEY-----\r\n"  # line by line
    assert redact.text("-----END PRIVATE KEY----- and short") == "-----END PRIVATE KEY----- and short"
    assert Redactor(["line-one-long\nab\n"]).text("ab line-one-long") == f"ab {MASK}"  # lines under 8 characters stay


@pytest.mark.parametrize("padding", [0, 100_000])  # short texts take the regex, long ones the anchored scan
def test_escaped_and_encoded_forms_are_masked(padding: int) -> None:
    secret = 'pa"ss\\wo/rd-é-' + uuid.uuid4().hex[:6]
    redact = Redactor([secret])
    pad = "x" * padding
    for shown in (
        json.dumps({"v": secret}),  # \" \\ \u00e9
        json.dumps({"v": secret}, ensure_ascii=False),
        json.dumps({"outer": json.dumps({"v": secret})}),  # JSON text inside a JSON string
        json.dumps({"v": secret}).replace("/", "\\/"),
        "https://h/?k=" + __import__("urllib.parse").parse.quote(secret, safe=""),
        "k=" + __import__("urllib.parse").parse.quote_plus(secret),
    ):
        masked = redact.text(pad + shown)
        assert "rd-" not in masked and MASK in masked, shown


def test_masked_json_stays_json() -> None:
    redact = Redactor([NUMBER, "n1234567x", QUOTED, PEM.rstrip("\n")])
    value = {
        "pin": int(NUMBER), "inside": [f"a {NUMBER} b", {NUMBER: 1}], "nl": "\n1234567x",  # not the secret: an escape before it
        "q": f"<{QUOTED}>", "nested": json.dumps({"q": QUOTED, "n": int(NUMBER)}), "pem": PEM, "big": "y" * 300_000 + QUOTED,
    }
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=2)):
        out = json.loads(redact.json_text(text))
        assert out["pin"] == MASK and out["inside"] == [f"a {MASK} b", {MASK: 1}] and out["nl"] == "\n1234567x"
        assert out["q"] == f"<{MASK}>" and json.loads(out["nested"]) == {"q": MASK, "n": MASK}  # JSON inside a string stays JSON
        assert out["pem"] == f"{MASK}\n" and out["big"].endswith(MASK)
    assert json.loads(redact.string(json.dumps([NUMBER, int(NUMBER)]))) == [MASK, MASK]
    assert redact.data({"n": int(NUMBER), "ok": 7, "f": 1.5, "b": True}) == {"n": MASK, "ok": 7, "f": 1.5, "b": True}


def test_no_secret_costs_nothing_and_text_without_one_is_not_copied() -> None:
    text = "z" * (50 << 20)
    assert Redactor().json_text(text) is text and Redactor().text(text) is text
    assert Redactor([TOKEN, QUOTED]).json_text(text) is text


def test_tool_results_are_masked_before_js_sees_them(s: SessionHarness) -> None:
    result, out = s.run(
        f"const s = await mcp.echo.echo({{ text: '{TOKEN}' }});"
        "console.log(s.split('').join(','), btoa(s), [...s].reverse().join(''), encodeURIComponent(s)); s === '[redacted]'"
    )
    assert result.data["text/plain"] == "true"
    printed = out.text()
    assert ",".join(TOKEN) not in printed and base64.b64encode(TOKEN.encode()).decode() not in printed and TOKEN[::-1] not in printed
    assert s.value(f"(await mcp.echo.echo({{ text: 'x'.repeat(300000) + '{TOKEN}' }})).endsWith('[redacted]')") == "true"  # a big text, stashed
    assert s.value(f"(await mcp.echo.echo({{ text: {json.dumps(PEM)} }}))") == f"'{MASK}\\n'"
    assert s.value(f"(await mcp.echo.echo({{ text: {json.dumps(PEM.replace(PEM_LINES[0], 'changed'))} }})).split('\\n')[2]") == f"'{MASK}'"
    assert s.value(f"(await mcp.echo.echo({{ text: 'line: {PEM_LINES[1]}' }}))") == f"'line: {MASK}'"
    shaped = json.dumps(json.dumps({"pin": int(NUMBER), "s": f"a\n{NUMBER}"}))
    assert s.json(f"await mcp.echo.echo({{ text: {shaped} }})") == {"pin": MASK, "s": f"a\n{MASK}"}  # still parsed as JSON


def test_escaped_secrets_in_server_states_and_artifacts(s: SessionHarness) -> None:
    states = s.value("JSON.stringify(await api.servers())")
    for form in (QUOTED, json.dumps(QUOTED)[1:-1], json.dumps(json.dumps(QUOTED)[1:-1])[1:-1]):
        assert form not in states
    assert "quoted" in states and MASK in states
    handle = s.json(f"await api.saveArtifact('pem.txt', {json.dumps('key: ' + PEM_LINES[0])})")
    assert (s.session.artifacts.root / handle["name"]).read_text() == f"key: {MASK}"
    handle = s.json(f"await api.saveArtifact('pin.json', {{ pin: {NUMBER}, lines: {json.dumps(PEM_LINES)} }})")
    saved = json.loads((s.session.artifacts.root / handle["name"]).read_text())  # still JSON
    assert saved == {"pin": MASK, "lines": [MASK] * 4}


def test_history_is_owner_only_capped_and_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hist" / "history.sqlite"
    monkeypatch.setattr(history, "MAX_BYTES", 64 * 1024)
    monkeypatch.setattr(history, "CHECK_EVERY", 1)
    for _ in range(6):
        h = History(path)
        for line in range(5):
            h.store(line, "x" * 5000, "y" * 5000)
        h.tail(1).result()  # after every write the history gave its thread (they run in order)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    sessions = [row[0] for row in sqlite3.connect(path).execute("SELECT DISTINCT session FROM history ORDER BY session")]
    assert sessions[-1] == h.session and len(sessions) < 6  # the oldest were dropped
    h.store(99, "z" * (history.MAX_ENTRY + 10))
    assert h.range(0, 99, None).result()[0][2].endswith("… (10 more characters not kept)")


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
