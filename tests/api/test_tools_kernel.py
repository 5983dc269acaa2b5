"""MCP servers seen through a real mcp2repl kernel: what a user gets in cells, banners and notebooks.

Kernels are started with jupyter_client (or nbclient) exactly as a frontend would, each in its own
working directory with ``XDG_CONFIG_HOME`` pointing at an empty folder, so only the config written
by the test is found. Starting a kernel costs ~1.5 s and every stdio server ~1 s, so most checks
share one module-scoped kernel (``main``) whose ``mcp.json`` (Claude/Cursor ``mcpServers`` format)
lists the fixture servers over all three transports plus two broken entries. Other config
formats, the demo fallback and process clean-up get small kernels of their own.

"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import psutil
import pytest
from conftest import OWN_VARS, Interrupter, is_call_trace
from conftest import KernelProcess as Kernel
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "fixtures" / "servers"
ECHO = str(SERVERS / "echo_server.py")
EVERYTHING = ROOT / "tests" / "fixtures" / "node" / "node_modules" / ".bin" / "mcp-server-everything"
PY = sys.executable
TINY_PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR42mP4z8DAAMIM/4EAAB/uBfvxq7p3AAAAAElFTkSuQmCC"
GHOST = "/nonexistent/mcp2repl-ghost-server"
#: Tools of echo_server.py that the HTTP and SSE copies hide, so only some names are ambiguous.
HTTP_BLOCKED = ["sleep", "fail", "big", "stderr_noise", "get-weather.v2", "delete"]

pytestmark = pytest.mark.timeout(120)

#: Serves echo_server.py over HTTP or SSE, answering 401 unless X-Fixture-Token is right.
HEADER_GUARD = """
import sys
sys.path.insert(0, sys.argv[4])
import uvicorn
from echo_server import server

transport, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
app = server.streamable_http_app() if transport == "streamable-http" else server.sse_app()


async def guarded(scope, receive, send):
    if scope["type"] == "http" and dict(scope["headers"]).get(b"x-fixture-token") != token:
        await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"missing or wrong X-Fixture-Token"})
        return
    await app(scope, receive, send)


uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")
"""


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(pids: list[int], seconds: float = 30.0) -> list[int]:  # servers exit on their own after a shutdown (supervisor.py)
    deadline = time.monotonic() + seconds
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if alive(p)]
    return left


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(proc: subprocess.Popen[bytes], port: int, log: Path, seconds: float = 120) -> None:
    """Until the HTTP server listens (a Python server took 9 s to come up at load 22: generous)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server on port {port} exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"server on port {port} did not listen within {seconds:g} s:\n{log.read_text()}")


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------
# The main kernel: mcpServers format, every fixture server, all transports
# --------------------------------------------------------------------------------------


class Main:
    def __init__(self, kernel: Kernel, folder: Path, http_port: int, token: str) -> None:
        self.kernel = kernel
        self.folder = folder
        self.http_port = http_port
        self.token = token


