"""OAuth for remote servers, in-process: a real ServerConnection against the OAuth fixture server
(the SDK's server auth pieces) on loopback, with real HTTP and the SDK's client providers.

The login is done by ``open_with`` running ``follow_login.py``, which follows the authorization
URL like the browser of a person who approves it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from oauth_fixture import FOLLOW, M2M_SECRET, OAuthServer, rsa_key_pair

from mcp_kernel.servers.authspec import AuthSpec, parse_auth
from mcp_kernel.servers.connection import Events, ServerConnection, ServerUnavailable
from mcp_kernel.servers.spec import parse_spec
from mcp_kernel.servers.tokens import token_file


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture(scope="module")
def server() -> Iterator[OAuthServer]:
    fixture = OAuthServer("--ttl", "4")
    yield fixture
    fixture.close()


class Run:
    """One connection to a spec, with what it reported."""

    def __init__(self, name: str, raw: Any, tmp: Path, show: Any = None) -> None:
        self.spec = parse_spec(name, raw)
        assert self.spec.error is None, self.spec.error
        self.secrets: set[str] = set()
        self.notices: list[str] = []
        events = Events(notice=self.notices.append, secret=self.secrets.update, show_login=show or (lambda server, url: False))
        self.conn = ServerConnection(self.spec, tmp, events)

    async def start(self) -> None:
        try:
            await asyncio.wait_for(self.conn.wait_ready(), 60)
        except ServerUnavailable:
            pass

    async def call(self, tool: str) -> Any:
        result = await self.conn.call_tool(tool, {})
        return result.structured_content


def in_loop(test: Any) -> Any:
    """Run an async test in a fresh event loop (the suite has no async plugin)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def login_spec(server: OAuthServer) -> dict[str, Any]:
    return {"url": server.url, "auth": {"type": "oauth", "open_with": FOLLOW}}


@in_loop
async def test_open_with_logs_in_and_an_expired_token_is_refreshed_silently(server: OAuthServer, xdg: Path, tmp_path: Path) -> None:
    run = Run("login", login_spec(server), tmp_path)
    await run.start()
    assert (run.conn.state, run.conn.last_error) == ("ready", None)
    assert (await run.call("whoami"))["scopes"] == ["user"]
    before = await run.call("stats")
    await asyncio.sleep(4)  # the fixture's tokens live 4 s
    after = await run.call("stats")
    assert after["refresh_token"] == before.get("refresh_token", 0) + 1
    assert after["authorization_code"] == before["authorization_code"]
    await run.conn.close()
    stored = json.loads(token_file("login", server.url).read_text())
    tokens = stored["tokens"]
    assert {tokens["access_token"], tokens["refresh_token"]} <= run.secrets  # handed to the redactor
    assert stat.S_IMODE(token_file("login", server.url).stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file("login", server.url).parent.stat().st_mode) == 0o700


@in_loop
async def test_stored_tokens_are_refreshed_by_a_new_connection_without_a_login(server: OAuthServer, xdg: Path, tmp_path: Path) -> None:
    first = Run("kept", login_spec(server), tmp_path)
    await first.start()
    assert first.conn.state == "ready"
    await first.conn.close()
    codes = (await _stats(server, tmp_path))["authorization_code"]
    await asyncio.sleep(4)  # expired on disk; the next process must refresh, not log in
    second = Run("kept", {"url": server.url}, tmp_path)  # a plain URL: no open_with, nobody to log in
    await second.start()
    assert (second.conn.state, second.conn.last_error) == ("ready", None)
    assert (await second.call("stats"))["authorization_code"] == codes
    await second.conn.close()


async def _stats(server: OAuthServer, tmp_path: Path) -> dict[str, int]:
    probe = Run("probe", {"url": server.url, "auth": {"type": "client_credentials", "client_id": "m2m", "client_secret": M2M_SECRET}}, tmp_path)
    await probe.start()
    stats = await probe.call("stats")
    await probe.conn.close()
    return stats


@in_loop
async def test_a_server_that_needs_a_login_waits_in_needs_login(server: OAuthServer, xdg: Path, tmp_path: Path) -> None:
    run = Run("nobody", {"url": server.url}, tmp_path)
    await run.start()
    assert run.conn.state == "needs_login"
    assert run.conn.last_error == (
        'MCP server "nobody" needs an OAuth login: run await api.login("nobody") to open the login page (or call one of its tools). '
        'For unattended runs without a login, set "auth": {"type": "client_credentials", "client_id": …, "client_secret": "${SECRET}"} '
        "if the server supports it."
    )


