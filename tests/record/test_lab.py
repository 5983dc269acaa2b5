"""``mcp2repl lab``: a real Jupyter Server, started as the command starts it, lists the agent's running
session under ``/api/kernels``; a cell sent through the server's websocket (as JupyterLab sends it)
sees a global the agent set, and the agent's next step sees one the person set. In headless
Chromium the session is in JupyterLab's running-kernels list, and a console on it shows the agent's
global (screenshot in test-artifacts/)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "cli"), str(ROOT / "tests" / "display")]
from agent_cli import MCP2REPL, Run, clean_env, cli, stop_all  # noqa: E402
from test_jupyterlab import CHROMIUM, CHROMIUM_ARGS, Lab, _free_port, _shutdown, _wait_for_server  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(600)]

#: ms for each step in the browser (JupyterLab takes long to load on a loaded machine)
WAIT = 120_000

SCREENSHOT = ROOT / "test-artifacts" / "jupyterlab-session-console.png"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lab, Path]]:
    """A session the agent stepped, then ``mcp2repl lab`` in the same folder (private Jupyter dirs)."""
    tmp = tmp_path_factory.mktemp("lab")
    here = tmp / "work"
    here.mkdir()
    dirs = {name: tmp / name for name in ("config", "runtime", "data", "xdg", "settings", "workspaces")}
    for d in dirs.values():
        d.mkdir()
    notification = dirs["settings"] / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    assert cli("--session", "agent", "-e", "globalThis.agentSet = 'set by the agent'; agentSet", cwd=here) == Run(0, "'set by the agent'\n", "")
    env = clean_env() | {
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("JUPYTER_TOKEN", None)
    token, port = secrets.token_hex(16), _free_port()
    argv = [
        MCP2REPL,
        "lab",
        "--no-browser",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        "--LabApp.collaborative=False",
        f"--LabApp.user_settings_dir={dirs['settings']}",
        f"--LabApp.workspaces_dir={dirs['workspaces']}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--ServerApp.allow_root=True")
    log = tmp / "lab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, env=env, cwd=here, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = Lab(url=f"http://127.0.0.1:{port}", token=token, root=here, log=log, proc=proc)
    try:
        _wait_for_server(server)
        yield server, here
    finally:
        proc.terminate()  # never DELETE the kernels: they are the agent's, not the server's
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        _shutdown(server)
        stop_all(here)


async def _execute(lab: Lab, kernel_id: str, code: str) -> dict[str, Any]:
    """One execute_request over the server's kernel websocket, as JupyterLab sends it (no mcp2repl metadata)."""
    from tornado.websocket import websocket_connect

    ws = await websocket_connect(f"{lab.url.replace('http', 'ws')}/api/kernels/{kernel_id}/channels?token={lab.token}")
    msg_id = uuid.uuid4().hex
    header = {"msg_id": msg_id, "msg_type": "execute_request", "session": uuid.uuid4().hex, "username": "person", "version": "5.3", "date": ""}
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False}
    await ws.write_message(json.dumps({"header": header, "parent_header": {}, "metadata": {}, "content": content, "channel": "shell"}))
    seen: dict[str, Any] = {}
    while "reply" not in seen or "idle" not in seen:
        raw = await asyncio.wait_for(ws.read_message(), 60)
        assert raw is not None, "the kernel websocket closed before the reply"
        msg = json.loads(raw)
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "execute_reply":
            seen["reply"] = msg["content"]
        elif msg["msg_type"] == "execute_result":
            seen["result"] = msg["content"]["data"]["text/plain"]
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            seen["idle"] = True
    ws.close()
    return seen