@pytest.fixture(scope="module")
def main(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Main]:
    folder = tmp_path_factory.mktemp("main")
    token = uuid.uuid4().hex
    guard = folder / "header_guard.py"
    guard.write_text(HEADER_GUARD, encoding="utf-8")
    http_port, sse_port = free_port(), free_port()
    procs: list[subprocess.Popen[bytes]] = []
    logs = {"http": folder / "http.log", "sse": folder / "sse.log"}
    with open(logs["http"], "wb") as http_log, open(logs["sse"], "wb") as sse_log:
        procs.append(
            subprocess.Popen([PY, str(guard), "streamable-http", str(http_port), token, str(SERVERS)], stdout=http_log, stderr=http_log)
        )
        procs.append(subprocess.Popen([PY, ECHO, "--transport", "sse", "--port", str(sse_port)], stdout=sse_log, stderr=sse_log))
    kernel = None
    try:
        (folder / "echo_path.txt").write_text(ECHO + "\n", encoding="utf-8")
        (folder / "token.txt").write_text("file-token\n", encoding="utf-8")
        config = {
            "allow_connect": "any",  # these tests connect servers from cells; tests/test_sandbox.py covers the default
            "mcpServers": {
                "echo": {
                    "command": "${MCP2REPL_TEST_PYTHON}",
                    "args": ["{file:echo_path.txt}", "--host", "${MCP2REPL_TEST_UNSET:-main-default-mark}"],
                    "env": {"ECHO_TOKEN": "{file:token.txt}", "ECHO_USER": "{env:MCP2REPL_TEST_USER}"},
                },
                "web": {
                    "type": "http",
                    "url": f"http://127.0.0.1:{http_port}/mcp",
                    "headers": {"X-Fixture-Token": "${MCP2REPL_TEST_TOKEN}"},
                    "blocked_tools": HTTP_BLOCKED,
                },
                "stream": {"url": f"http://127.0.0.1:{sse_port}/sse", "blocked_tools": [*HTTP_BLOCKED, "image"]},
                "crashy": {"command": PY, "args": [str(SERVERS / "crashing_server.py")]},
                "hangy": {"command": PY, "args": [str(SERVERS / "hanging_server.py")]},
                "paged": {"command": PY, "args": [str(SERVERS / "paginated_server.py")]},
                "time": {"command": PY, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
                "nocmd": {"type": "stdio", "args": ["server.py"]},
                "ghost": {"command": GHOST},
            },
        }
        write_json(folder / "mcp.json", config)
        for proc, port, log in zip(procs, (http_port, sse_port), logs.values(), strict=True):
            wait_listening(proc, port, log)
        env = {"MCP2REPL_TEST_PYTHON": PY, "MCP2REPL_TEST_USER": "grace", "MCP2REPL_TEST_TOKEN": token}
        kernel = Kernel(folder, env)
        kernel.wait_for_servers()
        yield Main(kernel, folder, http_port, token)
    finally:
        if kernel is not None:
            kernel.close()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()


# ---- 2, 3, 4: config, banner, transports --------------------------------------------------


def test_banner_lists_each_server_with_its_state(main: Main) -> None:
    lines = main.kernel.banner()
    assert lines[:9] == [
        f"MCP servers from {main.folder / 'mcp.json'}:",
        "  echo (stdio) ready, 9 tools",
        "  web (http) ready, 3 tools",
        "  stream (sse) ready, 2 tools",
        "  crashy (stdio) ready, 2 tools",
        "  hangy (stdio) ready, 2 tools",
        "  paged (stdio) ready, 25 tools",
        "  time (stdio) ready, 2 tools",
        '  nocmd (stdio) error: mcp.json: server "nocmd": "command" is missing (a stdio server needs a command to run)',
    ]
    assert lines[9].startswith("  ghost (stdio) error: ")
    assert lines[9].endswith(f"(server stderr: cannot start '{GHOST}': No such file or directory)")
    assert len(lines) == 10


def test_api_servers_reports_each_state_and_reason(main: Main) -> None:
    servers = main.kernel.json("await api.servers()")
    source = str(main.folder / "mcp.json")
    modern, legacy = "2026-07-28", "2025-11-25"  # SDK 2.3 servers (the fixtures, mcp-time) speak 2026-07-28, but not over HTTP+SSE
    good = [
        ("echo", "stdio", 9, "echo-fixture", modern),
        ("web", "http", 3, "echo-fixture", modern),
        ("stream", "sse", 2, "echo-fixture", legacy),
        ("crashy", "stdio", 2, "crashing-fixture", modern),
        ("hangy", "stdio", 2, "hanging-fixture", modern),
        ("paged", "stdio", 25, "paginated-fixture", modern),
        ("time", "stdio", 2, "mcp-time", modern),
    ]
    expected = [
        {"name": n, "transport": t, "state": "ready", "tools": k, "source": source, "description": "", "server": s, "protocol": p, "lastError": None}
        for n, t, k, s, p in good
    ]
    expected.append(
        {
            "name": "nocmd",
            "transport": "stdio",
            "state": "error",
            "tools": 0,
            "source": source,
            "description": "",
            "server": None,
            "protocol": None,
            "lastError": 'mcp.json: server "nocmd": "command" is missing (a stdio server needs a command to run)',
        }
    )
    assert servers[:8] == expected
    ghost = servers[8]
    assert {k: v for k, v in ghost.items() if k != "lastError"} == {
        "name": "ghost",
        "transport": "stdio",
        "state": "error",
        "tools": 0,
        "source": source,
        "description": "",
        "server": None,
        "protocol": None,
    }
    assert ghost["lastError"].endswith(f"(server stderr: cannot start '{GHOST}': No such file or directory)")
    assert len(servers) == 9


def test_failed_server_reason_is_not_an_internal_error(main: Main) -> None:
    ghost = next(line for line in main.kernel.banner() if line.startswith("  ghost "))
    last_error = main.kernel.json("[(await api.servers()).find((s) => s.name === 'ghost').lastError]")[0]
    for text in (ghost, last_error):
        assert "cancel scope" not in text
        assert f"cannot start '{GHOST}': No such file or directory" in text


def test_calling_a_failed_server_says_why(main: Main) -> None:
    error = main.kernel.run("await mcp.nocmd.run({})").error
    assert '"command" is missing' in error["evalue"]


def test_good_server_works_next_to_broken_ones(main: Main) -> None:
    assert main.kernel.value("await mcp.echo.echo({text: 'still fine'})") == "'still fine'"


def test_mcp_servers_format_substitutes_env_and_files(main: Main) -> None:
    proc = main.kernel.server_process("echo_server.py", "main-default-mark")
    assert proc.cmdline() == [PY, ECHO, "--host", "main-default-mark"]
    env = proc.environ()
    assert (env["ECHO_TOKEN"], env["ECHO_USER"]) == ("file-token", "grace")


def test_stdio_http_and_sse_transports(main: Main) -> None:
    k = main.kernel
    assert k.value("await mcp.echo.add({a: 2, b: 3})") == "{ sum: 5 }"
    assert k.value("await mcp.web.add({a: 2, b: 3})") == "{ sum: 5 }"
    assert k.value("await mcp.stream.add({a: 2, b: 3})") == "{ sum: 5 }"
    assert k.value("await mcp.web.echo({text: 'over http'})") == "'over http'"
    assert k.value("await mcp.stream.echo({text: 'over sse'})") == "'over sse'"
    assert k.value("(await mcp.web.image()).mimeType") == "'image/png'"
    assert k.json("Object.keys(mcp.web)") == ["add", "echo", "image"]
    assert k.json("Object.keys(mcp.stream)") == ["add", "echo"]


def test_http_headers_from_config_are_sent(main: Main) -> None:
    """The HTTP server answers 401 without the token, so the config's header is what lets `web` in."""
    url = f"http://127.0.0.1:{main.http_port}/mcp"
    cell = main.kernel.run(f"try {{ await api.connect('nohdr', {{url: '{url}'}}) }} finally {{ await api.disconnect('nohdr') }}")
    assert cell.error["ename"] == "Error"
    assert cell.error["evalue"].startswith('api.connect("nohdr"): MCP server "nohdr" is unavailable: ')
    code = f"const hdr = await api.connect('hdr', {{url: '{url}', headers: {{'X-Fixture-Token': '{main.token}'}}}}); await api.disconnect('hdr'); hdr"
    assert main.kernel.json(code) == {
        "name": "hdr",
        "state": "ready",
        "tools": ["echo", "add", "sleep", "fail", "big", "image", "stderr_noise", "get-weather.v2", "delete"],
    }


def test_http_auth_failure_names_the_status(main: Main) -> None:
    url = f"http://127.0.0.1:{main.http_port}/mcp"
    cell = main.kernel.run(f"try {{ await api.connect('nohdr2', {{url: '{url}'}}) }} finally {{ await api.disconnect('nohdr2') }}")
    assert "cancel scope" not in cell.error["evalue"]
    assert "401" in cell.error["evalue"]


# ---- 5: naming ---------------------------------------------------------------------------


def test_tool_names_that_are_not_identifiers(main: Main) -> None:
    k = main.kernel
    paris = "{ city: 'Paris', temperature_c: 5, conditions: 'cloudy' }"
    assert k.value("await tools.get_weather_v2({city: 'Paris'})") == paris
    assert k.value("await mcp.echo.get_weather_v2({city: 'Paris'})") == paris
    assert k.value("await mcp.tools['get-weather.v2']({city: 'Oslo'})") == "{ city: 'Oslo', temperature_c: 28, conditions: 'sunny' }"
    assert (
        k.value("await api.callTool('echo', 'get-weather.v2', {city: 'Rome'})")
        == "{ city: 'Rome', temperature_c: 28, conditions: 'sunny' }"
    )
    assert k.value("await tools.delete_({key: 'k1'})") == "'deleted k1'"
    assert k.value("await mcp.echo.delete_({key: 'k2'})") == "'deleted k2'"
    assert k.value("await mcp.tools['echo.delete']({key: 'k3'})") == "'deleted k3'"
    assert k.value("await mcp.call('echo.add', {a: 1, b: 2})") == "{ sum: 3 }"
    assert k.value("await mcp.call('get-weather.v2', {city: 'Paris'})") == paris
    assert k.json("['get_weather_v2', 'delete_', 'delete'].map((n) => n in tools)") == [True, True, False]


def test_server_namespace_accepts_the_real_tool_name(main: Main) -> None:
    assert (
        main.kernel.value("await mcp.echo['get-weather.v2']({city: 'Paris'})")
        == "{ city: 'Paris', temperature_c: 5, conditions: 'cloudy' }"
    )


def test_same_tool_on_several_servers_is_ambiguous(main: Main) -> None:
    expected = '"add" is ambiguous: 3 servers have it. Call one of: mcp.echo.add(…), mcp.web.add(…), mcp.stream.add(…), or mcp.call("server.add", …)'
    for code in ("await tools.add({a: 1, b: 2})", "await mcp.call('add', {a: 1, b: 2})", "await mcp.tools.add({a: 1, b: 2})"):
        error = main.kernel.run(code).error
        assert (error["ename"], error["evalue"]) == ("TypeError", expected), code
        assert error["traceback"][0] == f"TypeError: {expected}"
    # the name exists (on several servers), listed nowhere as a single tool
    assert main.kernel.json("[typeof tools.add, Object.keys(tools).includes('add')]") == ["function", False]
    # the name is resolved before the arguments are checked
    assert main.kernel.run("await tools.add({a: 'not a number'})").error["evalue"] == expected
    assert main.kernel.value("await mcp.call('web.add', {a: 1, b: 2})") == "{ sum: 3 }"


def test_unknown_tool_suggests_close_names(main: Main) -> None:
    # unknown names are undefined (feature detection); calling one anyway gets the catalog's hint
    error = main.kernel.run("await mcp.echo.ech({text: 'x'})").error
    assert error["ename"] == "TypeError"
    assert error["evalue"].startswith('mcp.echo.ech is not a function. Unknown MCP tool mcp.echo.ech on server "echo". Did you mean echo?')
    error = main.kernel.run("await tools.get_wether_v2({city: 'x'})").error
    assert error["ename"] == "TypeError"
    assert error["evalue"].startswith("tools.get_wether_v2 is not a function. Unknown MCP tool tools.get_wether_v2. Did you mean get_weather_v2, get-weather.v2?")
    error = main.kernel.run("await mcp.nosuch.tool({})").error
    assert error["evalue"].startswith(
        "Cannot read properties of undefined (reading 'tool'). Unknown MCP server mcp.nosuch. Servers: mcp.echo, mcp.web, mcp.stream, mcp.crashy"
    )


def test_unknown_tool_hint_names_real_functions(main: Main) -> None:
    evalue = main.kernel.run("await mcp.echo.ech({text: 'x'})").error["evalue"]
    assert "api.searchTools" in evalue
    assert main.kernel.json("[typeof api.searchTools, typeof api.listTools]") == ["function", "function"]


# ---- 6: validation -----------------------------------------------------------------------

ADD_SIGNATURE = "  Signature: add(args: { a: number; b: number }): Promise<{ sum: number }>"
ECHO_SIGNATURE = "  Signature: echo(args: { text: string }): Promise<unknown>"


@pytest.mark.parametrize(
    ("code", "first", "rest"),
    [
        ("await mcp.echo.add({a: 'x', b: 2})", 'mcp.echo.add: argument "a" must be number, got string "x"', [ADD_SIGNATURE]),
        ("await mcp.echo.echo({})", 'mcp.echo.echo: missing required argument "text"', [ECHO_SIGNATURE]),
        ("await mcp.echo.echo({text: 'a', zzz: 1})", "mcp.echo.echo: unknown argument 'zzz' (allowed: text)", [ECHO_SIGNATURE]),
        (
            "await mcp.echo.echo({txt: 'a'})",
            'mcp.echo.echo: missing required argument "text"',
            ["  also: unknown argument 'txt' (did you mean 'text'? allowed: text)", ECHO_SIGNATURE],
        ),
    ],
    ids=["wrong-type", "missing", "unknown", "typo"],
)
def test_arguments_are_checked_before_the_call(main: Main, code: str, first: str, rest: list[str]) -> None:
    error = main.kernel.run(code).error
    assert error["ename"] == "TypeError"
    assert error["evalue"] == "\n".join([first, *rest])
    assert error["traceback"][: 1 + len(rest)] == [f"TypeError: {first}", *rest]


def test_invalid_arguments_never_reach_the_server(main: Main) -> None:
    code = "try { await mcp.echo.add({a: 'x', b: 2}) } catch (e) {}\ntry { await mcp.echo.echo({}) } catch (e) {}\nawait api.calls()"
    assert main.kernel.json(code) == []
    calls = main.kernel.json("await mcp.echo.add({a: 1, b: 1}); (await api.calls()).map((c) => [c.server, c.tool, c.ok])")
    assert calls == [["echo", "add", True]]


def test_non_object_arguments_are_refused(main: Main) -> None:
    error = main.kernel.run("await mcp.echo.echo('hi')").error
    assert (error["ename"], error["evalue"]) == (
        "TypeError",
        "mcp.echo.echo expects one argument object, like mcp.echo.echo({ key: value }); got 'hi'",
    )


# ---- 7: results --------------------------------------------------------------------------


def test_result_shapes(main: Main) -> None:
    k = main.kernel
    assert k.run("await mcp.echo.add({a: 1.5, b: 2})").result == {"text/plain": "{ sum: 3.5 }", "application/json": {"sum": 3.5}}
    assert k.value("await mcp.echo.sleep({ms: 1})") == "{ result: 1 }"
    assert k.value("""await mcp.echo.echo({text: '{"a": [1, 2], "b": null}'})""") == "{ a: [ 1, 2 ], b: null }"
    assert k.value("await mcp.echo.echo({text: '42'})") == "42"
    assert k.value("await mcp.echo.echo({text: 'hello world'})") == "'hello world'"
    assert k.value("await mcp.echo.echo({text: '[not json'})") == "'[not json'"
    # an image item is kept as {type, data, mimeType} and shown as the image itself
    assert k.run("await mcp.echo.image()").result == {"text/plain": "<image/png image, 0.1 KB>", "image/png": TINY_PNG_B64}
    code = f"const img = await mcp.echo.image();\n[Object.keys(img), img.type, img.mimeType, img.data === '{TINY_PNG_B64}']"
    assert k.json(code) == [["type", "data", "mimeType"], "image", "image/png", True]


def test_raw_mode_and_unwrap(main: Main) -> None:
    k = main.kernel
    assert k.json("await mcp.echo.add({a: 1, b: 2}, {raw: true})") == {
        "content": [{"type": "text", "text": '{\n  "sum": 3.0\n}'}],
        "structuredContent": {"sum": 3},
        "isError": False,
        "resultType": "complete",
    }
    assert k.json("await mcp.echo.echo({text: 'hi'}, {raw: true})") == {
        "content": [{"type": "text", "text": "hi"}],
        "isError": False,
        "resultType": "complete",
    }
    assert k.json("await mcp.echo.image({}, {raw: true})") == {
        "content": [{"type": "image", "data": TINY_PNG_B64, "mimeType": "image/png"}],
        "isError": False,
        "resultType": "complete",
    }
    code = """
const pairs = [
  [mcp.echo.add, {a: 1, b: 2}], [mcp.echo.echo, {text: '[1, 2]'}], [mcp.echo.echo, {text: 'plain'}],
  [mcp.echo.image, {}], [mcp.echo.get_weather_v2, {city: 'Kyiv'}],
];
const same = [];
for (const [fn, args] of pairs) {
  same.push(JSON.stringify(api.unwrap(await fn(args, {raw: true}))) === JSON.stringify(await fn(args)));
}
[same, api.unwrap(await mcp.echo.echo({text: '[1, 2]'}, {raw: true})), api.unwrap('{"x": 1}'), api.unwrap('text')]
"""
    assert k.value(code) == "[ [ true, true, true, true, true ], [ 1, 2 ], { x: 1 }, 'text' ]"


def test_tool_error_result_throws_tool_error(main: Main) -> None:
    k = main.kernel
    error = k.run("await mcp.echo.fail({message: 'nope'})").error
    assert (error["ename"], error["evalue"]) == ("ToolError", "nope")
    assert error["traceback"][0] == "ToolError: echo.fail: nope"
    code = (
        "let caught;\ntry { await mcp.echo.fail({message: 'nope'}) } catch (e) { caught = e }\n"
        "[caught.name, caught.server, caught.tool, caught.code, caught.message, caught instanceof ToolError, caught instanceof Error]"
    )
    assert k.json(code) == ["ToolError", "echo", "fail", "tool_error", "nope", True, True]
    assert k.json("await tools.call('echo.fail', {message: 'x'})") == {
        "ok": False,
        "error": {"code": "tool_error", "message": "x"},
    }


def test_settled_tool_errors_show_no_runtime_frames(main: Main) -> None:
    """Regression: ``at toolError (mcp2repl/api/mcp.js:66:12)`` leaked into Promise.allSettled reasons."""
    k = main.kernel
    cell = k.run("const settled = await Promise.allSettled([mcp.echo.fail({message: 'nope'})])\nconsole.log(settled[0].reason)\nsettled")
    assert cell.stream("stdout") == (
        "ToolError: nope\n    at cell[N]:1:52 {\n"  # the call's own place in the cell
        "  server: 'echo',\n  tool: 'fail',\n  code: 'tool_error',\n  context: 'echo.fail'\n}\n"
    ).replace("cell[N]", f"cell[{cell.reply['execution_count']}]")
    assert "mcp2repl/" not in cell.text
    assert k.value("settled[0].reason.stack.includes('mcp2repl')") == "false"


def test_tools_call_envelope_never_throws(main: Main) -> None:
    k = main.kernel
    # data is the raw CallToolResult, as the mcp-scripting skill's prompts read it
    assert k.json("(await tools.call('echo.add', {a: 1, b: 2})).data.structuredContent") == {"sum": 3}
    assert k.json("await tools.call('get_weather_v2', {city: 'Paris'}).then((r) => [r.ok, r.data.structuredContent])") == [
        True,
        {"city": "Paris", "temperature_c": 5, "conditions": "cloudy"},
    ]
    assert k.json("await tools.call('echo.add', {a: 'x', b: 1})") == {
        "ok": False,
        "error": {"code": "TypeError", "message": f'mcp.echo.add: argument "a" must be number, got string "x"\n{ADD_SIGNATURE}'},
    }
    missing = k.json("await tools.call('no_such_tool', {})")
    assert missing["ok"] is False
    assert missing["error"]["code"] == "TypeError"
    assert missing["error"]["message"].startswith("Unknown MCP tool no_such_tool.")


# ---- 8: concurrency, interrupts, timeouts ------------------------------------------------


def test_concurrent_calls_run_in_parallel(main: Main) -> None:
    code = """
const t0 = Date.now();
const rs = await Promise.all(Array.from({length: 20}, () => mcp.echo.sleep({ms: 300})));
[rs.length, rs.every((r) => r.result === 300), Date.now() - t0]
"""
    count, all_ok, ms = main.kernel.json(code)
    assert (count, all_ok) == (20, True)
    assert 300 <= ms < 4000, ms  # one after another would take 6,000 ms


def test_interrupt_cancels_a_hanging_call(main: Main) -> None:
    k = main.kernel
    fired = Interrupter(k.km.interrupt_kernel, 0.5)
    cell = k.run("await mcp.hangy.hang()")
    ended = time.monotonic()
    fired.stop()
    assert cell.kinds == ["error"]
    assert (cell.error["ename"], cell.error["evalue"]) == ("InterruptError", "Execution interrupted")
    assert cell.error["traceback"][0] == "InterruptError: Execution interrupted"
    assert ended - fired.fired[-1] < 10  # the call hangs forever otherwise
    assert k.value("await mcp.hangy.ok()") == "'ok'"


def test_per_call_timeout(main: Main) -> None:
    cell = main.kernel.run("await mcp.hangy.hang({}, {timeout: 0.5})")
    assert (cell.error["ename"], cell.error["evalue"]) == (
        "ToolError",
        "no answer within 0.5 s (set by this call's {timeout: 0.5})",
    )
    assert cell.seconds < 15  # the call hangs forever otherwise
    code = "let late;\ntry { await mcp.hangy.hang({}, {timeout: 0.2}) } catch (e) { late = e }\n[late.name, late.server, late.tool]"
    assert main.kernel.json(code) == ["ToolError", "hangy", "hang"]
    assert main.kernel.value("await mcp.hangy.ok()") == "'ok'"


# ---- 9: crash and reconnect --------------------------------------------------------------


def test_crash_then_reconnect(main: Main) -> None:
    k = main.kernel
    pid_before = k.server_process("crashing_server.py").pid
    cell = k.run("try { await mcp.crashy.crash() } catch (e) { globalThis.crashError = e; throw e }")
    assert cell.error["ename"] == "ToolError"
    assert cell.error["evalue"].startswith('MCP server "crashy" disconnected during crash: ')
    assert cell.error["evalue"].endswith("(server stderr: crashing_server: exiting abruptly)")
    assert cell.error["traceback"][0] == f"ToolError: crashy.crash: {cell.error['evalue']}"
    assert cell.stderr.startswith('[mcp2repl] MCP server "crashy" disconnected: ')
    assert k.json("[crashError.name, crashError.server, crashError.tool, crashError.code]") == [
        "ToolError",
        "crashy",
        "crash",
        "server_unavailable",
    ]
    assert k.value("(await api.servers()).find((s) => s.name === 'crashy').state") == "'disconnected'"

    cell = k.run("await mcp.crashy.ok()")
    assert cell.kinds == ["stream", "execute_result"]
    assert cell.stderr.startswith('[mcp2repl] reconnecting to MCP server "crashy" (')
    assert cell.stderr.endswith("\n") and cell.stderr.count("\n") == 1
    assert cell.text == "'ok'"
    crashy = k.json("(await api.servers()).find((s) => s.name === 'crashy')")
    assert (crashy["state"], crashy["tools"], crashy["lastError"]) == ("ready", 2, None)
    assert k.server_process("crashing_server.py").pid != pid_before
    assert k.value("await mcp.crashy.ok()") == "'ok'"  # no second notice


def test_crash_message_names_the_real_cause(main: Main) -> None:
    evalue = main.kernel.run("await mcp.crashy.crash()").error["evalue"]
    main.kernel.run("await mcp.crashy.ok()")
    assert "cancel scope" not in evalue
    assert "closed the connection" in evalue


# ---- 10, 11, 13: pagination, big results, stderr ------------------------------------------


def test_paginated_server_exposes_all_tools(main: Main) -> None:
    k = main.kernel
    assert k.json("Object.keys(mcp.paged)") == [f"tool_{i:02d}" for i in range(25)]
    assert k.value("await mcp.paged.tool_24({x: 7})") == "'tool_24 called with x=7'"
    assert k.value("await tools.tool_00()") == "'tool_00 called with x=0'"
    assert k.value("await mcp.call('paged.tool_13', {x: 1})") == "'tool_13 called with x=1'"


def test_big_result(main: Main) -> None:
    code = """
const big = await mcp.echo.big({kb: 2048});
const raw = await mcp.echo.big({kb: 2048}, {raw: true});
[raw.content[0].text.length, typeof big, big.kb, big.rows.length, big.rows[43689].word, JSON.stringify(big) === JSON.stringify(JSON.parse(raw.content[0].text))]
"""
    cell = main.kernel.run(code, timeout=60)
    assert cell.kinds == ["execute_result"]
    assert cell.text == "[ 2097152, 'object', 2048, 43690, 'item-43689', true ]"


def test_server_stderr_stays_out_of_cells(main: Main) -> None:
    marker = uuid.uuid4().hex[:8]
    cell = main.kernel.run(f"await mcp.echo.stderr_noise({{text: 'quiet {marker}'}})")
    assert cell.kinds == ["execute_result"]
    assert cell.text == f"'quiet {marker}'"
    expected = "\n".join(f"[echo_server stderr] {n}: quiet {marker}" for n in range(3))
    assert main.kernel.json("[await api.serverLog('echo', {lines: 3})]") == [expected]
    assert marker not in main.kernel.run("await mcp.echo.echo({text: 'next'})").stderr


# ---- 14: api.connect / api.disconnect ----------------------------------------------------


def test_connect_use_and_disconnect_in_one_cell(main: Main) -> None:
    k = main.kernel
    mark = f"extra-{uuid.uuid4().hex[:8]}"
    code = f"""
const info = await api.connect('extra', {{command: {json.dumps(PY)}, args: [{json.dumps(ECHO)}, '--host', '{mark}']}});
const sum = await mcp.extra.add({{a: 20, b: 22}});
const viaCall = await tools.call('extra.echo', {{text: 'same cell'}}).then((r) => ({{ ok: r.ok, data: r.data.content[0].text }}));
const servers = (await api.servers()).filter((s) => s.name === 'extra').map((s) => [s.state, s.source, s.tools]);
[info.state, info.tools.length, sum, viaCall, servers]
"""
    assert k.json(code) == ["ready", 9, {"sum": 42}, {"ok": True, "data": "same cell"}, [["ready", "api.connect", 9]]]
    pid = k.server_process(mark).pid
    assert k.json("await api.disconnect('extra')") == {"name": "extra", "state": "stopped"}
    assert wait_gone([pid]) == []
    error = k.run("await mcp.extra.add({a: 1, b: 1})").error
    assert (error["ename"], error["evalue"].split(" Servers:")[0]) == (
        "TypeError",
        "Cannot read properties of undefined (reading 'add'). Unknown MCP server mcp.extra.",
    )
    assert k.value("(await api.servers()).some((s) => s.name === 'extra')") == "false"


def test_connect_and_disconnect_in_the_same_cell(main: Main) -> None:
    code = f"""
const r1 = await api.connect('e3', [{json.dumps(PY)}, {json.dumps(ECHO)}]);
const v = await mcp.e3.add({{a: 1, b: 1}});
const r2 = await api.disconnect('e3');
[r1.state, v, r2]
"""
    assert main.kernel.value(code) == "[ 'ready', { sum: 2 }, { name: 'e3', state: 'stopped' } ]"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("{command: 42}", 'api.connect("bad"): server "bad": "command" must be a string or a non-empty list of strings, got 42'),
        ("{}", 'api.connect("bad"): server "bad": needs "command" (to start a local server) or "url" (to connect to a remote one)'),
        (
            "{url: 'ftp://example.com/mcp'}",
            'api.connect("bad"): server "bad": "url" must be an http:// or https:// URL, got "ftp://example.com/mcp"',
        ),
        (
            "{type: 'pipe', command: 'x'}",
            'api.connect("bad"): server "bad": "type" must be one of "stdio", "local", "http", "remote", "sse", got "pipe"',
        ),
    ],
    ids=["command-not-string", "empty", "bad-url", "bad-type"],
)
def test_connect_with_a_bad_spec_is_a_clear_error(main: Main, spec: str, message: str) -> None:
    error = main.kernel.run(f"await api.connect('bad', {spec})").error
    assert (error["ename"], error["evalue"]) == ("TypeError", message)
    assert error["traceback"][0] == f"TypeError: {message}"


