#!/usr/bin/env python3
"""Turn the results of scripts/conformance.sh into docs/conformance.md (scenario | result | reason).

usage: conformance_report.py RESULTS_DIR DOC VERSION...   (RESULTS_DIR/VERSION/ holds each version's run)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: why a scenario fails where the cause is known; shown instead of the first failing check
KNOWN: dict[str, str] = {
    "auth/2025-03-26-oauth-metadata-backcompat": (
        "fixture known broken upstream in this suite version: its authorization server serves metadata at the root "
        "well-known URL with issuer <origin>/oauth, which RFC 8414 §3.3 forbids and the SDK (SEP-2468) refuses; fixed by "
        "modelcontextprotocol/conformance#359 and #361"
    ),
    "auth/cross-app-access-complete-flow": (
        "extension (SEP-990 identity assertion grant): needs an ID token from an enterprise identity provider, which "
        "the auth block has no key for; not supported"
    ),
}
_FIXTURE = "calls the suite's reference {0}, which the demo (a bookshop) does not have"
#: what the demo server claims, for server scenarios it fails: a feature it does not declare, or the suite's own fixtures
SERVER_NOTES: dict[str, str] = {
    "logging-set-level": "not claimed: the demo declares no `logging` capability",
    "completion-complete": "not claimed: the demo declares no `completions` capability",
    "tools-call-with-logging": "not claimed: no `logging` capability",
    "resources-subscribe": "not claimed: the demo's resources declare no `subscribe`",
    "resources-unsubscribe": "not claimed: the demo's resources declare no `subscribe`",
    "tools-call-sampling": "not claimed: the demo never asks the client for sampling",
    "tools-call-elicitation": "not claimed: the demo never asks the client for elicitation",
    "elicitation-sep1034-defaults": "not claimed: the demo never asks for elicitation",
    "elicitation-sep1330-enums": "not claimed: the demo never asks for elicitation",
    "tools-call-image": _FIXTURE.format("tool test_image_content (the demo's render_cover returns an image)"),
    "tools-call-audio": _FIXTURE.format("tool test_audio_content"),
    "tools-call-embedded-resource": _FIXTURE.format("tool test_embedded_resource"),
    "tools-call-mixed-content": _FIXTURE.format("tool test_multiple_content_types"),
    "tools-call-with-progress": _FIXTURE.format("tool test_tool_with_progress (the demo's slow_inventory_check reports progress)"),
    "json-schema-2020-12": _FIXTURE.format("tool json_schema_2020_12_tool"),
    "server-sse-polling": _FIXTURE.format("polling tool"),
    "resources-read-text": _FIXTURE.format("resource test://static-text"),
    "resources-read-binary": _FIXTURE.format("resource test://static-binary"),
    "resources-templates-read": _FIXTURE.format("template test://template/{id}/data"),
    "prompts-get-simple": _FIXTURE.format("prompt test_simple_prompt"),
    "prompts-get-with-args": _FIXTURE.format("prompt test_prompt_with_arguments"),
    "prompts-get-embedded-resource": _FIXTURE.format("prompt test_prompt_with_embedded_resource"),
    "prompts-get-with-image": _FIXTURE.format("prompt test_prompt_with_image"),
}
_NOT_OURS = "calls the suite's reference {0}, which mcp2repl serve does not have (its tools: run, search_tools, describe_tool, list_servers)"
_NO_RESOURCES = "not claimed: mcp2repl serve declares no `resources`"
_NO_PROMPTS = "not claimed: mcp2repl serve declares no `prompts`"
#: what mcp2repl serve claims: tools (its four), instructions, progress for run, elicitation forwarded from a step;
#: no resources, prompts, logging, completions or sampling of its own
SERVE_NOTES: dict[str, str] = {
    "logging-set-level": "not claimed: mcp2repl serve declares no `logging` capability (a step's output is in its result)",
    "completion-complete": "not claimed: mcp2repl serve declares no `completions` capability",
    "resources-list": _NO_RESOURCES + " (a step reads them: `await mcp.<server>.…` / api)",
    "resources-subscribe": _NO_RESOURCES,
    "resources-unsubscribe": _NO_RESOURCES,
    "prompts-list": _NO_PROMPTS,
    "tools-call-sampling": "not claimed: mcp2repl serve never asks the client for sampling",
    "tools-call-elicitation": _NOT_OURS.format("tool test_elicitation (a step's questions do reach the client as elicitation: tests/serve)"),
    "elicitation-sep1034-defaults": _NOT_OURS.format("tool test_elicitation_sep1034_defaults"),
    "elicitation-sep1330-enums": _NOT_OURS.format("tool test_elicitation_sep1330_enums"),
    "tools-call-simple-text": _NOT_OURS.format("tool test_simple_text"),
    "tools-call-image": _NOT_OURS.format("tool test_image_content (run returns image content: tests/serve)"),
    "tools-call-audio": _NOT_OURS.format("tool test_audio_content"),
    "tools-call-embedded-resource": _NOT_OURS.format("tool test_embedded_resource"),
    "tools-call-mixed-content": _NOT_OURS.format("tool test_multiple_content_types"),
    "tools-call-with-logging": _NOT_OURS.format("tool test_tool_with_logging (and no `logging` capability)"),
    "tools-call-with-progress": _NOT_OURS.format("tool test_tool_with_progress (run sends progress: tests/serve)"),
    "tools-call-error": _NOT_OURS.format("tool test_error_handling"),
    "json-schema-2020-12": _NOT_OURS.format("tool json_schema_2020_12_tool"),
    "server-sse-polling": _NOT_OURS.format("polling tool"),
    "resources-read-text": _NO_RESOURCES,
    "resources-read-binary": _NO_RESOURCES,
    "resources-templates-read": _NO_RESOURCES,
    "prompts-get-simple": _NO_PROMPTS,
    "prompts-get-with-args": _NO_PROMPTS,
    "prompts-get-embedded-resource": _NO_PROMPTS,
    "prompts-get-with-image": _NO_PROMPTS,
}
#: 2026-07-28 scenario families (0.2.0-alpha.12) whose every member needs what neither server claims
PREFIX_NOTES: dict[str, dict[str, str]] = {
    "server": {
        "input-required-result-": "not claimed: the demo never asks the client for input; "
        + _FIXTURE.format("tools that do (test_tool_with_elicitation, …)"),
        "tasks-": "not claimed: the demo has no task tools (the tasks extension); " + _FIXTURE.format("ones (slow_compute, …)"),
    },
    "serve": {
        "input-required-result-": "a step's questions do reach a 2026-07-28 client as InputRequiredResult (tests/serve/test_serve_rounds.py); the scenario "
        + _NOT_OURS.format("tools that ask (test_tool_with_elicitation, …)"),
        "tasks-": "not claimed: mcp2repl serve has no task tools; " + _NOT_OURS.format("ones (slow_compute, …)"),
    },
}
_2026 = {
    "server-stateless": _FIXTURE.format("tools test_missing_capability / test_trigger_tool_change for some of its checks"),
    "http-custom-header-server-validation": _FIXTURE.format("tool with x-mcp-header arguments"),
    "http-header-validation": _FIXTURE.format("tools for its header checks"),
}
SERVER_NOTES.update(_2026)
SERVE_NOTES.update({k: v.replace("the demo (a bookshop) does not have", "mcp2repl serve does not have") for k, v in _2026.items()})
SERVE_NOTES["sep-2164-resource-not-found"] = "not claimed: mcp2repl serve declares no `resources`, so resources/read is an unknown method"

INTRO = """# MCP conformance

