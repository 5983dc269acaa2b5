"""This kernel (and ipykernel's python3 kernel, the trivial cell's baseline), driven the way a
frontend drives it: jupyter_client, a fresh kernel in a temp directory whose mcp.json names
exactly the server being measured, default kernel settings.

Loops are timed inside the cell with ``performance.now()``, as the SDK baselines time theirs
in-process; the wall time around the cell is kept in the results too.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from _cells import cell_value
from harness import BIG_TOOL, Config, PeakRss, Server
from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.manager import AsyncKernelManager


def available(kernel_name: str) -> str | None:
    """Why the kernelspec cannot be found, or None."""
    try:
        KernelSpecManager().get_kernel_spec(kernel_name)
    except NoSuchKernel:
        return f"no kernelspec {kernel_name!r} (run scripts/bootstrap.sh)"
    return None


class Kernel:
    """A started kernel with its client, its process id and how long it took to be ready."""

    def __init__(self, km: AsyncKernelManager, kc: Any, ready_s: float) -> None:
        self.km, self.kc, self.ready_s = km, kc, ready_s
        self.pid: int = km.provisioner.process.pid  # type: ignore[union-attr]

    async def value(self, code: str, timeout: float = 1800) -> tuple[str, float]:
        """The cell's text/plain result and the wall time of the whole request."""
        t = time.perf_counter()
        text = await cell_value(self.kc, code, timeout)
        return text, time.perf_counter() - t

    async def roundtrip(self, code: str) -> float:
        """Seconds until both the reply and the idle status arrived: what a frontend waits for."""
        t = time.perf_counter()
        msg_id = self.kc.execute(code)
        while True:
            msg = await self.kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        while (await self.kc.get_shell_msg(timeout=60))["parent_header"].get("msg_id") != msg_id:
            pass
        return time.perf_counter() - t


@asynccontextmanager
async def started(kernel_name: str, servers: list[Server], t0: float | None = None) -> AsyncIterator[Kernel]:
    """A kernel in a fresh directory with only ``servers`` configured and no user config."""
    cwd = Path(tempfile.mkdtemp(prefix="mcp2repl-bench-"))
    try:
        config = cwd / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {s.name: {"command": s.command, "args": s.args} for s in servers}}))
        (cwd / "xdg").mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("MCP2REPL_SERVER", "MCP2REPL_PROFILE", "MCP2REPL_ARTIFACT_DIR")}
        env |= {"XDG_CONFIG_HOME": str(cwd / "xdg"), "MCP2REPL_CONFIG": str(config), "MCP2REPL_HISTORY": str(cwd / "history.sqlite")}
        km = AsyncKernelManager(kernel_name=kernel_name)
        t0 = time.perf_counter() if t0 is None else t0
        # The kernel's own stderr (ipykernel's TCP warning, tracebacks) goes to a log, shown on failure.
        with open(cwd / "kernel.log", "w+b") as log:  # noqa: ASYNC230 - a local file, opened once per kernel
            await km.start_kernel(cwd=str(cwd), env=env, stdout=log, stderr=log)
            kc = km.client()
            kc.start_channels()
            try:
                await kc.wait_for_ready(timeout=120)
                yield Kernel(km, kc, time.perf_counter() - t0)
            except Exception as e:
                log.seek(0)
                e.add_note(f"{kernel_name} kernel log:\n{log.read().decode(errors='replace')[-2000:]}")
                raise
            finally:
                kc.stop_channels()
                await km.shutdown_kernel(now=True)
    finally:
        shutil.rmtree(cwd, ignore_errors=True)


def _call(server: Server) -> str:
    return f"mcp.{server.name}.{server.tool}({json.dumps(server.arguments)})"


