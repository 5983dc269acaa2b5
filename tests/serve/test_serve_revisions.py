"""``mcp2repl serve`` and the demo server answer both MCP eras over stdio: a 2026-07-28 client
(``server/discover``, no handshake, every request carrying its ``_meta``) and a 2025-11-25 one
(``initialize``). Driven by the SDK's ClientSession, negotiated as the kernel negotiates.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from serving import MCP2REPL, clean_env, text

from mcp_kernel import compat

pytestmark = pytest.mark.timeout(240)


async def speak(command: str, args: list[str], cwd: Path, modern: bool, work: Any) -> tuple[str | None, Any]:
    params = StdioServerParameters(command=command, args=args, env=clean_env(), cwd=str(cwd))
    with open(os.devnull, "w") as quiet:  # noqa: ASYNC230 - opening /dev/null does not block
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await asyncio.wait_for(compat.negotiate(session) if modern else session.initialize(), 90)
            return session.protocol_version, await asyncio.wait_for(work(session), 90)


@pytest.mark.parametrize(("modern", "revision"), [(True, "2026-07-28"), (False, "2025-11-25")])
def test_serve_answers_both_eras(tmp_path: Path, modern: bool, revision: str) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {}}))

    async def work(session: ClientSession) -> Any:
        tools = await session.list_tools()
        result = await session.call_tool("run", {"code": "6 * 7"})
        return [t.name for t in tools.tools], text(result)

    version, (tools, answer) = asyncio.run(speak(MCP2REPL, ["serve"], tmp_path, modern, work))
    assert (version, tools, answer) == (revision, ["run", "search_tools", "describe_tool", "list_servers"], "42")


@pytest.mark.parametrize(("modern", "revision"), [(True, "2026-07-28"), (False, "2025-11-25")])
def test_the_demo_answers_both_eras(tmp_path: Path, modern: bool, revision: str) -> None:
    async def work(session: ClientSession) -> Any:
        result = await session.call_tool("get_book", {"book_id": "b01"})
        return result.structured_content["title"]

    version, title = asyncio.run(speak(sys.executable, ["-m", "mcp_kernel.demo.server"], tmp_path, modern, work))
    assert (version, title) == (revision, "The Lantern Cartographer")
