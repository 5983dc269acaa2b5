"""What every benchmark of bench/run.py shares: the servers, the measures and their targets, a
quiet-machine wait, a peak-RSS sampler, and the statistics and table of the report.

Numbers from a shared machine drift by tens of percent within minutes, so each implementation is
compared with the raw Python SDK *measured in the same round*, and the report gives the median of
those per-round ratios next to the median, min and max of the raw numbers.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import psutil

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
NODE_DIR = BENCH / "node"
EVERYTHING_BIN = ROOT / "tests" / "fixtures" / "node" / "node_modules" / ".bin" / "mcp-server-everything"
ECHO_SERVER = ROOT / "tests" / "fixtures" / "servers" / "echo_server.py"


@dataclass(frozen=True)
class Server:
    """A stdio server and the cheap tool call every implementation repeats on it."""

    name: str  # also its name in the kernel's mcp.json, so cells call mcp.<name>.<tool>
    command: str
    args: list[str]
    tool: str
    arguments: dict[str, Any]

    def spec(self) -> dict[str, Any]:
        return {"command": self.command, "args": self.args, "tool": self.tool, "arguments": self.arguments}

    def missing(self) -> str | None:
        """Why this server cannot run here, or None."""
        if not Path(self.command).exists():
            return f"{self.command} is missing (run scripts/bootstrap.sh --test)"
        return None


def servers(python: str) -> dict[str, Server]:
    return {
        "python": Server("echo", python, [str(ECHO_SERVER)], "echo", {"text": "x"}),
        "everything": Server("everything", str(EVERYTHING_BIN), [], "echo", {"message": "x"}),
    }


BIG_TOOL = "big"  # on the Python echo fixture: a JSON text of exactly kb KiB (kb <= 65,536)

IMPLS = ("python_sdk", "node_sdk", "kernel")
IMPL_LABELS = {"python_sdk": "raw Python SDK", "node_sdk": "raw Node SDK", "kernel": "this kernel", "ipykernel": "ipykernel python3"}


@dataclass(frozen=True)
class Measure:
    """One row of the table. ``target`` applies to the kernel: a ratio to the baseline when
    ``target_is_ratio``, else an absolute bound in ``unit``. With ``baseline_key`` the ratio is to
    another measure of the same implementation in the same round (a TypeScript cell against the
    plain one, the stripper against the rewrite) instead of to another implementation."""

    key: str
    label: str
    unit: str
    selector: str  # the --only name that selects it
    impls: tuple[str, ...] = IMPLS
    baseline: str = "python_sdk"
    target: float | None = None
    target_is_ratio: bool = True
    digits: int = 0
    baseline_key: str | None = None


MEASURES: tuple[Measure, ...] = (
    Measure("seq_python", "sequential call, Python server (µs/call)", "µs", "seq_python", target=1.0),
    Measure("seq_everything", "sequential call, server-everything (µs/call)", "µs", "seq_everything", target=1.0),
    Measure("conc_python", "{n} concurrent calls, Python server (µs/call)", "µs", "conc_python", target=1.0),
    Measure("conc_everything", "{n} concurrent calls, server-everything (µs/call)", "µs", "conc_everything", target=1.0),
    Measure("cold", "cold start → first tool result, Python server (s)", "s", "cold", target=1.0, digits=2),
    Measure("cold_ready", "cold start → ready (s)¹", "s", "cold", digits=2),
    Measure(
        "trivial", "warm trivial cell `1+1` round trip (ms)²", "ms", "trivial", impls=("ipykernel", "kernel"), baseline="ipykernel",
        target=3.0, target_is_ratio=False, digits=2,
    ),
    Measure(
        "trivial_ts", "warm trivial TypeScript cell `(1 + 1) as number` (ms)⁴", "ms", "trivial", impls=("kernel",),
        baseline_key="trivial", target=1.1, digits=2,
    ),
    Measure("big_time", "{mb} MB result: total time (s)³", "s", "big", target=0.7, digits=2),
    Measure("big_peak", "{mb} MB result: peak RSS growth (× payload)", "×", "big", target=4.0, target_is_ratio=False, digits=1),
    Measure("rewrite_10", "cell rewrite, 10-line cell (ms)⁵", "ms", "typestrip", impls=("kernel",), digits=3),
    Measure(
        "strip_10", "type stripping, 10-line TypeScript cell (ms)⁵", "ms", "typestrip", impls=("kernel",),
        baseline_key="rewrite_10", target=1.0, target_is_ratio=False, digits=3,
    ),
    Measure("rewrite_2000", "cell rewrite, 2,000-line cell (ms)⁵", "ms", "typestrip", impls=("kernel",), digits=1),
    Measure(
        "strip_2000", "type stripping, 2,000-line TypeScript cell (ms)⁵", "ms", "typestrip", impls=("kernel",),
        baseline_key="rewrite_2000", target=100.0, target_is_ratio=False, digits=1,
    ),
    Measure("rewrite_js", "cell rewrite, plain-JS cells of the test suite (µs/cell)⁵", "µs", "typestrip", impls=("kernel",), digits=1),
    Measure(
        "strip_js", "type stripping, the same plain-JS cells (µs/cell)⁵", "µs", "typestrip", impls=("kernel",),
        baseline_key="rewrite_js", target=1.0, digits=1,
    ),
)
SELECTORS = tuple(dict.fromkeys(m.selector for m in MEASURES))


@dataclass
class Config:
    rounds: int = 3
    calls: int = 1000
    warmup: int = 50
    kb: int = 50 * 1024
    trivial_n: int = 200
    trivial_warmup: int = 30
    quiet_wait: float = 60.0
    quiet_cpu: float = 20.0
    quick: bool = False
    measures: tuple[str, ...] = SELECTORS
    impls: tuple[str, ...] = (*IMPLS, "ipykernel")
    python: str = ""  # the interpreter of the Python SDK baseline and of the Python server


def rotate(items: list[T], k: int) -> list[T]:
    """Every implementation goes first in turn, so none always runs on a machine warmed (or
    heated) by the others."""
    if not items:
        return items
    k %= len(items)
    return items[k:] + items[:k]


def wait_quiet(max_wait: float, cpu_limit: float) -> dict[str, Any]:
    """Wait, at most ``max_wait`` s, until a 1 s CPU sample of the whole machine is under ``cpu_limit`` %.

    The decision uses the CPU sample, not the 1-minute load average, because our own previous
    round keeps that average up for a minute after it ends; the load average is recorded.
    """
    start = time.monotonic()
    seen: list[float] = []
    quiet = max_wait <= 0
    while not quiet:
        seen.append(psutil.cpu_percent(interval=1.0))
        quiet = seen[-1] <= cpu_limit
        if time.monotonic() - start >= max_wait:
            break
    return {
        "quiet": quiet,
        "waited_s": round(time.monotonic() - start, 2),
        "cpu_percent_samples": seen,
        "cpu_limit_percent": cpu_limit,
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }


class PeakRss:
    """The peak resident set of one process (not its children), sampled from a thread.

    From a thread of *this* process, so a process busy parsing 50 MB (GIL held, event loop
    blocked) cannot delay its own samples.
    """

    def __init__(self, pid: int, interval: float = 0.002) -> None:
        self.process = psutil.Process(pid)
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def rss(self) -> int:
        try:
            return self.process.memory_info().rss
        except psutil.Error:
            return 0

    def reset(self) -> int:
        """Start a new peak from now; returns the current RSS."""
        now = self.rss()
        self.peak = now
        return now

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss())
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRss:
        self.reset()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def summarize(rounds: list[dict[str, Any]], cfg: Config) -> dict[str, dict[str, Any]]:
    """Per measure and implementation: median/min/max of the per-round values, and the median of
    the per-round ratios to that measure's baseline."""
    out: dict[str, dict[str, Any]] = {}
    for m in MEASURES:
        per_impl: dict[str, Any] = {}
        for impl in m.impls:
            values, ratios = [], []
            for rnd in rounds:
                value = rnd["values"].get(m.key, {}).get(impl)
                if value is None:
                    continue
                values.append(value)
                if m.baseline_key is not None:
                    base = rnd["values"].get(m.baseline_key, {}).get(impl)
                else:
                    base = rnd["values"].get(m.key, {}).get(m.baseline) if impl != m.baseline else None
                if base:
                    ratios.append(value / base)
            if values:
                per_impl[impl] = {
                    "median": statistics.median(values),
                    "min": min(values),
                    "max": max(values),
                    "values": values,
                    "ratio_median": statistics.median(ratios) if ratios else None,
                    "ratios": ratios,
                }
        if per_impl:
            out[m.key] = per_impl
    return out


