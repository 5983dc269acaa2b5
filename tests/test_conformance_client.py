"""scripts/conformance_client.py, the client under test of scripts/conformance.sh, kept from rotting:
its argument handling and configs, and one real run against the OAuth fixture server (a real
kernel logging in through the adapter's own ``--open``), without Node or the conformance suite."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from conftest import ROOT
from oauth_fixture import OAuthServer

SCRIPT = ROOT / "scripts" / "conformance_client.py"


def adapter() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_client", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_usage_errors_exit_2() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: conformance_client.py SERVER_URL")


def test_each_kind_of_scenario_gets_its_auth_block(tmp_path: Path) -> None:
    m = adapter()
    url = "http://localhost:1/mcp"
    opener = [sys.executable, str(SCRIPT.resolve()), "--open"]
    assert m.entry_for("auth/metadata-default", url, {}, tmp_path) == {
        "url": url,
        "auth": {"type": "oauth", "client_id": m.CIMD_URL, "open_with": opener},
    }
    basic = m.entry_for("auth/client-credentials-basic", url, {"client_id": "c", "client_secret": "s"}, tmp_path)
    assert basic["auth"] == {"type": "client_credentials", "client_id": "c", "client_secret": "${CONFORMANCE_SECRET}"}
    jwt = m.entry_for("auth/client-credentials-jwt", url, {"client_id": "c", "private_key_pem": "PEM", "signing_algorithm": "ES256"}, tmp_path)
    assert jwt["auth"] == {"type": "private_key_jwt", "client_id": "c", "private_key": f"{{file:{tmp_path / 'private-key.pem'}}}", "signing_algorithm": "ES256"}
    assert (tmp_path / "private-key.pem").read_text() == "PEM"
    pre = m.entry_for("auth/pre-registration", url, {"client_id": "c", "client_secret": "s"}, tmp_path)
    assert pre["auth"] == {"type": "oauth", "client_id": "c", "client_secret": "${CONFORMANCE_SECRET}", "open_with": opener}
    assert m.cells_for("tools_call")[-1] == "await api.callTool('conformance', \"add_numbers\", {\"a\": 5, \"b\": 3})"
    assert len(m.cells_for("initialize")) == 1


def test_the_2026_scenarios_get_cells_that_use_what_the_server_offers(tmp_path: Path) -> None:
    m = adapter()
    assert m.cells_for("request-metadata")[-1] == 'await api.listTools({server: "conformance"})'
    calls = [{"name": "test_custom_headers", "arguments": {"region": "us-west1"}}]
    exercise = m.cells_for("http-custom-headers", {"toolCalls": calls})[-1]
    assert 'const calls = [{"name": "test_custom_headers", "arguments": {"region": "us-west1"}}], done = [];' in exercise
    assert "mcp.conformance.resources.read(r.uri)" in exercise and "mcp.conformance.prompts.get(p.name, {})" in exercise
    assert "const calls = [], done = [];" in m.cells_for("sep-2322-client-request-state")[-1]
    assert m.entry_for("sep-2322-client-request-state", "http://localhost:1/mcp", {}, tmp_path)["elicitation"] == "defaults"
    assert 'api.describeTool("conformance", "json_schema_2020_12_tool")' in m.cells_for("json-schema-2020-12-preservation")[-1]


def test_a_real_kernel_logs_in_and_connects(tmp_path: Path) -> None:
    server = OAuthServer()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCP2REPL_CONFIG")}
        env["MCP_CONFORMANCE_SCENARIO"] = "initialize"
        done = subprocess.run([sys.executable, str(SCRIPT), server.url], capture_output=True, text=True, timeout=180, env=env)
    finally:
        server.close()
    assert done.returncode == 0, done.stdout + done.stderr
    row = done.stdout.strip()
    assert "state: 'ready'" in row and "name: 'conformance'" in row, row