async def session(server: Server, group: str, measures: list[str], cfg: Config) -> dict[str, dict[str, Any]]:
    """One kernel on one server, running ``measures`` (seq, conc, big) in order after a warm-up."""
    out: dict[str, dict[str, Any]] = {}
    call, n = _call(server), cfg.calls
    async with started("mcp2repl", [server]) as k:
        # An MCPServer's first calls are slow (imports, validators): warm up as the SDKs do.
        await k.value(f"for (let i = 0; i < {cfg.warmup}; i++) await {call}; 1")
        if "seq" in measures:
            text, wall = await k.value(f"const t_seq = performance.now(); for (let i = 0; i < {n}; i++) await {call}; performance.now() - t_seq")
            out[f"seq_{group}"] = {"value": float(text) * 1000 / n, "cell_ms": float(text), "wall_s": wall, "wall_us_per_call": wall / n * 1e6}
        if "conc" in measures:
            text, wall = await k.value(
                f"const t_conc = performance.now(); await Promise.all(Array.from({{ length: {n} }}, () => {call})); performance.now() - t_conc"
            )
            out[f"conc_{group}"] = {"value": float(text) * 1000 / n, "cell_ms": float(text), "wall_s": wall, "wall_us_per_call": wall / n * 1e6}
        if "big" in measures:
            payload = cfg.kb * 1024
            with PeakRss(k.pid) as rss:
                before = rss.reset()
                text, wall = await k.value(
                    f"const t_big = performance.now(); let big_env = await api.print(await mcp.{server.name}.{BIG_TOOL}({{ kb: {cfg.kb} }}), "
                    "{ artifactName: 'big' }); performance.now() - t_big"
                )
                peak = rss.peak
            await k.value("big_env = null; 0")
            out["big_time"] = {"value": float(text) / 1000, "wall_s": wall, "payload_bytes": payload}
            growth = peak - before
            out["big_peak"] = {"value": growth / payload, "rss_before": before, "peak_rss": peak, "growth_bytes": growth, "payload_bytes": payload}
    return out


async def cold_session(server: Server, measures: list[str], cfg: Config) -> dict[str, dict[str, Any]]:
    """From starting the kernel to the first tool result; then, warm, the trivial cell."""
    out: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    async with started("mcp2repl", [server], t0) as k:
        await k.value(f"await {_call(server)}")
        first = time.perf_counter() - t0
        if "cold" in measures:
            out["cold"] = {"value": first, "ready_s": k.ready_s}
            out["cold_ready"] = {"value": k.ready_s}
        if "trivial" in measures:
            out["trivial"], out["trivial_ts"] = await _trivial_js_and_ts(k, cfg)
    return out


async def ipykernel_session(cfg: Config) -> dict[str, dict[str, Any]]:
    """ipykernel's own floor on this machine, for the trivial cell."""
    async with started("python3", []) as k:
        return {"trivial": await _trivial(k, cfg)}


async def _trivial(k: Kernel, cfg: Config) -> dict[str, Any]:
    for _ in range(cfg.trivial_warmup):
        await k.roundtrip("1+1")
    return _stats([await k.roundtrip("1+1") * 1000 for _ in range(cfg.trivial_n)])


#: a trivial cell that needs its types stripped (every cell may be TypeScript)
TRIVIAL_TS = "(1 + 1) as number"


async def _trivial_js_and_ts(k: Kernel, cfg: Config) -> tuple[dict[str, Any], dict[str, Any]]:
    """``1+1`` and its TypeScript twin, alternated so that both see the same machine."""
    for _ in range(cfg.trivial_warmup):
        await k.roundtrip("1+1")
        await k.roundtrip(TRIVIAL_TS)
    js: list[float] = []
    ts: list[float] = []
    for _ in range(cfg.trivial_n):
        js.append(await k.roundtrip("1+1") * 1000)
        ts.append(await k.roundtrip(TRIVIAL_TS) * 1000)
    return _stats(js), _stats(ts)


def _stats(times: list[float]) -> dict[str, Any]:
    times = sorted(times)
    return {"value": statistics.median(times), "p90_ms": times[int(len(times) * 0.9)], "min_ms": times[0], "n": len(times)}
