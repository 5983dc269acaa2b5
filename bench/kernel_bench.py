"""Kernel core benchmarks (issue: kernel core). Prints medians; targets are in the README of bench/.

    .venv/bin/python bench/kernel_bench.py

- trivial cell (`1 + 1`) round trip through jupyter_client on a warm kernel (target <= 3 ms)
- cell rewrite cost for a 10-line and a 2,000-line cell (targets <= 1 ms and <= 100 ms)
- kernel start to first cell result (target <= 1.5 s), and idle kernel RSS
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_kernel.engine.rewrite import rewrite


def bench_rewrite() -> dict[str, float]:
    small = "\n".join(
        [
            "const items = await tools.search({ query: 'x' });",
            "let total = 0;",
            "for (const it of items) {",
            "  if (it.price > 10) total += it.price;",
            "}",
            "function fmt(n) { return n.toFixed(2) }",
            "class Box { constructor(v) { this.v = v } }",
            "const { a, b: [c] } = { a: 1, b: [2] };",
            "console.log(fmt(total));",
            "total",
        ]
    )
    big = "\n".join(f"const v{i} = await f({i}, 'abc', [1, 2, 3]); if (v{i}) {{ g(v{i}) }}" for i in range(2000))
    out = {}
    for name, src, n in (("rewrite_10_lines_ms", small, 500), ("rewrite_2000_lines_ms", big, 10)):
        times = []
        for _ in range(n):
            t = time.perf_counter()
            rewrite(src, "cell[1]")
            times.append((time.perf_counter() - t) * 1000)
        out[name] = statistics.median(times)
    return out


async def bench_kernel() -> dict[str, float]:
    cwd = tempfile.mkdtemp()
    # an explicit empty config: measure the kernel, not the demo server
    cfg = Path(cwd) / "mcp.json"
    cfg.write_text('{"mcpServers": {}}')
    starts = []
    for _ in range(3):
        km = AsyncKernelManager(kernel_name="mcp2repl")
        t = time.perf_counter()
        await km.start_kernel(cwd=cwd, env={**os.environ, "XDG_CONFIG_HOME": cwd})
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        reply = await kc.execute_interactive("1 + 1", timeout=30)
        starts.append(time.perf_counter() - t)
        assert reply["content"]["status"] == "ok"
        kc.stop_channels()
        await km.shutdown_kernel(now=True)

    rtts = await _roundtrips("mcp2repl", cwd, "1 + 1")
    baseline = await _roundtrips("python3", cwd, "1 + 1")  # ipykernel's own floor, same machine, same run
    _pid, rss_kb = _LAST_RSS
    return {
        "trivial_cell_roundtrip_ms": statistics.median(rtts),
        "trivial_cell_roundtrip_p90_ms": sorted(rtts)[int(len(rtts) * 0.9)],
        "ipykernel_python3_roundtrip_ms": statistics.median(baseline),
        "start_to_first_result_s": statistics.median(starts),
        "idle_rss_mb": rss_kb / 1024,
    }


_LAST_RSS = (0, 0)


async def _roundtrips(kernel_name: str, cwd: str, code: str) -> list[float]:
    global _LAST_RSS
    km = AsyncKernelManager(kernel_name=kernel_name)
    await km.start_kernel(cwd=cwd, env={**os.environ, "XDG_CONFIG_HOME": cwd})
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)

    async def roundtrip() -> float:
        t = time.perf_counter()
        msg_id = kc.execute(code)
        while True:  # reply and idle both arrived = what a frontend waits for
            msg = await kc.get_iopub_msg(timeout=10)
            if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        while (await kc.get_shell_msg(timeout=10))["parent_header"].get("msg_id") != msg_id:
            pass
        return (time.perf_counter() - t) * 1000

    for _ in range(30):
        await roundtrip()
    rtts = [await roundtrip() for _ in range(300)]
    await asyncio.sleep(1)
    pid = km.provisioner.process.pid  # type: ignore[union-attr]
    status = Path(f"/proc/{pid}/status").read_text()  # noqa: ASYNC240 - a tiny procfs read
    _LAST_RSS = (
        (pid, int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]))
        if kernel_name == "mcp2repl"
        else _LAST_RSS
    )
    kc.stop_channels()
    await km.shutdown_kernel(now=True)
    return rtts


def main() -> None:
    results = bench_rewrite()
    results.update(asyncio.run(bench_kernel()))
    for key, value in results.items():
        print(f"{key:34s} {value:10.3f}")


if __name__ == "__main__":
    main()