def test_connect_to_a_missing_command(main: Main) -> None:
    cell = main.kernel.run(f"try {{ await api.connect('ghost2', {{command: '{GHOST}'}}) }} finally {{ await api.disconnect('ghost2') }}")
    assert cell.error["ename"] == "Error"
    assert cell.error["evalue"].startswith('api.connect("ghost2"): MCP server "ghost2" is unavailable: ')
    assert cell.error["evalue"].endswith(f"(server stderr: cannot start '{GHOST}': No such file or directory)")


def test_failing_connect_starts_the_server_once(main: Main) -> None:
    cell = main.kernel.run(f"await api.connect('ghost3', {{command: '{GHOST}'}})")
    log = main.kernel.json("[await api.serverLog('ghost3')]")[0]
    main.kernel.run("await api.disconnect('ghost3')")
    assert cell.stderr == ""
    assert log.count("cannot start") == 1


# ---- 15: third-party servers -------------------------------------------------------------


def test_mcp_server_time_convert_time(main: Main) -> None:
    result = main.kernel.json("await mcp.time.convert_time({source_timezone: 'UTC', time: '12:00', target_timezone: 'Asia/Tokyo'})")
    day = result["source"]["datetime"][:10]
    assert result == {
        "source": {"timezone": "UTC", "datetime": f"{day}T12:00:00+00:00", "day_of_week": result["source"]["day_of_week"], "is_dst": False},
        "target": {
            "timezone": "Asia/Tokyo",
            "datetime": f"{day}T21:00:00+09:00",
            "day_of_week": result["source"]["day_of_week"],
            "is_dst": False,
        },
        "time_difference": "+9.0h",
    }
    error = main.kernel.run("await mcp.time.convert_time({source_timezone: 'UTC', time: 12, target_timezone: 'Asia/Tokyo'})").error
    assert error["evalue"].startswith('mcp.time.convert_time: argument "time" must be string, got number 12\n  Signature: convert_time(')


