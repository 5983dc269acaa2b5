"""The parts of ``mcp2repl serve`` that need no server: options, content, questions, progress, tokens, idle sessions."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from mcp_kernel.cli.options import UsageError
from mcp_kernel.cli.serve import parse
from mcp_kernel.client.result import StepError, StepResult
from mcp_kernel.serve.asking import question_schema
from mcp_kernel.serve.content import MAX_IMAGES, Images, step_result, step_text
from mcp_kernel.serve.http import security, token_for
from mcp_kernel.serve.options import ServeOptions
from mcp_kernel.serve.progress import StepProgress
from mcp_kernel.serve.sessions import Sessions
from mcp_kernel.serve.tools import INSTRUCTIONS, TOOLS, problem

# ---- options --------------------------------------------------------------------------------------


def test_options_come_from_flags_then_the_environment() -> None:
    env = {"MCP2REPL_CONFIG": "env.json", "MCP2REPL_TIMEOUT": "30", "MCP2REPL_SERVE_TOKEN": "t0ken", "MCP2REPL_IDLE_TIMEOUT": "60"}
    o = parse(["--config", __file__, "--max-output-chars", "5000", "--http", "8123"], env)
    assert (o.config, o.timeout, o.max_output_chars, o.token, o.idle_timeout) == (__file__, 30.0, 5000, "t0ken", 60.0)
    assert o.http == ("127.0.0.1", 8123) and o.session is None
    assert parse(["--http", "[::1]:9000"], {}).http == ("::1", 9000)
    assert parse(["--session", "agent"], {}).session == "agent"
    assert parse([], {"MCP2REPL_SESSION": "from-env"}).session == "from-env"
    assert (parse([], {}).answer_wait, parse([], {"MCP2REPL_ANSWER_WAIT": "90"}).answer_wait) == (600.0, 90.0)
    assert parse(["--answer-wait", "5"], {"MCP2REPL_ANSWER_WAIT": "90"}).answer_wait == 5.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--http", "10.1.2.3:80"], "--http 10.1.2.3:80: 10.1.2.3 is not a loopback address; add --allow-remote to serve other machines"),
        (["--allow-remote"], "--allow-remote is about --http: give --http HOST:PORT"),
        (["--http", "host:port"], "--http host:port: give [HOST:]PORT with a port from 1 to 65535 (0: any free one)"),
        (["--session", "../x"], "invalid session name '../x': use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"),
        (["--timeout", "soon"], "--timeout must be a number, not 'soon'"),
        (["--answer-wait", "later"], "--answer-wait must be a number, not 'later'"),
        (["--max-output-chars", "10"], "--max-output-chars must be at least 200, not 10"),
        (["-e", "1"], "unrecognized arguments: -e 1"),
        (["--config", "/nonexistent/mcp.json"], "--config /nonexistent/mcp.json: no such file"),
    ],
)
def test_bad_options_are_one_line(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse(argv, {})
    assert str(raised.value) == message


def test_a_remote_address_is_allowed_only_when_asked() -> None:
    assert parse(["--http", "0.0.0.0:8000", "--allow-remote"], {}).http == ("0.0.0.0", 8000)
    checks = security("0.0.0.0")
    assert "127.0.0.1:*" in checks.allowed_hosts and "http://localhost:*" in checks.allowed_origins
    assert security("127.0.0.1").allowed_hosts == ["127.0.0.1:*", "localhost:*", "[::1]:*"]


# ---- tools and instructions ------------------------------------------------------------------------


def test_the_tools_and_instructions_stay_small() -> None:
    listed = types.ListToolsResult(tools=TOOLS).model_dump_json(by_alias=True, exclude_none=True)
    assert len(listed.encode()) < 1600, len(listed.encode())
    assert len(INSTRUCTIONS.encode()) < 1200
    assert problem("run", {"code": "1", "data": {"any": ["json"]}, "timeout_s": 2.5, "session": "s"}) is None
    assert problem("describe_tool", {}) == "describe_tool: 'path' is a required property"
    assert problem("search_tools", {"query": "x", "limit": 0}) == "search_tools: argument 'limit': 0 is less than the minimum of 1"


# ---- content ---------------------------------------------------------------------------------------


def test_the_text_says_the_value_once_then_output() -> None:
    handle = {"name": "big.json", "bytes": 12345, "format": "json", "path": ".mcp2repl/artifacts/big.json"}
    r = StepResult(value={"a": 1}, is_json=True, text="{ a: 1 }", stdout="line\n", stderr="warn\n", displays=["shown"], artifacts=[handle], notes=["a note"])
    assert step_text(r) == '{"a":1}\nline\nstderr: warn\nshown\nartifact big.json (12,345 B, json): await api.readArtifact("big.json")\na note'
    assert step_text(StepResult(text="Map(1) { 1 => 2 }")) == "Map(1) { 1 => 2 }"
    assert step_text(StepResult()) == "undefined"
    failed = StepResult(error=StepError("TypeError", "x is not a function", "TypeError: x is not a function\n  at cell[2] line 1, col 1"))
    assert step_text(failed) == "TypeError: x is not a function\n  at cell[2] line 1, col 1"
    assert step_text(StepResult(error=StepError("SessionError", "session 'a' is dead", ""))) == "SessionError: session 'a' is dead"
    result = step_result(failed)
    assert result.is_error is True and result.structured_content == failed.envelope()


def test_images_come_from_displays_and_rich_results() -> None:
    images = Images()
    images.listen("display_data", {"data": {"image/png": "AAAA", "text/plain": "<image/png>"}, "transient": {}})
    html = '<div class="mcp2repl-content"><p>hi</p>\n<img src="data:image/jpeg;base64,BBBB" alt="image/jpeg image"></div>'
    images.listen("execute_result", {"data": {"text/plain": "hi\n<image/jpeg image, 0.0 KB>", "text/html": html}})
    images.listen("display_data", {"data": {"text/plain": "⏳ 1 tool call", "image/png": "CCCC"}, "transient": {"display_id": "mcp2repl-calls-1"}})
    assert images.found == [("image/png", "AAAA"), ("image/jpeg", "BBBB")]
    result = step_result(StepResult(text="hi", displays=["<image/png>"]), images)
    assert [c.type for c in result.content] == ["text", "image", "image"]
    assert result.content[0].text == "hi"  # the image's placeholder text is not repeated
    many = Images()
    for _ in range(MAX_IMAGES + 2):
        many.listen("display_data", {"data": {"image/png": "AAAA"}})
    assert (len(many.found), many.left_out) == (MAX_IMAGES, 2)
    assert step_text(StepResult(), many).endswith("(2 more images left out)")


# ---- questions --------------------------------------------------------------------------------------


def test_questions_become_forms() -> None:
    schema, answer = question_schema("Run echo.delete({}), which may change or delete data? [y/N] ")
    assert schema["properties"] == {"yes": {"type": "boolean", "title": "Yes", "default": False}}
    assert (answer({"yes": True}), answer({"yes": False}), answer({})) == ("y", "n", "n")
    schema, answer = question_schema("Run echo.delete? (call 1 of it in this step)\ny: yes, n: no, a: …, s: … [y/N/a/s] ")  # the approval gate
    assert schema["properties"]["for"]["enum"] == ["this call", "all its calls in this step", "all its calls in this session"]
    assert [answer({"yes": True}), answer({"yes": True, "for": "all its calls in this step"}), answer({"yes": True, "for": "all its calls in this session"})] == ["y", "a", "s"]
    assert (answer({"yes": False, "for": "all its calls in this session"}), answer({})) == ("n", "n")
    schema, answer = question_schema("Pick one [r/g/b]: ")
    assert schema["properties"]["answer"]["enum"] == ["r", "g", "b"] and "default" not in schema["properties"]["answer"]
    assert answer({"answer": "g"}) == "g"
    schema, answer = question_schema("name (string, required): ")
    assert schema["properties"]["answer"]["type"] == "string" and answer({"answer": "Ada"}) == "Ada"


# ---- progress ---------------------------------------------------------------------------------------


def test_progress_is_rate_limited_and_kept_alive() -> None:
    async def scenario() -> list[tuple[float, str]]:
        sent: list[tuple[float, str]] = []

        async def send(n: float, message: str) -> None:
            sent.append((n, message))

        progress = StepProgress(send, keepalive=1.0)
        task = asyncio.ensure_future(progress.run())
        for i in range(40):  # a display update every 10 ms for 0.4 s
            progress.listen("update_display_data", {"data": {"text/plain": f"⏳ {i} tool calls\n  ███░ 30%"}, "transient": {"display_id": "mcp2repl-calls-x"}})
            progress.listen("display_data", {"data": {"text/plain": "not the trace"}, "transient": {}})
            await asyncio.sleep(0.01)
        await asyncio.sleep(2.6)  # then nothing: keepalives
        task.cancel()
        return sent

    started = time.monotonic()
    sent = asyncio.run(scenario())
    elapsed = time.monotonic() - started
    assert [n for n, _ in sent] == [float(i) for i in range(1, len(sent) + 1)]
    assert len(sent) <= 2 * elapsed + 1, (len(sent), elapsed)
    assert "tool calls · ███░ 30%" in sent[0][1]
    assert len(sent) >= 3  # news, then at least two keepalives in 2.6 s of silence


# ---- tokens and idle sessions ---------------------------------------------------------------------------


def test_a_generated_token_is_owner_only_and_kept(tmp_path: Path) -> None:
    token, path = token_for(None, tmp_path)
    assert path == tmp_path / ".mcp2repl" / "serve-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert token_for(None, tmp_path) == (token, path)  # kept across restarts
    os.chmod(path, 0o644)  # readable by others: not trusted, replaced
    again, _ = token_for(None, tmp_path)
    assert again != token and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert token_for("given", tmp_path) == ("given", None)


class _Stub:
    def __init__(self, idle_for: float, busy: bool = False) -> None:
        self.label, self.busy, self.last_used, self.closed = "stub", busy, time.monotonic() - idle_for, False

    async def close(self) -> None:
        self.closed = True


def test_idle_in_process_sessions_are_closed(tmp_path: Path) -> None:
    sessions = Sessions(ServeOptions(cwd=tmp_path, idle_timeout=60))
    stubs: dict[str, Any] = {"old": _Stub(120), "fresh": _Stub(5), "running": _Stub(120, busy=True)}
    sessions.connections.update(stubs)
    assert asyncio.run(sessions.close_idle()) == ["old"]
    assert stubs["old"].closed and set(sessions.connections) == {"fresh", "running"}
    with pytest.raises(ValueError, match="invalid session name"):
        sessions.by_name("no/slashes")


def test_the_documented_client_configs_parse_and_their_args_are_accepted() -> None:
    """Every config snippet of docs/serve.md and the README is valid JSON/TOML, and its serve arguments parse."""
    import json
    import re
    import tomllib

    root = Path(__file__).resolve().parents[2]
    docs = (root / "docs" / "serve.md").read_text() + (root / "README.md").read_text()
    blocks = re.findall(r"```(json|toml)\n(.*?)```", docs, re.S)
    argvs = []
    for kind, body in blocks:
        config = json.loads(body) if kind == "json" else tomllib.loads(body)
        for table in ("mcpServers", "servers", "mcp_servers"):
            for entry in (config.get(table) or {}).values():
                if entry.get("args", [""])[0] == "serve":
                    argvs.append(entry["args"][1:])
    assert len(argvs) >= 6, argvs
    for argv in argvs:
        try:
            parse(argv, {})
        except UsageError as exc:  # the example's config file is the reader's own: everything else must parse
            assert str(exc).endswith(": no such file") and str(exc).startswith("--config "), (argv, exc)
