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
IMPL_LABELS = {
    "python_sdk": "raw Python SDK", "node_sdk": "raw Node SDK", "kernel": "this kernel", "ipykernel": "ipykernel python3",
    "floor_S": "`python -S -c pass`", "floor": "`python -c pass`",
}


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
    #: "calls" (the first table: per implementation) or "session" (issue 28's: the kernel beside its baselines)
    table: str = "calls"
    #: the target is a floor, not a ceiling (sessions that fit)
    at_least: bool = False


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
_FLOORS = ("floor_S", "floor", "kernel")
MEASURES += (
    Measure(
        "step_warm", "warm session step `mcp2repl --session s -e 'return 1'` (ms)⁶", "ms", "step", impls=_FLOORS, baseline="floor_S",
        target=40, target_is_ratio=False, digits=1, table="session",
    ),
    Measure(
        "step_oneshot", "one-shot `mcp2repl -e '1+1'` (ms)⁶", "ms", "step", impls=_FLOORS, baseline="floor_S",
        target=200, target_is_ratio=False, table="session",
    ),
    Measure(
        "mem_idle", "idle kernel RSS, one stdio server connected (MB)⁷", "MB", "memory", impls=("ipykernel", "kernel"), baseline="ipykernel",
        target=80, target_is_ratio=False, digits=1, table="session",
    ),
    Measure(
        "mem_helper_max", "largest helper process of the session, RSS (MB)⁷", "MB", "memory", impls=("kernel",),
        target=5, target_is_ratio=False, digits=1, table="session",
    ),
    Measure("mem_helpers", "all helper processes of the session, RSS (MB)⁷", "MB", "memory", impls=("kernel",), digits=1, table="session"),
    Measure(
        "mem_after_calls", "kernel RSS after {mem_calls} tool calls (MB)⁷", "MB", "memory", impls=("kernel",), baseline_key="mem_idle",
        target=1.05, digits=1, table="session",
    ),
    Measure(
        "mem_after_more_calls", "kernel RSS after {mem_calls} more tool calls (MB)⁷", "MB", "memory", impls=("kernel",),
        baseline_key="mem_after_calls", target=1.02, digits=1, table="session",
    ),
    Measure(
        "mem_after_cells", "kernel RSS after those calls and {mem_cells} cells (MB)⁷", "MB", "memory", impls=("kernel",), baseline_key="mem_idle",
        target=1.05, digits=1, table="session",
    ),
    Measure(
        "sessions_pss", "memory per idle session, kernel + helpers + server, PSS (MB)⁸", "MB", "sessions", impls=("ipykernel", "kernel"),
        baseline="ipykernel", digits=1, table="session",
    ),
    Measure(
        "sessions_step", "slowest step of {sessions} idle sessions (ms)⁸", "ms", "sessions", impls=("floor_S", "kernel"), baseline="floor_S",
        target=100, target_is_ratio=False, table="session",
    ),
    Measure(
        "sessions_fit", "idle sessions that fit in 80 % of memory⁸", "sessions", "sessions", impls=("kernel",),
        target=100, target_is_ratio=False, table="session", at_least=True,
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
    step_n: int = 20  # timed steps (and floors) per round, interleaved
    step_warmup: int = 3
    mem_calls: int = 1000  # tool calls, then cells, before the memory is read again
    mem_cells: int = 100
    sessions: int = 10  # idle sessions started side by side
    settle: float = 3.0  # s of quiet before a memory reading


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
            detail = next((r["details"][m.key][impl] for r in reversed(rounds) if impl in r.get("details", {}).get(m.key, {})), None)
            if values:
                per_impl[impl] = {
                    "median": statistics.median(values),
                    "min": min(values),
                    "max": max(values),
                    "values": values,
                    "ratio_median": statistics.median(ratios) if ratios else None,
                    "ratios": ratios,
                    **({"detail": detail} if detail else {}),
                    **({"ratio_to": _ratios_to(rounds, m, impl)} if impl == "kernel" and m.table == "session" else {}),
                }
        if per_impl:
            out[m.key] = per_impl
    return out


def _ratios_to(rounds: list[dict[str, Any]], m: Measure, impl: str) -> dict[str, float]:
    """The median per-round ratio of ``impl`` to each other implementation of the row (every floor)."""
    out = {}
    for other in m.impls:
        ratios = [
            r["values"][m.key][impl] / r["values"][m.key][other]
            for r in rounds
            if r["values"].get(m.key, {}).get(impl) is not None and r["values"][m.key].get(other)
        ]
        if other != impl and ratios:
            out[other] = statistics.median(ratios)
    return out
