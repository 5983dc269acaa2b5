#!/usr/bin/env python3
"""The client under test for ``@modelcontextprotocol/conformance`` client scenarios: a real mcp2repl
kernel (started with jupyter_client, like any notebook client) whose config points at the
scenario's server, and cells that connect, list and call the scenario's tool.

The conformance runner calls ``conformance_client.py SERVER_URL`` with the scenario's name in
``MCP_CONFORMANCE_SCENARIO`` and, for client credentials, their values in
``MCP_CONFORMANCE_CONTEXT`` (JSON). Authorization-code scenarios log in through the config's
``auth.open_with``, which runs this script again as ``conformance_client.py --open URL``: it
follows the authorization URL like the browser of a person who approves the login.

Exit status 0 when every cell succeeded; the kernel's outputs go to stdout for the report.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

#: a client ID metadata document URL (CIMD): used where the authorization server supports it, else
#: the SDK registers dynamically; the conformance authorization server never fetches it
CIMD_URL = "https://conformance-test.local/client-metadata.json"
#: the tool each scenario expects to be called, with its arguments
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}
AUTH_TOOL = ("test-tool", {})
#: 2026-07-28 scenarios whose server checks what the client sends while it uses everything offered: every
#: listed tool is called (arguments from the context's ``toolCalls`` with null ones omitted, as the kernel's
#: argument check refuses null for a typed parameter; else a sample value for each required one), a failing
#: call is logged, not fatal (some exist to fail); every resource read and every prompt got
EXERCISE = ("sep-2322-client-request-state", "http-standard-headers", "http-custom-headers", "http-invalid-tool-headers")
#: 2026-07-28 scenarios that only need the kernel connected and the tools listed
LIST_ONLY = ("request-metadata", "json-schema-ref-no-deref")
EXERCISE_CELL = """
const calls = CALLS, done = [];
const kinds = {string: "x", number: 1, integer: 1, boolean: true, array: [], object: {}};
const sample = (s) => (s?.default !== undefined ? s.default : s?.enum ? s.enum[0] : kinds[[].concat(s?.type)[0]] ?? "x");
for (const row of await api.listTools({server: "conformance", schemas: true})) {
  const given = calls.find((c) => c.name === row.name), schema = row.inputSchema || {};
  const args = given
    ? Object.fromEntries(Object.entries(given.arguments).filter(([, v]) => v !== null))
    : Object.fromEntries((schema.required || []).map((k) => [k, sample((schema.properties || {})[k])]));
  try { await api.callTool("conformance", row.name, args); done.push(`${row.name}: ok`); }
  catch (e) { done.push(`${row.name}: ${String(e.message).slice(0, 120)}`); }
}
for (const r of await mcp.conformance.resources.list().catch(() => [])) {
  try { await mcp.conformance.resources.read(r.uri); done.push(`${r.uri}: read`); } catch (e) { done.push(`${r.uri}: ${e.message}`); }
}
for (const p of await mcp.conformance.prompts.list().catch(() => [])) {
  try { await mcp.conformance.prompts.get(p.name, {}); done.push(`${p.name}: got`); } catch (e) { done.push(`${p.name}: ${e.message}`); }
}
done
"""
#: json-schema-2020-12-preservation: echo the tool's input schema as the kernel holds it
PRESERVATION_CELL = """
const held = (await api.describeTool("conformance", "json_schema_2020_12_tool")).inputSchema;
await api.callTool("conformance", "json_schema_echo", {schema: held})
"""


def entry_for(scenario: str, url: str, context: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The config entry of the scenario's server: the URL and an ``auth`` block from the context."""
    opener = [sys.executable, str(Path(__file__).resolve()), "--open"]
    if scenario == "auth/client-credentials-basic":
        auth: dict[str, Any] = {"type": "client_credentials", "client_id": context["client_id"], "client_secret": "${CONFORMANCE_SECRET}"}
    elif scenario == "auth/client-credentials-jwt":
        key = folder / "private-key.pem"
        key.write_text(context["private_key_pem"])
        key.chmod(0o600)
        auth = {
            "type": "private_key_jwt",
            "client_id": context["client_id"],
            "private_key": f"{{file:{key}}}",
            "signing_algorithm": context.get("signing_algorithm") or "RS256",
        }
    elif context.get("client_id") and context.get("client_secret"):  # a pre-registered client
        auth = {"type": "oauth", "client_id": context["client_id"], "client_secret": "${CONFORMANCE_SECRET}", "open_with": opener}
    else:
        auth = {"type": "oauth", "client_id": CIMD_URL, "open_with": opener}
    entry: dict[str, Any] = {"url": url, "auth": auth}
    if scenario.startswith("elicitation") or scenario in EXERCISE:
        entry["elicitation"] = "defaults"  # the adapter runs headless: the form's defaults answer
    return entry


