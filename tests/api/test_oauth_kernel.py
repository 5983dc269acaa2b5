"""OAuth as a notebook user meets it: a real kernel, the OAuth fixture server on loopback.

A server that needs a login waits in ``needs_login``; ``api.login`` shows the link to a person
(a client that allows stdin) and continues when the browser comes back; headless cells fail at
once with what to do; ``open_with`` logs in unattended; tokens never reach any output.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import STATE_DIR, KernelProcess
from oauth_fixture import FOLLOW, OAuthServer

HEADLESS = (
    'MCP server "fx" needs an OAuth login: nobody can log in here (no stdin: papermill, nbclient, --json). Log in once in an '
    'interactive session (JupyterLab, jupyter console, mcp2repl) with await api.login("fx"); the tokens are kept and refreshed. '
    'For unattended runs without a login, set "auth": {"type": "client_credentials", "client_id": …, "client_secret": "${SECRET}"} '
    "if the server supports it."
)


@pytest.fixture(scope="module")
def server() -> Iterator[OAuthServer]:
    fixture = OAuthServer()
    yield fixture
    fixture.close()


@pytest.fixture(scope="module")
def k(server: OAuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    cwd = tmp_path_factory.mktemp("oauth")
    config = {
        "mcpServers": {
            "fx": {"url": server.url},  # a plain URL, as VS Code and Claude Code configs carry it
            "auto": {"url": server.url, "auth": {"type": "oauth", "open_with": FOLLOW}},
            "first": {"url": server.url},  # logged in by its first call
            "later": {"url": server.url},  # a login given up by an interrupt
        }
    }
    (cwd / "mcp.json").write_text(json.dumps(config))
    kernel = KernelProcess(cwd, XDG_CONFIG_HOME=str(cwd / "xdg"))
    kernel.wait_for_servers()
    yield kernel
    kernel.close()


def test_a_server_that_needs_a_login_waits_in_needs_login(k: KernelProcess) -> None:
    rows = {row["name"]: row for row in k.json("await api.servers()")}
    assert (rows["fx"]["state"], rows["auto"]["state"]) == ("needs_login", "ready")
    assert rows["fx"]["lastError"] == (
        'MCP server "fx" needs an OAuth login: run await api.login("fx") to open the login page (or call one of its tools). '
        'For unattended runs without a login, set "auth": {"type": "client_credentials", "client_id": …, "client_secret": "${SECRET}"} '
        "if the server supports it."
    )
    assert any("fx" in line and "needs_login" in line for line in k.banner()), k.banner()


def test_headless_cells_fail_at_once_saying_how_to_log_in(k: KernelProcess) -> None:
    reply, _ = k.execute("await mcp.fx.whoami({})")
    assert (reply["ename"], reply["evalue"]) == ("ToolError", HEADLESS)
    reply, _ = k.execute('await api.login("fx")')
    assert (reply["ename"], reply["evalue"]) == ("Error", HEADLESS)


def test_open_with_logged_in_at_start(k: KernelProcess) -> None:
    assert k.json("await mcp.auto.whoami({})")["scopes"] == ["user"]


def test_api_login_shows_the_link_and_continues_when_the_browser_comes_back(k: KernelProcess) -> None:
    msg_id = k.kc.execute('await api.login("fx")', allow_stdin=True)
    link = None
    while link is None:
        msg = k.kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "display_data":
            data = msg["content"]["data"]
            link = data["text/plain"].splitlines()[-1]
            assert data["text/plain"] == (
                'MCP server "fx" needs a login. Open this link to log in (this cell continues when the browser comes back):\n' + link
            )
            assert f'<a href="{link.replace("&", "&amp;")}" target="_blank" rel="noopener">open the login page</a>' in data["text/html"]
    subprocess.run([*FOLLOW, link], check=True, timeout=60)  # the person approves in their browser
    reply = k.reply(msg_id, timeout=60)
    assert reply["status"] == "ok", reply
    assert k.json("await mcp.fx.whoami({})")["scopes"] == ["user"]
    assert {row["name"]: row["state"] for row in k.json("await api.servers()")}["fx"] == "ready"


def test_the_first_call_in_an_interactive_cell_shows_the_link(k: KernelProcess) -> None:
    msg_id = k.kc.execute("await mcp.first.whoami({})", allow_stdin=True)
    link, result = None, None
    while result is None:
        msg = k.kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "display_data" and "needs a login" in msg["content"]["data"].get("text/plain", ""):
            link = msg["content"]["data"]["text/plain"].splitlines()[-1]
            subprocess.run([*FOLLOW, link], check=True, timeout=60)
        elif msg["msg_type"] == "execute_result":
            result = msg["content"]["data"]["application/json"]
        elif msg["msg_type"] == "error":
            pytest.fail(str(msg["content"]))
    assert link is not None and link.startswith("http://127.0.0.1:")
    assert result["scopes"] == ["user"]
    assert k.reply(msg_id, timeout=60)["status"] == "ok"


def test_an_interrupt_stops_waiting_for_the_browser(k: KernelProcess) -> None:
    msg_id = k.kc.execute('await api.login("later")', allow_stdin=True)
    while True:
        msg = k.kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "display_data":
            break
    k.km.interrupt_kernel()  # the person gave up
    reply = k.reply(msg_id, timeout=60)
    assert reply["ename"] == "InterruptError", reply
    rows = {row["name"]: row["state"] for row in k.json("await api.servers()")}
    assert rows["later"] in ("stopped", "needs_login"), rows
    reply, _ = k.execute('await mcp.later.whoami({})')  # headless again: fails at once
    assert reply["ename"] == "ToolError" and reply["evalue"] == HEADLESS.replace('"fx"', '"later"')


def test_tokens_never_reach_outputs_logs_or_files(k: KernelProcess) -> None:
    xdg = Path(k.cwd or ".") / "xdg" / "mcp2repl" / "oauth"
    stored = [json.loads(p.read_text()) for p in xdg.glob("*.json")]
    tokens = {t for s in stored if "tokens" in s for t in (s["tokens"]["access_token"], s["tokens"].get("refresh_token")) if t}
    tokens |= {s["client_info"]["client_secret"] for s in stored if s.get("client_info", {}).get("client_secret")}
    assert len(tokens) >= 2
    cells = [
        "await mcp.auto.whoami({})",
        'await api.callTool("auto", "whoami", {}, {raw: true})',
        "await api.servers()",
        'await api.serverLog("auto")',
        'await api.saveArtifact("all", await api.servers())',
        'print(JSON.stringify(await api.servers()))',
    ]
    seen: list[Any] = [k.run(code).all for code in cells]
    text = json.dumps(seen) + "\n".join(k.banner())
    files = [p for root in (Path(STATE_DIR), Path(k.cwd or ".") / ".mcp2repl") for p in root.rglob("*") if p.is_file()]
    text += "".join(p.read_text(errors="replace") for p in files)
    assert files  # the run folder and the artifact were searched
    leaked = [t for t in tokens if t in text]
    assert leaked == []
    for path in xdg.glob("*.json"):
        assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(xdg.stat().st_mode & 0o777) == "0o700"


def test_a_401_without_oauth_explains_itself(tmp_path: Path) -> None:
    plain = OAuthServer("--plain-401")
    try:
        (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"plain": {"url": plain.url}}}))
        kernel = KernelProcess(tmp_path)
        try:
            kernel.wait_for_servers()
            reply, _ = kernel.execute("await mcp.plain.anything({})")
            assert reply["ename"] == "ToolError"
            assert re.fullmatch(
                r'MCP server "plain" is unavailable: Server returned an error response \(HTTP 401 Unauthorized from '
                + re.escape(plain.url)
                + r"\); the server needs authorization but offers no OAuth login \(no Bearer challenge\)\. Pass a token: "
                r'"headers": \{"Authorization": "Bearer \$\{TOKEN\}"\}, or configure OAuth with an "auth" block '
                r'\(\{"type": "oauth"\}, or "client_credentials" with client_id and client_secret\)',
                reply["evalue"],
            ), reply["evalue"]
        finally:
            kernel.close()
    finally:
        plain.close()