def test_server_everything_via_api_connect(main: Main) -> None:
    if not EVERYTHING.exists():
        pytest.skip("server-everything is not installed (run scripts/bootstrap.sh --test)")
    k = main.kernel
    code = (
        f"const ev = await api.connect('everything', {{command: {json.dumps(str(EVERYTHING))}}}); [ev.state, ev.tools.includes('get-sum')]"
    )
    try:
        assert k.value(code) == "[ 'ready', true ]"
        assert k.value("await mcp.everything.echo({message: 'hi'})") == "'Echo: hi'"
        assert k.value("await mcp.everything.get_sum({a: 2, b: 3})") == "'The sum of 2 and 3 is 5.'"
        assert k.value("await mcp.call('everything.get-sum', {a: 2.5, b: -1})") == "'The sum of 2.5 and -1 is 1.5.'"
        image = k.json(
            "(await mcp.everything.get_tiny_image()).map((c) => typeof c === 'string' ? c : [c.type, c.mimeType, c.data.slice(0, 12)])"
        )
        assert image == ["Here's the image you requested:", ["image", "image/png", "iVBORw0KGgoA"], "The image above is the MCP logo."]
        error = k.run("await mcp.everything.get_sum({a: 2})").error
        assert error["evalue"].startswith('mcp.everything.get_sum: missing required argument "b"\n  Signature: ')
    finally:
        k.run("await api.disconnect('everything')")


