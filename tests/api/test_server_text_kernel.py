"""A server's words reach a person escaped, on every channel (a real kernel; tests/fixtures/servers/loud_server.py).

The fixture puts the same loud text everywhere: ANSI that clears the screen, OSC 52 that writes the
clipboard, a right-to-left override, a zero-width space, a carriage return, and a second line that
starts like the kernel's own notices. A terminal showing any of it raw would run the escapes;
here each arrives escaped, and the fake line is marked as the server's.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import SERVERS, KernelProcess
from kernels import configured, converse

from mcp_kernel.api.login import link_bundle

LOUD_SERVER = str(SERVERS / "loud_server.py")
#: the fixture's LOUD as shown on one line (field titles, progress, quoted messages)
ONE_LINE = r"Clear\x1b[2J\x1b[H, clip \x1b]52;c;cHduZWQ=\x07 gnp.exe\u202e\u200b\rback\n[mcp2repl] all good, answer y"
#: as shown where a server's text may have lines (a message, a log line): the fake line is marked
LINES = r"Clear\x1b[2J\x1b[H, clip \x1b]52;c;cHduZWQ=\x07 gnp.exe\u202e\u200b\rback" + "\n[loud] [mcp2repl] all good, answer y"
#: the fixture's LOUD as it is sent
LOUD = "Clear\x1b[2J\x1b[H, clip \x1b]52;c;cHduZWQ=\x07 gnp.exe\u202e\u200b\rback\n[mcp2repl] all good, answer y"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    with configured(tmp_path_factory.mktemp("loud"), {"mcpServers": {"loud": {"command": sys.executable, "args": [LOUD_SERVER]}}}) as kernel:
        yield kernel


def run_answering(k: KernelProcess, code: str, answers: list[str]) -> tuple[dict[str, Any], str, list[str]]:
    """Execute as a person at a terminal would (stdin allowed), answering in order; (reply, stderr, prompts)."""
    talk = converse(k, code, answers)
    return talk.reply, talk.stderr, talk.prompts


def test_an_elicitation_dialog_shows_the_servers_words_escaped(k: KernelProcess) -> None:
    reply, stderr, prompts = run_answering(k, "await mcp.loud.ask()", ["y", "Ada"])
    assert reply["status"] == "ok"
    assert stderr == (
        f'[mcp2repl] MCP server "loud" asks: Who? {LINES}\n'
        f"  name “Title {ONE_LINE}” (string): Describe {ONE_LINE}\n"
    )
    assert prompts == ['Answer "loud"? [y]es / [n]o (decline) / [c]ancel: ', "name (string): "]


def test_a_log_line_shows_escaped_with_the_fake_line_marked(k: KernelProcess) -> None:
    """A server's first error log of a cell is its one line on the cell's stderr (others: api.serverLog)."""
    cell = k.run("await mcp.loud.log()")
    note = f"[loud] error: Log {LINES.replace(chr(10), ' ')} (its log: await api.serverLog('loud'))\n"  # one line, the fake one marked
    assert (cell.text, cell.stderr) == ("'logged'", note), repr(cell.stderr)


def test_progress_lines_show_escaped(k: KernelProcess) -> None:
    reply, stderr, _ = run_answering(k, "await mcp.loud.progress()", [])  # a terminal client: progress on stderr
    assert reply["status"] == "ok"
    assert stderr == f"[loud.progress] 50% Step {ONE_LINE}\n"


def test_a_notice_quoting_the_servers_stderr_shows_it_escaped(k: KernelProcess) -> None:
    cell = k.run("await mcp.loud.die()")
    start = 'MCP server "loud" disconnected during die: the server closed the connection (its process exited with status 4) (server stderr: '
    # the last lines of its log (log notifications of earlier tests go there too), split at the carriage return
    # too; lines that start like ours are left out
    end = r"Dying Clear\x1b[2J\x1b[H, clip \x1b]52;c;cHduZWQ=\x07 gnp.exe\u202e\u200b | back)"
    evalue = cell.error["evalue"]
    assert evalue.startswith(start) and evalue.endswith(end), evalue
    assert cell.stderr == f'[mcp2repl] MCP server "loud" disconnected: {evalue.split("during die: ")[1]}\n'
    for text in (cell.stderr, *cell.error["traceback"]):
        assert not RAW.search(text.replace("\n", "")), text


@pytest.mark.parametrize(("tool", "said"), [("fail", "Failed"), ("refuse", "Refused")])
def test_a_tool_error_shows_escaped_and_stays_raw_for_code(k: KernelProcess, tool: str, said: str) -> None:
    """Issue 22, item 12: a tool's error text (an isError result, a JSON-RPC error) reached the traceback raw."""
    cell = k.run(f"await mcp.loud.{tool}()")
    assert (cell.error["ename"], cell.error["evalue"]) == ("ToolError", f"{said} {LINES}")
    assert cell.error["traceback"][:2] == f"ToolError: loud.{tool}: {said} {LINES}".split("\n")
    for text in cell.error["traceback"]:
        assert not RAW.search(text), text
    # code that catches the error gets the server's text as it was sent
    caught = k.run(f"let m; try {{ await mcp.loud.{tool}() }} catch (e) {{ m = e.message }}; m === {json.dumps(f'{said} {LOUD}')}")
    assert caught.text == "true"


def test_an_uncaught_tool_error_shows_escaped_on_stderr(k: KernelProcess) -> None:
    cell = k.run("mcp.loud.fail(); await sleep(500); 'next'")
    assert cell.text == "'next'"
    frames = "  at cell[N] line 1, col 10\n    mcp.loud.fail(); await sleep(500); 'next'\n             ^\n"  # the call's own place
    count = cell.reply["execution_count"]
    assert cell.stderr == f"Uncaught (in promise) ToolError: loud.fail: Failed {LINES}\n" + frames.replace("cell[N]", f"cell[{count}]"), cell.stderr


def test_a_login_link_shows_escaped() -> None:
    """The URL comes from the server's authorization metadata (in-process: the OAuth flow checks URLs itself)."""
    bundle = link_bundle("web", "https://auth.example/login?\x1b]52;c;cHduZWQ=\x07\u202e")
    assert bundle["text/plain"].endswith("\nhttps://auth.example/login?\\x1b]52;c;cHduZWQ=\\x07\\u202e")
    assert not RAW.search(bundle["text/plain"] + bundle["text/html"])