`scripts/conformance.sh` runs the official suite, `@modelcontextprotocol/conformance`, in two pinned versions
(each with Node 22, installed from npm into `.cache/conformance/VERSION`), and writes this page:

- **0.1.16**: every scenario it lists, protocol 2025-11-25 and older (the "spec" column).
- **0.2.0-alpha.12**: the scenarios its `requirements/2026-07-28.yaml` requires ("scored"), and those it runs
  and reports but never scores ("not scored (extension | added-after-release | pending)"), all at the 2026-07-28
  wire (`--spec-version 2026-07-28 --force`). The kernel negotiates the revision per server, so the same
  client passes both versions' scenarios.

- **Client scenarios**: the client under test is a real mcp2repl kernel. `scripts/conformance_client.py`
  writes a config whose only server is the scenario's URL (with an `auth` block built from the scenario's
  context: client credentials, a private key, or an authorization-code login through `auth.open_with`),
  starts the kernel with jupyter_client and runs cells that wait for the server and call the scenario's tool.
- **Server scenarios**: the built-in demo server (`python -m mcp_kernel.demo.server --transport streamable-http`).
  The demo is a bookshop, not the suite's reference server: scenarios that call tools, prompts or resources the
  suite's own test server defines (`test_simple_text`, …) fail because the demo does not have them, which says
  nothing about conformance. The demo claims tools (one reports progress, one returns an image), resources
  (no subscriptions) and prompts, and no logging, completions, sampling or elicitation; the reason column says
  which failures are features it does not claim and which need the suite's own fixtures. Everything it claims
  and the suite can check passes (initialize, ping, tools/list, a text tool call, tool errors, resources/list,
  prompts/list, several SSE streams, DNS-rebinding protection).
