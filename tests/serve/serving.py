"""Harnesses for ``mcp2repl serve``: the real command, driven by the Python SDK's own client.

:class:`ServeClient` starts ``mcp2repl serve`` over stdio (``stdio_client`` + ``ClientSession``)
on a background loop, so tests stay synchronous; :func:`serve_http` starts it over Streamable
HTTP and says where. The servers behind it are real: the demo, server-everything,
server-memory (npm) and the echo fixture (with the approval gate on).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ECHO, EVERYTHING, FIXTURES, OWN_VARS, ROOT, _Loop

MCP2REPL = str(ROOT / ".venv" / "bin" / "mcp2repl")
MEMORY = FIXTURES / "node" / "node_modules" / ".bin" / "mcp-server-memory"
NODE_BIN = FIXTURES / "node" / "node_modules" / ".bin"


ECHO_READS = ["echo", "add", "sleep", "fail", "big", "image", "stderr_noise", "get-weather.v2"]


def write_config(cwd: Path) -> Path:
    """The four servers, as a user's ``mcp.json`` would name them."""
    config = {
        "mcpServers": {
            "demo": {"command": sys.executable, "args": ["-m", "mcp_kernel.demo.server"]},
            "everything": {"command": str(EVERYTHING), "args": ["stdio"]},
            "memory": {"command": str(MEMORY), "env": {"MEMORY_FILE_PATH": str(cwd / "memory.jsonl")}},
            # the gate on: delete asks; the fixture's other tools are reads, though not annotated so (MCP's default: they may write)
            "echo": {"command": sys.executable, "args": [ECHO], "confirm_destructive": True, "allow_destructive": ECHO_READS},
        }
    }
    path = cwd / "mcp.json"
    path.write_text(json.dumps(config))
    return path


def clean_env(**more: str) -> dict[str, str]:
    """This environment without the runner's own MCP2REPL config variables, and a private XDG config."""
    env = {k: v for k, v in os.environ.items() if k not in OWN_VARS and k != "MCP2REPL_SESSION"}
    env["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="mcp2repl-xdg-")
    return {**env, **more}


class ServeClient(_Loop):
    """``mcp2repl serve ARGS`` in ``cwd`` with one ClientSession on it for the life of the harness.

    ``answers`` scripts the client's person: each elicitation request is recorded in ``asked`` and
    answered by the next entry (an ElicitResult or a function of the request); ``record`` keeps every
    byte the server wrote on stdout in that file (through tee) for tests of the wire itself.
    """

    def __init__(
        self, cwd: Path, *args: str, elicitation: bool = True, record: Path | None = None, env: dict[str, str] | None = None
    ) -> None:
        super().__init__()
        self.cwd = cwd
        self.stderr_path = cwd / f"serve-stderr-{time.monotonic_ns()}.log"
        self.asked: list[Any] = []
        self.answers: list[Any] = []
        self.elicitation = elicitation
        command, argv = MCP2REPL, ["serve", *args]
        if record is not None:
            command, argv = "sh", ["-c", f'"$0" "$@" | tee {record}', MCP2REPL, *argv]
        self._params = (command, argv, env or clean_env())
        self._stop: asyncio.Event | None = None
        self._ready = self.loop.create_future()
        self._main = asyncio.run_coroutine_threadsafe(self._run(), self.loop)
        try:
            self.init = asyncio.run_coroutine_threadsafe(self._wait_ready(), self.loop).result(90)
        except Exception:  # noqa: BLE001 - any failure to start is the same failure for the test
            self.close()
            raise AssertionError(f"mcp2repl serve did not initialize within 90 s; its stderr:\n{self.stderr()}") from None

    async def _wait_ready(self) -> Any:
        return await asyncio.shield(self._ready)

    async def _run(self) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        command, argv, env = self._params
        self._stop = asyncio.Event()
        params = StdioServerParameters(command=command, args=argv, env=env, cwd=str(self.cwd))
        try:
            with self.stderr_path.open("w") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    callback = self._elicit if self.elicitation else None
                    async with ClientSession(read, write, elicitation_callback=callback) as session:
                        self.session = session
                        self._ready.set_result(await session.initialize())
                        await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    async def _elicit(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        self.asked.append(params)
        if not self.answers:
            return types.ElicitResult(action="decline")
        answer = self.answers.pop(0)
        return answer(params) if callable(answer) else answer

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    # ---- calls --------------------------------------------------------------------------------------

    def tool(self, name: str, args: dict[str, Any], timeout: float = 90, progress: Callable[..., Any] | None = None) -> Any:
        return self.call(self.session.call_tool(name, args, progress_callback=progress), timeout)

    def run(self, code: str, timeout: float = 90, **args: Any) -> Any:
        """``run`` a step; the CallToolResult."""
        return self.tool("run", {"code": code, **args}, timeout)

    def start(self, name: str, args: dict[str, Any], progress: Callable[..., Any] | None = None) -> Any:
        """A call left running (a concurrent Future): ``.cancel()`` sends notifications/cancelled."""
        return asyncio.run_coroutine_threadsafe(self.session.call_tool(name, args, progress_callback=progress), self.loop)

    def start_marked(self, entity: str, code: str, within: float = 60) -> Any:
        """A ``run`` of ``code`` left running, returned once it has begun: the step's ``MARK`` records
        ``entity`` in the memory server (whose file is ``memory.jsonl`` here), so a test knows the step
        has reached that point in the kernel (not merely been sent) before it cancels it."""
        marker = self.cwd / "memory.jsonl"
        mark = f"await mcp.memory.create_entities({{ entities: [{{ name: '{entity}', entityType: 'step', observations: [] }}] }})"
        pending = self.start("run", {"code": code.replace("MARK", mark)})
        deadline = time.monotonic() + within
        while entity not in (marker.read_text() if marker.exists() else ""):
            assert time.monotonic() < deadline, f"the step did not record {entity!r} in the memory server within {within:g} s"
            time.sleep(0.05)
        return pending

    def close(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        try:
            self._main.result(60)
        except BaseException:  # noqa: BLE001 - closing: what went wrong was reported by the test
            pass
        self.stop()


def text(result: Any) -> str:
    """The text block a model reads."""
    return "\n".join(c.text for c in result.content if c.type == "text")


def serve_http(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """``mcp2repl serve --http 127.0.0.1:0 ARGS`` in ``cwd``: the process and its /mcp URL (from stderr,
    which goes to ``cwd/serve-http.log``: a pipe nobody reads would stall the server once full)."""
    log = cwd / "serve-http.log"
    with log.open("w") as err:
        proc = subprocess.Popen([MCP2REPL, "serve", "--http", "127.0.0.1:0", *args], cwd=cwd, env=env or clean_env(), stderr=err, stdout=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        if found := re.search(r"serving MCP at (http://\S+/mcp)", log.read_text()):
            return proc, found.group(1)
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"mcp2repl serve --http did not say where it serves within 90 s; stderr:\n{log.read_text()}")


def start_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeClient]:
    """One ``mcp2repl serve`` (stdio) with the four servers, for a module-scoped fixture."""
    cwd = tmp_path_factory.mktemp("serve")
    write_config(cwd)
    client = ServeClient(cwd)
    yield client
    client.close()
