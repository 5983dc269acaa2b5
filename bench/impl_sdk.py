"""The two baselines, each a child process: the raw Python SDK (bench/sdk_client.py) and the raw
Node SDK (bench/node/raw_sdk.mjs). Both speak the same line protocol; this side timestamps the
``@event`` lines as they arrive and samples the child's RSS for the large result."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from typing import Any

from harness import BENCH, BIG_TOOL, NODE_DIR, Config, PeakRss, Server

NODE_SDK = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk"


def ensure_node() -> str | None:
    """Install the Node baseline's one dependency when missing; the reason it cannot run, or None."""
    if not shutil.which("node"):
        return "node is not on PATH"
    if NODE_SDK.is_dir():
        return None
    if not shutil.which("npm"):
        return "npm is not on PATH"
    verb = "ci" if (NODE_DIR / "package-lock.json").exists() else "install"
    try:
        done = subprocess.run(
            ["npm", verb, "--no-audit", "--no-fund", "--loglevel=error"], cwd=NODE_DIR, capture_output=True, text=True, timeout=300
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"npm {verb} in bench/node failed: {e}"
    if done.returncode or not NODE_SDK.is_dir():
        return f"npm {verb} in bench/node failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return None


def node_sdk_version() -> str | None:
    try:
        return json.loads((NODE_SDK / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def command(impl: str, cfg: Config, spec: dict[str, Any]) -> list[str]:
    if impl == "python_sdk":
        return [cfg.python, str(BENCH / "sdk_client.py"), json.dumps(spec)]
    return ["node", str(NODE_DIR / "raw_sdk.mjs"), json.dumps(spec)]


async def run_child(cmd: list[str], timeout: float) -> tuple[dict[str, float], dict[str, dict[str, Any]], dict[str, int]]:
    """Run one baseline process to its end: the seconds from spawn to each ``@event``, the JSON
    result of each measure, and the peak RSS between ``@big_start`` and ``@big_end``."""
    events: dict[str, float] = {}
    results: dict[str, dict[str, Any]] = {}
    peaks: dict[str, int] = {}
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        try:
            with PeakRss(proc.pid) as rss:
                async with asyncio.timeout(timeout):
                    while line := (await proc.stdout.readline()).decode().strip():
                        if line.startswith("@"):
                            events[line[1:]] = time.perf_counter() - t0
                            if line == "@big_start":
                                rss.reset()
                            elif line == "@big_end":
                                peaks["big"] = rss.peak
                        else:
                            result = json.loads(line)
                            results[result.pop("measure")] = result
                    await proc.wait()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        if proc.returncode:
            err.seek(0)
            raise RuntimeError(f"{cmd[0]} {cmd[1]} exited with {proc.returncode}:\n{err.read().decode(errors='replace')[-2000:]}")
    return events, results, peaks


async def session(impl: str, server: Server, group: str, measures: list[str], cfg: Config) -> dict[str, dict[str, Any]]:
    """One baseline process on one server, running ``measures`` (seq, conc, big or cold) in order,
    as the kernel's session does; returns ``{measure key: {"value": …, details}}``."""
    spec = {"server": server.spec(), "measures": measures, "calls": cfg.calls, "warmup": cfg.warmup, "kb": cfg.kb, "big_tool": BIG_TOOL}
    events, results, peaks = await run_child(command(impl, cfg, spec), timeout=1800)
    out: dict[str, dict[str, Any]] = {}
    for name in ("seq", "conc"):
        if name in results:
            out[f"{name}_{group}"] = {"value": results[name]["us_per_call"], **results[name]}
    if "big" in results:
        big = results["big"]
        growth = peaks["big"] - big["rss_before"]
        out["big_time"] = {"value": big["time_s"], **big}
        out["big_peak"] = {"value": growth / big["payload_bytes"], "peak_rss": peaks["big"], "growth_bytes": growth, **big}
    if "cold" in results:
        out["cold"] = {"value": events["first"], "events_s": events}
        out["cold_ready"] = {"value": events["ready"], "events_s": events}
    return out