# ---- 16b: interrupts do not reach the servers --------------------------------------------


def test_sigint_to_the_kernel_group_does_not_reach_servers(main: Main) -> None:
    """jupyter_client's signal_kernel sends SIGINT to the kernel's whole process group."""
    k = main.kernel
    hangy, echo = k.server_process("hanging_server.py"), k.server_process("echo_server.py", "main-default-mark")
    fired = Interrupter(lambda: k.km.signal_kernel(signal.SIGINT), 0.5)
    cell = k.run("await mcp.hangy.hang()")
    fired.stop()
    assert (cell.error["ename"], cell.error["evalue"]) == ("InterruptError", "Execution interrupted")
    assert time.monotonic() - fired.fired[-1] < 10
    time.sleep(0.3)
    assert alive(hangy.pid) and alive(echo.pid)
    assert k.server_process("hanging_server.py").pid == hangy.pid
    ok = k.run("await mcp.hangy.ok()")
    assert (ok.kinds, ok.text) == (["execute_result"], "'ok'")  # no reconnect notice
    assert k.value("await mcp.echo.echo({text: 'after SIGINT'})") == "'after SIGINT'"


# --------------------------------------------------------------------------------------
# 1, 12: no config at all -> the built-in demo server
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    # progress as `[server.tool] 40% message` lines on stderr (the default is a live display for notebooks)
    kernel = Kernel(tmp_path_factory.mktemp("demo"), {"MCP2REPL_PROGRESS": "stderr"})
    try:
        kernel.wait_for_servers()
        yield kernel
    finally:
        kernel.close()