def _num(x: float, digits: int) -> str:
    return f"{x:,.{digits}f}"


def _cell(stats: dict[str, Any] | None, m: Measure, impl: str, skipped: str | None) -> str:
    if stats is None:
        return f"n/a ({skipped})" if skipped else "—"
    text = f"**{_num(stats['median'], m.digits)}** ({_num(stats['min'], m.digits)}–{_num(stats['max'], m.digits)})"
    if stats["ratio_median"] is not None:
        text += f" · {stats['ratio_median']:.2f}×"
    return text


def _target(m: Measure, kernel: dict[str, Any] | None) -> tuple[str, str]:
    """The kernel's target as text, and whether its median (or median ratio) meets it."""
    if m.target is None:
        return "—", ""
    if m.target_is_ratio:
        against = next((x.label.split(" (")[0] for x in MEASURES if x.key == m.baseline_key), None) if m.baseline_key else None
        text, value = f"≤ {m.target:g}× {against or IMPL_LABELS[m.baseline]}", kernel and kernel["ratio_median"]
    elif m.unit == "×":
        text, value = f"≤ {m.target:g}× payload", kernel and kernel["median"]
    else:
        text, value = f"≤ {m.target:g} {m.unit}", kernel and kernel["median"]
    if value is None:
        return text, "?"
    return text, "yes" if value <= m.target else "no"


