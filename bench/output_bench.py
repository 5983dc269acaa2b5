"""Large tool results end to end (issue: output shaping). Same run, same bytes:

    .venv/bin/python bench/output_bench.py

For a tool returning 1 MB and 50 MB of JSON text: the time from the call to a fitted `api.print`
view plus its artifact, measured inside the cell, against `json.loads` of the same bytes in this
process; and the kernel's peak memory (VmHWM) growth against the payload size.
Targets: <= 2x the parse time; peak memory <= 4x the payload.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from _cells import cell_value
from jupyter_client.manager import AsyncKernelManager

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "servers"))


def payload(kb: int) -> str:
    target = kb * 1024
    rows = [{"index": i, "word": f"item-{i:05d}"} for i in range(target // 48)]
    doc = {"kb": kb, "rows": rows, "pad": ""}
    doc["pad"] = "." * max(0, target - len(json.dumps(doc)))
    return json.dumps(doc)


def hwm_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1])


async def raw_sdk_call(kb: int) -> float:
    """The same tool call through the bare SDK: the floor any client pays for the transfer."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(ROOT / "tests/fixtures/servers/echo_server.py")])
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write), ClientSession(read, write) as session:  # noqa: ASYNC230
        await session.initialize()
        await session.call_tool("echo", {"text": "warm"})
        t = time.perf_counter()
        await session.call_tool("big", {"kb": kb})
        return (time.perf_counter() - t) * 1000


async def main() -> None:
    cwd = tempfile.mkdtemp()
    config = {"mcpServers": {"echo": {"command": sys.executable, "args": [str(ROOT / "tests/fixtures/servers/echo_server.py")]}}}
    (Path(cwd) / "mcp.json").write_text(json.dumps(config))
    km = AsyncKernelManager(kernel_name="mcp2repl")
    await km.start_kernel(cwd=cwd, env={**os.environ, "XDG_CONFIG_HOME": cwd, "MCP2REPL_PROGRESS": "off"})
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)
    pid = km.provisioner.process.pid  # type: ignore[union-attr]

    async def value(code: str) -> str:
        return await cell_value(kc, code, 600)

    await value("await tools.echo({ text: 'warm' })")
    for kb in (1024, 51200):
        text = payload(kb)
        t = time.perf_counter()
        json.loads(text)
        parse_ms = (time.perf_counter() - t) * 1000
        del text
        before = hwm_kb(pid)
        ms = float(
            await value(
                f"const t{kb} = performance.now(); const env{kb} = await api.print(await tools.big({{ kb: {kb} }}), {{ artifactName: 'big-{kb}' }}); performance.now() - t{kb}"
            )
        )
        after = hwm_kb(pid)
        await value(f"env{kb} = null; {kb}")
        mb = kb / 1024
        sdk_ms = await raw_sdk_call(kb)
        print(f"{mb:5.0f} MB  json.loads {parse_ms:8.1f} ms   raw SDK call {sdk_ms:8.1f} ms   call+api.print+artifact {ms:8.1f} ms")
        print(f"{mb:5.0f} MB  ratio to json.loads {ms / parse_ms:6.2f}x   ratio to the raw SDK call {ms / sdk_ms:5.2f}x")
        print(f"{mb:5.0f} MB  kernel peak memory growth {(after - before) / 1024:8.1f} MB   ({(after - before) / 1024 / mb:4.1f}x payload)")
    kc.stop_channels()
    await km.shutdown_kernel(now=True)


if __name__ == "__main__":
    asyncio.run(main())