@in_loop
async def test_the_link_is_shown_and_the_browser_coming_back_completes_the_login(server: OAuthServer, xdg: Path, tmp_path: Path) -> None:
    shown: list[tuple[str, str]] = []

    def show(name: str, url: str) -> bool:
        shown.append((name, url))
        asyncio.get_running_loop().run_in_executor(None, _follow, url)  # the person clicks
        return True

    run = Run("person", {"url": server.url}, tmp_path, show=show)
    await run.start()
    assert run.conn.state == "ready", run.conn.last_error
    assert [name for name, _ in shown] == ["person"]
    assert shown[0][1].startswith(server.base + "/authorize?")


@in_loop
async def test_a_slow_person_is_not_cut_short_by_the_start_timeout(
    server: OAuthServer, xdg: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP2REPL_START_TIMEOUT", "1")

    def show(name: str, url: str) -> bool:
        asyncio.get_running_loop().call_later(3, lambda: asyncio.get_running_loop().run_in_executor(None, _follow, url))
        return True

    run = Run("slow", {"url": server.url}, tmp_path, show=show)
    await run.start()
    assert (run.conn.state, run.conn.last_error) == ("ready", None)
    await run.conn.close()


def _follow(url: str) -> None:
    import subprocess

    subprocess.run([*FOLLOW, url], check=True, timeout=60)


@in_loop
async def test_a_revoked_token_puts_the_server_back_to_needs_login(server: OAuthServer, xdg: Path, tmp_path: Path) -> None:
    run = Run("revoked", login_spec(server), tmp_path)
    await run.start()
    assert run.conn.state == "ready"
    await run.call("revoke")  # the server drops every token
    run.conn.spec.auth.__dict__["open_with"] = ()  # frozen; from now on nobody is there to log in
    with pytest.raises(ServerUnavailable):
        await run.call("whoami")
    await asyncio.wait_for(run.conn.wait_started(), 30)
    assert run.conn.state == "needs_login"
    await run.conn.close()


@in_loop
async def test_client_credentials_get_a_token_without_a_person(server: OAuthServer, xdg: Path, tmp_path: Path) -> None:
    auth = {"type": "client_credentials", "client_id": "m2m", "client_secret": "${M2M}", "token_endpoint_auth_method": "client_secret_post"}
    spec = parse_spec("m2m", {"url": server.url, "auth": auth}, environ={"M2M": M2M_SECRET})
    conn = ServerConnection(spec, tmp_path, Events())
    await asyncio.wait_for(conn.wait_ready(), 60)
    assert (await conn.call_tool("whoami", {})).structured_content == {"client": "m2m", "scopes": ["user"]}
    assert M2M_SECRET in spec.secrets
    await conn.close()


@in_loop
async def test_private_key_jwt_signs_its_way_in(xdg: Path, tmp_path: Path) -> None:
    private, public = rsa_key_pair(tmp_path)
    signed = OAuthServer(public_key=str(public))
    try:
        auth = {"type": "private_key_jwt", "client_id": "m2m", "private_key": "{file:key.pem}", "signing_algorithm": "RS256"}
        spec = parse_spec("jwt", {"url": signed.url, "auth": auth}, base_dir=tmp_path)
        assert spec.error is None and spec.auth is not None and spec.auth.private_key == private.read_text().strip()
        assert spec.auth.private_key in spec.secrets
        conn = ServerConnection(spec, tmp_path, Events())
        await asyncio.wait_for(conn.wait_ready(), 60)
        assert (await conn.call_tool("whoami", {})).structured_content == {"client": "m2m", "scopes": ["user"]}
        await conn.close()
    finally:
        signed.close()


@in_loop
async def test_wrong_client_secret_names_the_token_url(server: OAuthServer, xdg: Path, tmp_path: Path) -> None:
    run = Run("bad", {"url": server.url, "auth": {"type": "client_credentials", "client_id": "m2m", "client_secret": "not-the-secret"}}, tmp_path)
    await run.start()
    assert run.conn.state == "error"
    assert run.conn.last_error == (
        'OAuth login failed: Token exchange failed (401): {"error": "invalid_client"} '
        f"(HTTP 401 Unauthorized from {server.base}/token)"
    )


@in_loop
async def test_a_resource_that_is_not_the_server_is_refused(xdg: Path, tmp_path: Path) -> None:
    other = OAuthServer("--resource-path", "/elsewhere")
    try:
        run = Run("wrong", {"url": other.url, "auth": {"open_with": FOLLOW}}, tmp_path)
        await run.start()
        assert run.conn.state == "error"
        assert run.conn.last_error == (
            f"OAuth login failed: Protected resource {other.base}/elsewhere does not match expected {other.url}"
        )
    finally:
        other.close()


@in_loop
async def test_a_401_without_oauth_says_what_to_configure(xdg: Path, tmp_path: Path) -> None:
    plain = OAuthServer("--plain-401")
    try:
        run = Run("plain", {"url": plain.url}, tmp_path)
        await run.start()
        assert run.conn.state == "error"
        assert run.conn.last_error == (
            f"Server returned an error response (HTTP 401 Unauthorized from {plain.url}); the server needs authorization but offers "
            'no OAuth login (no Bearer challenge). Pass a token: "headers": {"Authorization": "Bearer ${TOKEN}"}, or configure OAuth '
            'with an "auth" block ({"type": "oauth"}, or "client_credentials" with client_id and client_secret)'
        )
        header = Run("header", {"url": plain.url, "headers": {"Authorization": "Bearer not-a-valid-token"}}, tmp_path)
        await header.start()
        assert header.conn.last_error == (
            f"Server returned an error response (HTTP 401 Unauthorized from {plain.url}); the server refused the configured Authorization header"
        )
    finally:
        plain.close()


@in_loop
async def test_a_bearer_challenge_without_oauth_metadata_says_to_pass_a_token(xdg: Path, tmp_path: Path) -> None:
    keyed = OAuthServer("--plain-401", challenge=True)
    try:
        run = Run("keyed", {"url": keyed.url}, tmp_path)
        await run.start()
        assert run.conn.state == "error"
        assert run.conn.last_error == (
            'OAuth login failed: Registration failed: 401 unauthorized; if the server expects a token rather than a login, pass '
            f'"headers": {{"Authorization": "Bearer ${{TOKEN}}"}} (HTTP 401 Unauthorized from {keyed.base}/register)'
        )
    finally:
        keyed.close()


@in_loop
async def test_sse_servers_log_in_too(xdg: Path, tmp_path: Path) -> None:
    sse = OAuthServer(transport="sse")
    try:
        run = Run("sse", {"url": sse.url, "type": "sse", "auth": {"open_with": FOLLOW}}, tmp_path)
        await run.start()
        assert (run.conn.state, run.conn.last_error) == ("ready", None)
        assert (await run.call("whoami"))["scopes"] == ["user"]
        await run.conn.close()
    finally:
        sse.close()


# ---- the auth block ---------------------------------------------------------------------------


def test_unknown_auth_keys_are_named() -> None:
    spec = parse_spec("s", {"url": "https://x.example/mcp", "auth": {"type": "oauth", "client_secert": "x"}})
    assert spec.error == (
        'server "s": "auth" has unknown key "client_secert" (known: type, client_id, client_secret, private_key, signing_algorithm, '
        "token_endpoint_auth_method, scopes, redirect_port, open_with)"
    )


def test_auth_block_values_are_checked() -> None:
    def error(auth: Any) -> str | None:
        return parse_spec("s", {"url": "https://x.example/mcp", "auth": auth}).error

    assert error({"type": "password"}) == 'server "s": "auth.type" must be one of "oauth", "client_credentials", "private_key_jwt", got \'password\''
    assert error({"type": "client_credentials", "client_id": "a"}) == 'server "s": "auth.client_secret" is required with "type": "client_credentials"'
    assert error({"redirect_port": 70000}) == 'server "s": "auth.redirect_port" must be a port number (1-65535), got 70000'


def test_claude_code_oauth_block_and_lists_of_scopes() -> None:
    assert parse_auth(None, {"clientId": "abc", "callbackPort": 8123}) == AuthSpec(client_id="abc", redirect_port=8123)
    assert parse_auth({"scopes": ["a", "b"], "open_with": "xdg-open"}) == AuthSpec(scopes="a b", open_with=("xdg-open",))


def test_a_client_id_from_the_environment_is_not_masked_but_the_secret_is() -> None:
    raw = {"url": "https://x.example/mcp", "auth": {"client_id": "${CID}", "client_secret": "${CSECRET}"}}
    spec = parse_spec("s", raw, environ={"CID": "public-client-id", "CSECRET": "very-secret-value"})
    assert spec.auth is not None and spec.auth.client_id == "public-client-id"
    assert "public-client-id" not in spec.secrets and "very-secret-value" in spec.secrets