def test_demo_banner(demo: Kernel) -> None:
    assert demo.banner() == ["MCP servers from built-in demo (no config found):", "  demo (stdio) ready, 8 tools"]
    assert demo.json("(await api.servers()).map((s) => [s.name, s.state, s.tools, s.source, s.server])") == [
        ["demo", "ready", 8, "built-in demo (no config found)", "mcp2repl-demo"]
    ]


def test_demo_progress_lines_on_the_calling_cell(demo: Kernel) -> None:
    cell = demo.run("const inv = await mcp.demo.slow_inventory_check({seconds: 0.6, steps: 3});\n[inv.steps, inv.books_checked]")
    assert cell.outputs[:3] == [
        {"type": "stream", "name": "stderr", "text": "[demo.slow_inventory_check] 33% Checked shelf 1/3 (13 books)\n"},
        {"type": "stream", "name": "stderr", "text": "[demo.slow_inventory_check] 67% Checked shelf 2/3 (26 books)\n"},
        {"type": "stream", "name": "stderr", "text": "[demo.slow_inventory_check] 100% Checked shelf 3/3 (40 books)\n"},
    ]
    assert cell.kinds == ["stream", "stream", "stream", "execute_result"]
    assert cell.text == "[ 3, 40 ]"
    assert demo.value("1 + 1") == "2"  # progress does not leak into later cells


DEMO_NOTEBOOK = (
    # 0: search
    "const hits = await mcp.demo.search_books({query: 'tide', limit: 3});\nhits.results.map((b) => `${b.id} ${b.title} (${b.author})`)",
    # 1: fetch the first hit by its id
    "const book = await mcp.demo.get_book({book_id: hits.results[0].id});\n"
    "({ title: book.title, author_id: book.author_id, pages: book.pages, units_sold: book.units_sold })",
    # 2: aggregate: that author's 2024 sales
    "const report = await tools.sales_report({year: 2024, group_by: 'author'});\nreport.rows.find((r) => r.key === book.author_id)",
    # 3: aggregate in JS over two tools
    "const shelf = await mcp.call('search_books', {query: '', genre: 'fantasy', limit: 40});\n"
    "const genres = await mcp.demo.list_genres();\n"
    "({ fantasy: shelf.total_matches, listed: genres.genres.find((g) => g.genre === 'fantasy').books, copies: shelf.results.reduce((n, b) => n + b.stock, 0) })",
    # 4: a tool that returns JSON as text
    "const stats = await mcp.demo.book_stats_json({book_id: book.id});\n[stats.units_by_year, stats.revenue_rank]",
    # 5: an image
    "const cover = await mcp.demo.render_cover({book_id: book.id});\n[cover.type, cover.mimeType, cover.data.slice(0, 8)]",
    # 6: a resource
    "(await mcp.demo.resources.read('demo://catalog/summary')).split('\\n')[0]",
    # 7: a tool error
    "await mcp.demo.get_book({book_id: 'zz'})",
)