- **`mcp2repl serve` scenarios**: `mcp2repl serve --http` (the demo behind it) through `scripts/conformance_proxy.py`,
  which adds the bearer token the suite does not send and passes everything else (Host and Origin too) unchanged.
  It claims tools (its own four: `run`, `search_tools`, `describe_tool`, `list_servers`), instructions, progress
  and elicitation from a running step; no resources, prompts, logging or completions of its own (a step reaches the
  upstream servers' ones). Scenarios that call the suite's reference tools get "unknown tool" (a text result with
  `isError`): `tools-call-simple-text` and `tools-call-error` pass on that answer alone, the others fail; the reason
  column names the missing tool, and where the feature is proven instead (tests/serve).

Result: PASS (every check succeeded), WARN (passed with warnings), FAIL (a check failed; the reason is the first
failing check's message), NO RESULT (the runner produced no checks; the reason is the end of its log).
"""


def outcome(folder: Path) -> tuple[str, str]:
    found = sorted(folder.rglob("checks.json"))
    if not found:
        log = (folder / "run.log").read_text(errors="replace").strip().splitlines() if (folder / "run.log").exists() else []
        return "NO RESULT", " ".join(log[-2:])[:300] or "no output"
    checks = json.loads(found[-1].read_text())
    failed = [c for c in checks if c.get("status") in ("FAILURE", "ERROR")]
    warned = [c for c in checks if c.get("status") == "WARNING"]
    if failed:
        first = failed[0]
        message = first.get("errorMessage") or first.get("description") or first.get("name")
        return "FAIL", f"{first.get('id')}: {message}"[:300]
    if warned:
        first = warned[0]
        return "WARN", f"{first.get('id')}: {first.get('errorMessage') or first.get('description')}"[:300]
    return "PASS", f"{sum(c.get('status') == 'SUCCESS' for c in checks)} checks passed"


def table(results: Path, kind: str) -> tuple[list[str], dict[str, int]]:
    listing = results / f"{kind}.txt"
    if not listing.exists():
        return ["(not run)"], {}
    rows = ["| scenario | spec | result | reason |", "|---|---|---|---|"]
    counts: dict[str, int] = {}
    for line in listing.read_text().splitlines():
        name, _, tags = line.partition(" ")
        folder = results / kind / (name.replace("/", "_") if kind == "client" else name)
        if not folder.exists():
            continue
        result, reason = outcome(folder)
        notes = {"client": KNOWN, "server": SERVER_NOTES, "serve": SERVE_NOTES}[kind]
        note = notes.get(name) or next((v for k, v in PREFIX_NOTES.get(kind, {}).items() if name.startswith(k)), None)
        if result != "PASS" and note:
            reason = f"{note} ({reason})"
        key = f"{result} (not scored)" if tags.startswith("not scored") else result
        counts[key] = counts.get(key, 0) + 1
        rows.append(f"| `{name}` | {tags} | {result} | {reason.replace('|', '/').replace(chr(10), ' ')} |")
    return rows, counts


def main(argv: list[str]) -> int:
    root, doc, versions = Path(argv[0]), Path(argv[1]), argv[2:]
    parts = [INTRO]
    sections = (
        ("client", "Client scenarios (mcp2repl kernel as the client)"),
        ("server", "Server scenarios (the demo server)"),
        ("serve", "Server scenarios (mcp2repl serve --http)"),
    )
    for version in versions:
        results = root / version
        node = (results / "node.txt").read_text().strip() if (results / "node.txt").exists() else "?"
        parts.append(f"# Suite {version} (Node {node})\n")
        for kind, title in sections:
            rows, counts = table(results, kind)
            summary = ", ".join(f"{n} {r}" for r, n in sorted(counts.items()))
            parts.append(f"## {title}, {version}\n\n{summary}\n\n" + "\n".join(rows) + "\n")
    doc.write_text("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
