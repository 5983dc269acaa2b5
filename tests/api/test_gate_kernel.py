"""The approval gate and the transfer budget, as a notebook user meets them (a real kernel, stdin included)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ECHO, SERVERS, KernelProcess, SessionHarness
from kernels import configured, converse

NAMED = str(SERVERS / "named_server.py")
SECRET = "s3cr3t-value-123"
#: The last line of every call's approval prompt: the answers a person (or a script) may give.
CHOICES = "y: yes, n: no, a: all its calls in this step, s: all its calls in this session [y/N/a/s] "


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    config = {
        "confirm_destructive": True,
        "mcpServers": {
            "echo": {"command": sys.executable, "args": [ECHO]},
            "trusted": {"command": sys.executable, "args": [ECHO], "allow_destructive": ["delete"]},
            "named": {"command": sys.executable, "args": [NAMED, "--destructive", "wipe"], "env": {"NAMED_KEY": SECRET}},
        },
    }
    with configured(tmp_path_factory.mktemp("gate"), config) as kernel:
        yield kernel


def run_answering(k: KernelProcess, code: str, answer: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """Execute with stdin allowed, answering its one input request with ``answer``."""
    talk = converse(k, code, [answer])
    return talk.reply, talk.outputs, talk.prompts


def test_destructive_tools_ask_first(k: KernelProcess) -> None:
    reply, outputs, prompts = run_answering(k, "await mcp.echo.delete_({ key: 'k1' })", "y")
    assert prompts == ['Run echo.delete, which may change or delete data? (call 1 of it in this step)\n  key: "k1"\n' + CHOICES]
    assert outputs[-1]["data"]["text/plain"] == "'deleted k1'"
    reply, outputs, _ = run_answering(k, "await mcp.echo.delete_({ key: 'k2' })", "no")
    assert (reply["ename"], reply["evalue"]) == ("ToolError", "not run (declined at the prompt)")


def test_the_prompt_shows_every_argument_bounded_and_escaped(k: KernelProcess) -> None:
    """Regression: the prompt cut the arguments' JSON at 200 characters, so a long harmless ``note``
    first hid ``path: '/home/everything'`` and the person said yes; bidi controls went in raw."""
    code = (
        "await mcp.named.wipe({ note: 'harmless '.repeat(40), path: '/home/everything', why: 'txt\\u202egnp.exe \\x1b[2J',"
        " options: { pad: 'p'.repeat(200), recursive: true }, token: 'a'.repeat(110) + " + json.dumps(SECRET) + " })"
    )
    reply, _, prompts = run_answering(k, code, "n")
    assert (reply["ename"], reply["evalue"]) == ("ToolError", "not run (declined at the prompt)")
    assert prompts == [
        "Run named.wipe, which may change or delete data? (call 1 of it in this step)\n"
        f'  note: "{"harmless " * 13}ha… (+242 characters)\n'
        '  path: "/home/everything"\n'
        '  why: "txt\\u202egnp.exe \\u001b[2J"\n'  # JSON escapes ESC; the right-to-left override is shown escaped too
        f'  options.pad: "{"p" * 119}… (+82 characters)\n'  # a long object is listed member by member
        "  options.recursive: true\n"
        f'  token: "{"a" * 110}[redacted… (+2 characters)\n'  # masked before it is cut: no piece of the secret shows
        + CHOICES
    ]
    many = "{" + ", ".join(f"a{i}: {i}" for i in range(25)) + "}"
    _, _, prompts = run_answering(k, f"await mcp.named.wipe({many})", "n")
    assert prompts[0].endswith("  a19: 19\n  (+5 more arguments)\n" + CHOICES)
    _, _, prompts = run_answering(k, "await mcp.named.wipe()", "n")
    assert prompts == ["Run named.wipe (no arguments), which may change or delete data? (call 1 of it in this step)\n" + CHOICES]


def test_without_stdin_the_gate_refuses_unless_the_tool_is_allowed(k: KernelProcess) -> None:
    cell = k.run("await mcp.echo.delete_({ key: 'k3' })")  # execute() without allow_stdin, like papermill
    assert cell.error["ename"] == "ToolError"
    assert cell.error["evalue"].startswith("echo.delete may change or delete data, and this session asks before running such tools")
    assert k.value("await mcp.trusted.delete_({ key: 'k4' })") == "'deleted k4'"
    # a tool not marked read-only may write: by MCP's defaults it is destructive, so it asks too (issue 25)
    assert k.run("await mcp.echo.add({ a: 1, b: 1 })").reply["evalue"].startswith("echo.add may change or delete data, and this session asks")


def test_the_transfer_budget_stops_a_cell_that_pulls_in_too_much(tmp_path: Path) -> None:
    s = SessionHarness(tmp_path, {"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}}, transfer_budget_mb=1)
    try:
        result, _ = s.run("const a = await mcp.echo.big({ kb: 600 }); const b = await mcp.echo.big({ kb: 600 })")
        assert result.error.name == "ToolError"
        # a 600 KB JSON text counts as what it is, not as its escaped copy inside a JSON reply
        assert result.error.traceback[0].startswith("ToolError: echo.big: this result (0.6 MiB) takes the cell's tool results to 1.2 MiB, past the transfer budget of 1 MiB")
        assert s.value("JSON.stringify(await mcp.echo.big({ kb: 600 })).length > 500000") == "true"  # a new cell has a new budget
        assert s.value("let c; try { await mcp.echo.big({kb: 900}); await mcp.echo.big({kb: 900}) } catch (e) { c = e.code }; c") == "'intermediate_result_too_large'"
    finally:
        s.close()


def test_one_transfer_budget_covers_resources_prompts_and_late_calls(tmp_path: Path) -> None:
    """Issue 22, item 8: resources.read pulled 64 MiB past an 8 MiB budget, and a timer's calls after its cell ended 18 MiB."""
    s = SessionHarness(tmp_path, {"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}}, transfer_budget_mb=1)
    try:
        result, _ = s.run("const r1 = await mcp.echo.resources.read('big://600'); const r2 = await mcp.echo.resources.read('big://600')")
        assert (result.error.name, result.error.extra.get("code")) == ("ToolError", "intermediate_result_too_large")
        assert result.error.message.startswith("echo: this result (0.6 MiB) takes the cell's tool results to 1.2 MiB, past the transfer budget of 1 MiB per cell")
        result, _ = s.run("const p1 = await mcp.echo.prompts.get('big_prompt', { kb: '700' }); await mcp.echo.big({ kb: 500 })")
        assert result.error.extra.get("code") == "intermediate_result_too_large"  # prompts and tool results share it
        # calls made by a timer after its cell ended count against that cell
        s.value("globalThis.late = []; setInterval(async () => { try { late.push((await mcp.echo.big({ kb: 300 })).kb) } catch (e) { late.push(e.code) } }, 5); 'started'")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "intermediate_result_too_large" not in (s.value("JSON.stringify(late)") or ""):
            time.sleep(0.2)
        late = json.loads(s.value("JSON.stringify(late)").strip("'"))
        assert "intermediate_result_too_large" in late, f"the timer's calls were never stopped within 60 s: {late}"
        assert late.index("intermediate_result_too_large") == 3  # 3 x 300 KiB fit in 1 MiB, the 4th does not
        s.value("for (let i = 1; i < 10000; i++) clearInterval(i)")
        assert s.value("(await mcp.echo.resources.read('big://600')).length") == str(600 * 1024)  # a new cell, a new budget
    finally:
        s.close()