@pytest.fixture(scope="module")
def demo_notebook(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    folder = tmp_path_factory.mktemp("notebook")
    nb = new_notebook(metadata={"kernelspec": {"name": "mcp2repl", "display_name": "JavaScript (mcp2repl)", "language": "javascript"}})
    nb.cells = [new_code_cell(source) for source in DEMO_NOTEBOOK]
    env = {k: v for k, v in os.environ.items() if k not in OWN_VARS}
    env["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("notebook-xdg"))
    client = NotebookClient(nb, kernel_name="mcp2repl", timeout=60, allow_errors=True, resources={"metadata": {"path": str(folder)}})
    client.execute(env=env)  # the path in resources is the kernel's cwd, so no mcp.json: the demo server
    return nb


def _result(count: int, text: str, value: Any = None) -> dict[str, Any]:
    data: dict[str, Any] = {"text/plain": text}
    if value is not None:
        data["application/json"] = value
    return {"output_type": "execute_result", "execution_count": count, "metadata": {}, "data": data}


def test_demo_notebook_composes_tools(demo_notebook: nbformat.NotebookNode) -> None:
    traces = [o for c in demo_notebook.cells for o in c.outputs if is_call_trace(o)]
    for cell in demo_notebook.cells:
        cell.outputs = [o for o in cell.outputs if not is_call_trace(o)]
    for trace in traces:  # slow cells (the first waits for the server) end with a summary line
        assert re.fullmatch(r"[✓✗] \d+ tool calls?(, \d+ failed)?, \d+\.\d s, [\d.]+ (B|KB|MB) received", trace.data["text/plain"])
    cells = demo_notebook.cells
    assert cells[0].outputs == [
        _result(
            1,
            "[\n  'b14 The Copper Tide Protocol (Rafael Ortiz-Mbeki)',\n  'b35 Salt Meadows (Greta Vollmer)'\n]",
            ["b14 The Copper Tide Protocol (Rafael Ortiz-Mbeki)", "b35 Salt Meadows (Greta Vollmer)"],
        )
    ]
    book = {"title": "The Copper Tide Protocol", "author_id": "a04", "pages": 448, "units_sold": {"2023": 39, "2024": 38}}
    text = "{\n  title: 'The Copper Tide Protocol',\n  author_id: 'a04',\n  pages: 448,\n  units_sold: { '2023': 39, '2024': 38 }\n}"
    assert cells[1].outputs == [_result(2, text, book)]
    row = {"key": "a04", "label": "Rafael Ortiz-Mbeki", "units": 539, "revenue": 8559.2, "share": 9.1}
    text = "{\n  key: 'a04',\n  label: 'Rafael Ortiz-Mbeki',\n  units: 539,\n  revenue: 8559.2,\n  share: 9.1\n}"
    assert cells[2].outputs == [_result(3, text, row)]
    assert cells[3].outputs == [_result(4, "{ fantasy: 8, listed: 8, copies: 80 }", {"fantasy": 8, "listed": 8, "copies": 80})]
    assert cells[4].outputs == [_result(5, "[ { '2023': 39, '2024': 38 }, 40 ]", [{"2023": 39, "2024": 38}, 40])]
    assert cells[5].outputs == [_result(6, "[ 'image', 'image/png', 'iVBORw0K' ]", ["image", "image/png", "iVBORw0K"])]
    assert cells[6].outputs == [_result(7, "'# The Inkwell Lane Bookshop'")]
    message = "Unknown book id 'zz'. Ids run from 'b01' to 'b40'; use search_books to find one."
    [error] = cells[7].outputs
    assert (error.output_type, error.ename, error.evalue) == ("error", "ToolError", message)
    assert error.traceback[0] == f"ToolError: demo.get_book: {message}"  # the tool named once


# --------------------------------------------------------------------------------------
# 2: the other config formats and locations; 4: a broken config; 16: child processes
# --------------------------------------------------------------------------------------


def test_vscode_servers_format_and_no_server_survives_shutdown(tmp_path: Path) -> None:
    mark = f"vscode-{uuid.uuid4().hex[:8]}"
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token.txt").write_text("vs-token\n", encoding="utf-8")
    config = {
        "inputs": [],
        "servers": {
            "echo": {
                "type": "stdio",
                "command": "${env:MCP2REPL_TEST_PYTHON}",
                "args": [ECHO, "--host", "${MCP2REPL_TEST_MARK}"],
                "env": {"ECHO_TOKEN": "{file:secrets/token.txt}", "ECHO_USER": "${MCP2REPL_TEST_UNSET:-nobody}"},
            },
            "hangy": {"type": "stdio", "command": PY, "args": [str(SERVERS / "hanging_server.py"), "--host", "${MCP2REPL_TEST_MARK}"]},
        },
    }
    write_json(tmp_path / "mcp.json", config)
    kernel = Kernel(tmp_path, {"MCP2REPL_TEST_PYTHON": PY, "MCP2REPL_TEST_MARK": mark})
    try:
        kernel.wait_for_servers()
        assert kernel.banner() == [
            f"MCP servers from {tmp_path / 'mcp.json'}:",
            "  echo (stdio) ready, 9 tools",
            "  hangy (stdio) ready, 2 tools",
        ]
        echo = kernel.server_process("echo_server.py", mark)
        assert echo.cmdline() == [PY, ECHO, "--host", mark]
        assert (echo.environ()["ECHO_TOKEN"], echo.environ()["ECHO_USER"]) == ("vs-token", "nobody")
        assert kernel.value("await tools.delete_({key: 'vs'})") == "'deleted vs'"
        # a call in flight while the kernel shuts down must not keep anything alive
        kernel.kc.execute("await mcp.hangy.hang()")
        time.sleep(0.3)
        pids = [p.pid for p in kernel.server_process_list()]
        by_mark = [p.pid for p in psutil.process_iter(["cmdline"]) if mark in " ".join(p.info["cmdline"] or [])]
        assert (len(pids), len(by_mark)) == (3, 2)  # two servers under the kernel's one supervisor (servers/supervisor.py)
        assert sum("servers/supervisor.py" in " ".join(p.cmdline()) for p in kernel.server_process_list()) == 1
        assert set(by_mark) <= set(pids)
        started = time.monotonic()
        kernel.close(graceful=True)
        assert time.monotonic() - started < 5
        assert not kernel.km.is_alive()
        assert wait_gone(pids) == []
    finally:
        kernel.close()


def test_jsmcp_yaml_in_xdg_with_profile_and_blocked_tools(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    folder = xdg / "mcp2repl"
    folder.mkdir(parents=True)
    (folder / "secret.txt").write_text("from-file\n", encoding="utf-8")
    (folder / "config.yaml").write_text(
        f"""
servers:
  echo:
    type: local
    command: ["{PY}", "{ECHO}", "--host", "${{MCP2REPL_TEST_UNSET:-yaml-mark}}"]
    environment:
      ECHO_SECRET: "{{file:secret.txt}}"
      ECHO_USER: "{{env:MCP2REPL_TEST_USER}}"
    blocked_tools: [delete, {{glob: "get-*"}}]
    description: "echo for {{env:MCP2REPL_TEST_USER}}"
  paged:
    type: local
    command: ["{PY}", "{SERVERS / "paginated_server.py"}"]
  hangy:
    type: local
    command: ["{PY}", "{SERVERS / "hanging_server.py"}"]
presets:
  small:
    echo: [{{regex: "^(echo|add|delete)$"}}]
    paged: {{glob: "tool_0*"}}
    hangy: false
""",
        encoding="utf-8",
    )
    cwd = tmp_path / "work"
    cwd.mkdir()
    kernel = Kernel(cwd, {"XDG_CONFIG_HOME": str(xdg), "MCP2REPL_PROFILE": "small", "MCP2REPL_TEST_USER": "ada"})
    try:
        kernel.wait_for_servers()
        assert kernel.banner() == [
            f"MCP servers from {folder / 'config.yaml'}:",
            "  echo (stdio) ready, 2 tools",
            "  paged (stdio) ready, 10 tools",
        ]
        servers = kernel.json("(await api.servers()).map((s) => [s.name, s.tools, s.description])")
        assert servers == [["echo", 2, "echo for ada"], ["paged", 10, ""]]
        assert kernel.json("[Object.keys(mcp), Object.keys(mcp.echo), Object.keys(mcp.paged)]") == [
            ["echo", "paged"],
            ["add", "echo"],
            [f"tool_0{i}" for i in range(10)],
        ]
        assert kernel.value("await mcp.echo.add({a: 1, b: 1})") == "{ sum: 2 }"
        # delete is allowed by the profile but blocked by the server definition: the deny list wins
        blocked = kernel.run("await mcp.echo.delete_({key: 'x'})").error
        assert blocked["evalue"].startswith('mcp.echo.delete_ is not a function. Unknown MCP tool mcp.echo.delete_ on server "echo".')
        hidden = kernel.run("await mcp.paged.tool_10({})").error
        assert hidden["evalue"].startswith('mcp.paged.tool_10 is not a function. Unknown MCP tool mcp.paged.tool_10 on server "paged".')
        excluded = kernel.run("await mcp.hangy.ok()").error
        assert excluded["evalue"] == "Cannot read properties of undefined (reading 'ok'). Unknown MCP server mcp.hangy. Servers: mcp.echo, mcp.paged."
        echo = kernel.server_process("echo_server.py")
        assert echo.cmdline() == [PY, ECHO, "--host", "yaml-mark"]
        assert (echo.environ()["ECHO_SECRET"], echo.environ()["ECHO_USER"]) == ("from-file", "ada")
        assert not any("hanging_server.py" in cmd for cmd in kernel.server_processes())
        # a kernel that is killed (not shut down) still takes its servers with it
        pids = [p.pid for p in kernel.server_process_list()]
        assert len(pids) == 3  # two servers under the kernel's one supervisor (servers/supervisor.py)
        kernel.close(graceful=False)
        assert wait_gone(pids) == []
    finally:
        kernel.close()


def test_explicit_config_path_wins_over_the_working_directory(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "data").mkdir(parents=True)
    (elsewhere / "data" / "user.txt").write_text("from-explicit\n", encoding="utf-8")
    explicit = write_json(
        elsewhere / "custom-name.json",
        {
            "mcpServers": {
                "explicit": {
                    "command": PY,
                    "args": [ECHO, "--host", "{env:MCP2REPL_TEST_MARK}"],
                    "env": {"ECHO_USER": "{file:data/user.txt}"},  # relative to the config file, not the cwd
                },
                "other": {"command": PY, "args": [str(SERVERS / "hanging_server.py")]},
            }
        },
    )
    cwd = tmp_path / "cwd"
    write_json(cwd / "mcp.json", {"mcpServers": {"decoy": {"command": PY, "args": [ECHO]}}})
    mark = f"explicit-{uuid.uuid4().hex[:8]}"
    env = {"MCP2REPL_CONFIG": str(explicit), "MCP2REPL_SERVER": "explicit", "MCP2REPL_TEST_MARK": mark}
    kernel = Kernel(cwd, env)
    try:
        kernel.wait_for_servers()
        assert kernel.banner() == [f"MCP servers from {explicit}:", "  explicit (stdio) ready, 9 tools"]
        assert kernel.json("(await api.servers()).map((s) => s.name)") == ["explicit"]
        assert kernel.value("await mcp.explicit.echo({text: 'explicit'})") == "'explicit'"
        proc = kernel.server_process("echo_server.py")
        assert proc.cmdline() == [PY, ECHO, "--host", mark]
        assert proc.environ()["ECHO_USER"] == "from-explicit"
        assert len(kernel.server_process_list()) == 2  # the server and the kernel's supervisor
    finally:
        kernel.close()


def test_invalid_json_config_keeps_the_kernel_usable(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text('{\n  "mcpServers": {\n    "echo": {"command": "x",}\n  }\n}\n', encoding="utf-8")
    kernel = Kernel(tmp_path)
    try:
        assert kernel.banner() == [
            f"MCP servers from {tmp_path / 'mcp.json'}:",
            "  config problem: mcp.json: invalid JSON at line 3, column 29: Expecting property name enclosed in double quotes",
            "  (none)",
        ]
        first = kernel.run("const answer = 6 * 7; answer")
        assert first.text == "42"
        assert first.stderr == (
            "[mcp2repl] MCP server config problem: mcp.json: invalid JSON at line 3, column 29: Expecting property name enclosed in double quotes\n"
        )
        assert kernel.value("[1, 2, 3].map((x) => x * answer)") == "[ 42, 84, 126 ]"
        assert [(r["name"], r["state"], r["lastError"]) for r in kernel.json("await api.servers()")] == [
            ("(config)", "config problem", "mcp.json: invalid JSON at line 3, column 29: Expecting property name enclosed in double quotes")
        ]
        error = kernel.run("await mcp.echo.echo({text: 'x'})").error
        assert (error["ename"], error["evalue"]) == (
            "TypeError",
            "Unknown MCP server mcp.echo. No MCP servers are connected. The MCP server config has a problem: "
            "mcp.json: invalid JSON at line 3, column 29: Expecting property name enclosed in double quotes.",
        )
        assert kernel.server_processes() == {}
    finally:
        kernel.close()


def test_a_big_text_result_arrives_whole_by_every_path(main: Main) -> None:
    """Texts past api/result_json.APART_MIN_CHARS reach V8 as strings of their own, not inside the JSON text."""
    code = (
        "const bigv = await mcp.echo.big({kb: 1024}); const bigr = await mcp.echo.big({kb: 1024}, {raw: true});\n"
        "const [bigs, bigt] = await Promise.all([mcp.echo.big({kb: 300}), mcp.echo.echo({text: 'small'})]);\n"
        "[bigv.kb, bigv.rows.length, bigv.rows[7].word, bigr.content[0].text.length, JSON.parse(bigr.content[0].text).kb, bigs.kb, bigt]"
    )
    assert main.kernel.json(code) == [1024, 1024 * 1024 // 48, "item-00007", 1024 * 1024, 1024, 300, "small"]
    calls = main.kernel.json("await mcp.echo.big({kb: 512}); (await api.calls()).map(c => c.bytesIn > 512 * 1024)")
    assert calls == [True]
