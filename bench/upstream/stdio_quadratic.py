"""Minimal reproduction for the MCP Python SDK: ``stdio_client`` reads one long line in quadratic time.

    .venv/bin/python bench/upstream/stdio_quadratic.py [MB ...]   (default: 2 4 8 16)

A child process writes one JSON-RPC notification of the given size to stdout; the script times how
long ``mcp.client.stdio.stdio_client`` takes to deliver it. The reader keeps the unfinished line in a
string and runs ``(buffer + chunk).split("\\n")`` for every chunk (``mcp/client/stdio.py``), so a line of
n chunks costs O(n²) copying: each doubling of the size roughly quadruples the time. Only the SDK is
used here, nothing from mcp2repl. The report text is in ``bench/upstream/README.md``.
"""

from __future__ import annotations

import sys
import time

import anyio
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

WRITER = """
import sys, json
n = int(sys.argv[1])
msg = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x" * n}}
sys.stdout.write(json.dumps(msg) + "\\n"); sys.stdout.flush()
sys.stdin.read()
"""


async def deliver(size: int) -> float:
    params = StdioServerParameters(command=sys.executable, args=["-c", WRITER, str(size)])
    started = time.perf_counter()
    async with stdio_client(params) as (read, _write):
        message = await read.receive()
        seconds = time.perf_counter() - started
        assert not isinstance(message, Exception), message
    return seconds


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [2, 4, 8, 16]
    first: float | None = None
    for mb in sizes:
        seconds = anyio.run(deliver, mb * 1024 * 1024)
        first = first or seconds
        print(f"{mb:4d} MB line: {seconds:7.2f} s  ({seconds / first:5.1f}x the first size's time for {mb / sizes[0]:g}x the bytes)")


if __name__ == "__main__":
    main()
