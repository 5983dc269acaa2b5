"""The raw Python SDK baseline of bench/run.py, run as its own process.

    python bench/sdk_client.py '<spec json>'

A separate process, like the kernel and the Node baseline: its start-up counts for the cold
start, its memory is sampled alone for the 50 MB result, and the harness's own event loop and
sampler threads never share its GIL.

Protocol (shared with bench/node/raw_sdk.mjs): ``@event`` lines, which the parent timestamps
when they arrive (``@ready`` once Python and the SDK are imported, ``@initialized``, ``@first``,
``@big_start``/``@big_end`` around the large call), and one JSON line per measure.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import TextIO

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


say("@ready")


def rss_bytes() -> int:
    """Read /proc directly: importing psutil here would be measured too."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def main(spec: dict, devnull: TextIO) -> None:
    server = spec["server"]
    params = StdioServerParameters(command=server["command"], args=server["args"])

    async def echo(session: ClientSession) -> None:
        await session.call_tool(server["tool"], server["arguments"])

    async with stdio_client(params, errlog=devnull) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        say("@initialized")
        warmed = False
        for measure in spec["measures"]:
            if measure == "cold":
                await echo(session)
                say("@first")
                say(json.dumps({"measure": measure}))
                continue
            if not warmed:
                for _ in range(spec["warmup"]):
                    await echo(session)
                warmed = True
            n = spec["calls"]
            if measure == "seq":
                t0 = time.perf_counter()
                for _ in range(n):
                    await echo(session)
                total = time.perf_counter() - t0
                say(json.dumps({"measure": measure, "total_s": total, "us_per_call": total / n * 1e6}))
            elif measure == "conc":
                t0 = time.perf_counter()
                await asyncio.gather(*(echo(session) for _ in range(n)))
                total = time.perf_counter() - t0
                say(json.dumps({"measure": measure, "total_s": total, "us_per_call": total / n * 1e6}))
            elif measure == "big":
                before = rss_bytes()
                say("@big_start")
                t0 = time.perf_counter()
                result = await session.call_tool(spec["big_tool"], {"kb": spec["kb"]})
                seconds = time.perf_counter() - t0
                say("@big_end")
                size = len(result.content[0].text)  # type: ignore[union-attr]
                say(json.dumps({"measure": measure, "time_s": seconds, "rss_before": before, "payload_bytes": size}))
            else:
                raise ValueError(f"unknown measure {measure}")


if __name__ == "__main__":
    with open(os.devnull, "w") as null:  # the server's stderr
        asyncio.run(main(json.loads(sys.argv[1]), null))