def render_table(summary: dict[str, dict[str, Any]], cfg: Config, skipped: dict[str, str]) -> str:
    """The issue's table: one row per measure, one column per implementation."""
    mb = cfg.kb / 1024
    lines = [
        "| measure | raw Python SDK | raw Node SDK | this kernel | target (kernel) | met |",
        "|---|---|---|---|---|---|",
    ]
    for m in MEASURES:
        if m.selector not in cfg.measures:
            continue
        row = summary.get(m.key, {})
        label = m.label.format(n=f"{cfg.calls:,}", mb=f"{mb:g}")
        cols = []
        for impl in ("python_sdk", "node_sdk", "kernel"):
            shown = "ipykernel" if impl == "python_sdk" and m.baseline == "ipykernel" else impl
            if shown not in m.impls:
                cols.append("—")
                continue
            cell = _cell(row.get(shown), m, shown, skipped.get(shown))
            cols.append(("ipykernel: " + cell) if shown == "ipykernel" else cell)
        target, met = _target(m, row.get("kernel"))
        lines.append(f"| {label} | {' | '.join(cols)} | {target} | {met} |")
    return "\n".join(lines)


NOTES = """\
Cells: **median** (min–max) over the rounds · median of the per-round ratios to the raw Python SDK
(for the trivial cell: to ipykernel's own `python3` kernel) measured in the same round. Loops are
timed inside the process that runs them: the SDKs' own clocks, and `performance.now()` in the
kernel's cell (whole milliseconds there, which is why loops run for seconds); the kernel's wall
times around each cell are in the JSON.

1. Ready: the kernel answered `kernel_info` (its servers may still be starting); for the SDKs,
   the runtime and the SDK are loaded (before the server is spawned).
2. Round trip through jupyter_client until both the `execute_reply` and the `idle` status
   arrived, median of {trivial_n} cells on a warm kernel; the baseline column is ipykernel's
   `python3` kernel running `1+1`.
3. Kernel: `await api.print(await mcp.echo.big({{kb: {kb}}}))` timed inside the cell (the call,
   the fitted view and the artifact of the whole value); SDKs: the `call_tool` alone (the Node SDK
   with its 10 MB message guard, `maxBufferSize`, lifted so that it can take the result). Peak RSS
   growth: the implementation's own process (the kernel, or the SDK client), sampled every 2 ms
   from another process, above its RSS just before the call, divided by the payload size.
4. Every cell may be TypeScript: the same warm kernel alternates this cell with `1+1`; the ratio
   is to `1+1` in the same round. Plain JavaScript costs the stripper's pass-through (row 5).
5. `bench/typestrip_bench.py`, in the harness process (pure Python over tree-sitter, what the
   kernel runs before V8 sees a cell): median of repeated runs with warm caches. The ratio of a
   stripping row is to the rewrite row above it, timed in the same round on the same cells (the
   TypeScript cells' rewrite takes their stripped JavaScript). Plain JS: every distinct cell the
   test suite runs (`tests/fixtures/js_cells.json`), which the stripper returns unchanged.
"""


def render_markdown(results: dict[str, Any]) -> str:
    cfg = Config(**{k: v for k, v in results["config"].items() if k in Config.__dataclass_fields__})
    meta = results["meta"]
    loads = ", ".join(f"{r['quiet']['loadavg'][0]:.2f}" for r in results["rounds"])
    quiet = sum(r["quiet"]["quiet"] for r in results["rounds"])
    skipped = "".join(f"\n- {IMPL_LABELS.get(k, k)} skipped: {v}" for k, v in results["skipped"].items())
    return f"""<!-- Generated by bench/run.py (a full run): change bench/harness.py, not this file. -->
# Performance

Measured by `bench/run.py` (`.venv/bin/python bench/run.py`; see `bench/README.md`). Raw results:
`{results["json"]}`. Every number comes from a shared machine: compare the ratios,
which are taken within one round, more than the absolute values.

{render_table(results["summary"], cfg, results["skipped"])}

{NOTES.format(trivial_n=cfg.trivial_n, kb=cfg.kb)}
## Setup

- {results["id"]}: {cfg.rounds} interleaved round(s), {cfg.calls:,} calls per loop after {cfg.warmup} warm-up calls,
  {cfg.kb / 1024:g} MB payload; implementations in rotating order within each round.
- Machine: {meta["cpus"]} CPUs ({meta["cpu_model"]}), {meta["mem_gb"]} GB RAM, {meta["platform"]}.
- 1-minute load average before each round: {loads}; quiet (CPU ≤ {cfg.quiet_cpu:g} %) before {quiet} of {len(results["rounds"])} round(s).
- Versions: {", ".join(f"{k} {v}" for k, v in meta["versions"].items())}.
- Commit: {meta["commit"]}.{skipped}
"""
