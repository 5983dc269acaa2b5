"""Completion over a 1,000-tool catalog (target: under 20 ms per request).

    .venv/bin/python bench/completion_bench.py

Uses the same synthetic catalog as discovery_bench.py; completion answers from Python alone, so
this is the whole per-request cost inside the kernel (the Jupyter round trip comes on top).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from discovery_bench import synthetic_catalog

from mcp_kernel.api.completion import complete


def main() -> None:
    catalog = synthetic_catalog()
    server = next(iter(catalog.server_safe.values()))
    tool = catalog.entries[0]
    requests = ["mcp.", f"mcp.{server}.", f"mcp.{server}.get_", "tools.", "tools.se", 'mcp.tools["li', f"await {tool.call_path}({{ "]
    for code in requests:
        complete(code, len(code), catalog)  # warm signatures
    times = {}
    for code in requests:
        samples = []
        for _ in range(20):
            t = time.perf_counter()
            complete(code, len(code), catalog)
            samples.append((time.perf_counter() - t) * 1000)
        times[code] = statistics.median(samples)
    for code, ms in times.items():
        print(f"{code!r:40s} {ms:8.2f} ms")
    print(f"{'worst median':40s} {max(times.values()):8.2f} ms (catalog of {len(catalog.entries)} tools)")


if __name__ == "__main__":
    main()