def test_the_session_is_a_running_kernel_of_the_server_and_both_sides_see_each_other(lab: tuple[Lab, Path]) -> None:
    server, here = lab
    kernels = server.api("GET", "/api/kernels")
    assert [k["name"] for k in kernels] == ["mcp2repl"], f"kernels listed: {kernels}\n{server.log_tail()}"  # type: ignore[union-attr]
    seen = asyncio.run(_execute(server, kernels[0]["id"], "globalThis.personSet = 'set by a person'; agentSet"))  # type: ignore[index]
    assert (seen["reply"]["status"], seen["result"]) == ("ok", "'set by the agent'")
    assert cli("--session", "agent", "-e", "personSet", cwd=here) == Run(0, "'set by a person'\n", "")
    nb = json.loads((here / ".mcp2repl" / "sessions" / "agent.ipynb").read_text())
    assert [(c["source"], c["metadata"]["mcp2repl"]["client"]) for c in nb["cells"]] == [
        ("globalThis.agentSet = 'set by the agent'; agentSet", "cli"),
        ("globalThis.personSet = 'set by a person'; agentSet", "jupyter"),
        ("personSet", "cli"),
    ]


def test_jupyterlab_lists_the_session_and_a_console_on_it_shows_the_agents_global(lab: tuple[Lab, Path]) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    playwright_api = pytest.importorskip("playwright.sync_api")
    expect = playwright_api.expect
    server, _ = lab
    SCREENSHOT.parent.mkdir(exist_ok=True)
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            doing = "loading JupyterLab"

            def step(what: str) -> None:
                nonlocal doing
                doing = what

            try:
                page.goto(f"{server.url}/lab?token={server.token}", wait_until="domcontentloaded", timeout=WAIT)
                step("opening the Running Terminals and Kernels panel")
                page.get_by_role("tab", name=re.compile("^Running Terminals and Kernels")).click(timeout=WAIT)
                # the session's kernel, listed by the server from its connection file, with no session of JupyterLab's own yet
                step("waiting for the session's kernel in the running-kernels list")
                kernel = page.get_by_role("treeitem", name=re.compile(r"^No sessions connected"))
                expect(kernel).to_be_visible(timeout=WAIT)
                expect(page.get_by_role("treeitem", name="JavaScript (mcp2repl)")).to_be_visible()
                step("opening a console on the session's kernel (its context menu)")
                kernel.click(button="right")
                page.get_by_role("menuitem", name="New Console for Kernel").click(timeout=WAIT)
                prompt = page.locator(".jp-CodeConsole-promptCell .cm-content")
                expect(prompt).to_be_visible(timeout=WAIT)
                step("waiting for the console's kernel to be idle")
                expect(page.get_by_role("button", name=re.compile(r"JavaScript \(mcp2repl\) \| Idle"))).to_be_visible(timeout=WAIT)
                step("typing agentSet into the console's prompt")
                _type_into(page, prompt, "agentSet")
                step("running agentSet in the console")
                page.keyboard.press("Shift+Enter")
                shown = page.locator(".jp-CodeConsole-content .jp-OutputArea-output", has_text="set by the agent")
                expect(shown.first).to_be_visible(timeout=WAIT)
                page.screenshot(path=str(SCREENSHOT))
                print(f"[lab test] screenshot: {SCREENSHOT}")
            except (playwright_api.Error, AssertionError) as exc:
                failure = SCREENSHOT.with_name("jupyterlab-session-failure.png")
                page.screenshot(path=str(failure))
                pytest.fail(f"JupyterLab check failed while {doing}: {exc}\nscreenshot: {failure}\n--- server log ---\n{server.log_tail()}")
        finally:
            browser.close()


def _type_into(page: Any, prompt: Any, text: str) -> None:
    """Type into a console prompt until it holds the text: a prompt that is still being wired to its kernel drops keys."""
    deadline = time.monotonic() + WAIT / 1000
    while True:
        prompt.click()
        page.keyboard.press("Control+a")
        page.keyboard.type(text)
        if prompt.inner_text().strip() == text:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the console prompt holds {prompt.inner_text()!r} after typing {text!r} for {WAIT // 1000} s")
        page.wait_for_timeout(500)