def cells_for(scenario: str, context: dict[str, Any] | None = None) -> list[str]:
    """The cells to run: wait for the server, then call the scenario's tool (if it has one)."""
    cells = [
        'const conf = (await api.servers({wait: true})).find(s => s.name === "conformance");\n'
        'if (conf.state !== "ready") throw new Error(`server ${conf.state}: ${conf.lastError}`);\nconf'
    ]
    if scenario in LIST_ONLY:
        return [*cells, 'await api.listTools({server: "conformance"})']
    if scenario in EXERCISE:
        return [*cells, EXERCISE_CELL.replace("CALLS", json.dumps((context or {}).get("toolCalls") or []))]
    if scenario == "json-schema-2020-12-preservation":
        return [*cells, PRESERVATION_CELL]
    tool = TOOLS.get(scenario) or (AUTH_TOOL if scenario.startswith("auth/") else None)
    if tool is not None:
        cells.append(f"await api.callTool('conformance', {json.dumps(tool[0])}, {json.dumps(tool[1])})")
    return cells


def follow(url: str) -> int:
    """``--open``: play the browser that approves the login, following every redirect."""
    import httpx2

    with httpx2.Client(follow_redirects=True, timeout=30) as client:
        response = client.get(url)
    return 0 if response.status_code < 400 else 1


def run_kernel(folder: Path, cells: list[str], env: dict[str, str], timeout: float = 60) -> int:
    """Start an mcp2repl kernel in ``folder`` and run ``cells``; print what each produced."""
    spec_dir = folder / "jupyter" / "kernels" / "mcp2repl-conformance"
    spec_dir.mkdir(parents=True)
    from mcp_kernel.client.registry import KERNEL_ARGS

    argv = [sys.executable, *KERNEL_ARGS, "-f", "{connection_file}"]
    (spec_dir / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "mcp2repl", "language": "javascript", "interrupt_mode": "message"}))
    os.environ["JUPYTER_PATH"] = str(folder / "jupyter")
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="mcp2repl-conformance", cwd=str(folder), env=env)
    status = 0
    try:
        for code in cells:
            reply = kc.execute_interactive(code, timeout=timeout, allow_stdin=False, output_hook=_show)
            if reply["content"]["status"] != "ok":
                print(f"cell failed: {reply['content'].get('ename')}: {reply['content'].get('evalue')}", file=sys.stderr)
                status = 1
                break
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return status


def _show(msg: dict[str, Any]) -> None:
    content = msg["content"]
    if msg["msg_type"] == "stream":
        print(content["text"], end="")
    elif msg["msg_type"] in ("execute_result", "display_data"):
        print(content["data"].get("text/plain", ""))
    elif msg["msg_type"] == "error":
        print(f"{content['ename']}: {content['evalue']}")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--open":
        return follow(argv[1])
    if len(argv) != 1 or not argv[0].startswith(("http://", "https://")):
        print("usage: conformance_client.py SERVER_URL  (MCP_CONFORMANCE_SCENARIO names the scenario)\n"
              "       conformance_client.py --open AUTHORIZATION_URL", file=sys.stderr)  # fmt: skip
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory(prefix="mcp2repl-conformance-") as tmp:
        folder = Path(tmp)
        config = {"mcpServers": {"conformance": entry_for(scenario, argv[0], context, folder)}}
        (folder / "mcp.json").write_text(json.dumps(config, indent=1))
        env = {**os.environ, "XDG_CONFIG_HOME": str(folder / "xdg"), "MCP2REPL_STATE_DIR": str(folder / "state")}
        env.pop("MCP2REPL_CONFIG", None)
        if context.get("client_secret"):
            env["CONFORMANCE_SECRET"] = context["client_secret"]
        return run_kernel(folder, cells_for(scenario, context), env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
