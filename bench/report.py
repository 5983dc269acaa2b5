"""The report of bench/run.py: the issue's tables (per implementation; issue 28's session figures
beside their baselines), their notes, and docs/performance.md, from bench/harness.py's summary.

A full run writes docs/performance.md; the report says which measures and sizes it was made with,
so a table regenerated from a partial run is never mistaken for the committed one.
"""

from __future__ import annotations

from typing import Any

from harness import IMPL_LABELS, MEASURES, Config, Measure


def _num(x: float, digits: int) -> str:
    return f"{x:,.{digits}f}"


def _cell(stats: dict[str, Any] | None, m: Measure, impl: str, skipped: str | None) -> str:
    if stats is None:
        return f"n/a ({skipped})" if skipped else "—"
    text = f"**{_num(stats['median'], m.digits)}** ({_num(stats['min'], m.digits)}–{_num(stats['max'], m.digits)})"
    if stats["ratio_median"] is not None:
        text += f" · {stats['ratio_median']:.2f}×"
    return text


def _name(key: str, cfg: Config | None) -> str:
    """The label of measure ``key`` without its unit, its sizes filled in from ``cfg``."""
    label = next(x.label for x in MEASURES if x.key == key).split(" (")[0]
    sizes = {k: f"{getattr(cfg, k):,}" if cfg else "N" for k in ("mem_calls", "mem_cells", "sessions")}
    return label.format(**sizes)


def _target(m: Measure, kernel: dict[str, Any] | None, cfg: Config | None = None) -> tuple[str, str]:
    """The kernel's target as text, and whether its median (or median ratio) meets it."""
    if m.target is None:
        return "—", ""
    if m.target_is_ratio:
        against = _name(m.baseline_key, cfg) if m.baseline_key else None
        text, value = f"≤ {m.target:g}× {against or IMPL_LABELS[m.baseline]}", kernel and kernel["ratio_median"]
    elif m.unit == "×":
        text, value = f"≤ {m.target:g}× payload", kernel and kernel["median"]
    else:
        text, value = f"≤ {m.target:g} {m.unit}", kernel and kernel["median"]
    if m.at_least:
        text = text.replace("≤", "≥")
    if value is None:
        return text, "?"
    return text, "yes" if (value >= m.target if m.at_least else value <= m.target) else "no"


def render_table(summary: dict[str, dict[str, Any]], cfg: Config, skipped: dict[str, str]) -> str:
    """The issue's table: one row per measure, one column per implementation."""
    mb = cfg.kb / 1024
    lines = [
        "| measure | raw Python SDK | raw Node SDK | this kernel | target (kernel) | met |",
        "|---|---|---|---|---|---|",
    ]
    for m in MEASURES:
        if m.selector not in cfg.measures or m.table != "calls":
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


def render_session_table(summary: dict[str, dict[str, Any]], cfg: Config) -> str:
    """Issue 28's table: the agent's step and a session's memory, each beside its baselines of the same run."""
    lines = ["| measure | baseline, same run | this kernel | target | met |", "|---|---|---|---|---|"]
    for m in MEASURES:
        if m.selector not in cfg.measures or m.table != "session":
            continue
        row = summary.get(m.key, {})
        label = m.label.format(mem_calls=f"{cfg.mem_calls:,}", mem_cells=f"{cfg.mem_cells:,}", sessions=f"{cfg.sessions:,}")
        if m.baseline_key:
            base = "that row: " + _name(m.baseline_key, cfg)
        else:
            base = "<br>".join(f"{IMPL_LABELS[b]}: {_cell({**row[b], 'ratio_median': None}, m, b, None)}" for b in m.impls if b != "kernel" and b in row) or "—"
        kernel = row.get("kernel")
        cell = _cell({**kernel, "ratio_median": None}, m, "kernel", None) if kernel else "—"
        if kernel:
            ratios = [f"{r:.2f}× {IMPL_LABELS[b]}" for b, r in kernel.get("ratio_to", {}).items()]
            if m.baseline_key and kernel["ratio_median"] is not None:
                ratios.append(f"{kernel['ratio_median']:.2f}× that row")
            cell += "".join(f" · {r}" for r in ratios) + (f"<br>{kernel['detail']}" if kernel.get("detail") else "")
        target, met = _target(m, kernel, cfg)
        lines.append(f"| {label} | {base} | {cell} | {target} | {met} |")
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

SESSION_NOTES = """\
6. Wall time from the shell, median of {step_n} runs per round after {step_warmup} warm-up runs, in a
   folder whose `mcp.json` names no server; the step, the one-shot and both floors run in turn
   (rotating order) in the same loop, with bytecode cached as `pip install` leaves it (a fresh
   `PYTHONPYCACHEPREFIX`, written by the warm-up runs); bench/step_bench.py's commands and clock.
   The ratios are to the floors' medians of the same round.
7. A named session (`mcp2repl --session`) with one stdio server, the bench's Python echo server,
   after one tool call and {settle:g} s of quiet; the baseline is ipykernel's own `python3` kernel,
   idle after one cell, in the same round. Helpers: every descendant process of the kernel that is
   not the server's own command (nor started by it): the run-folder watcher (`tee` and `tail`), the servers' supervisor;
   beside each its USS, the memory it alone holds (its RSS also counts the Python library the kernel maps too).
   Then one step of {mem_calls:,} sequential tool calls, another such step, then {mem_cells:,}
   one-line steps; the kernel's RSS is read after each, after {settle:g} s of quiet: the ratio is
   to the idle kernel of the same round (1.00× is no growth), for the second step to the first
   (what a warm session still adds per {mem_calls:,} calls). Beside each, the kernel's anonymous
   memory (`RssAnon`) against the same row: the rest of RSS is file pages, mostly the code of V8's
   library that warmer JS runs again (shared by every kernel, not a leak). MB = 2²⁰ bytes.
8. {sessions:,} named sessions with the same server, started one after another (none past 80 % of
   the machine's memory in use), then one step of each from the shell, beside a `python -S -c pass`,
   twice; the second pass is the measure (slowest of each; how many took ≤ 100 ms). Memory per
   session: the median of the sessions' PSS (pages shared by k processes count 1/k in each) summed
   over kernel, helpers and server, with all of them running; ipykernel's `python3` kernel is
   measured beside them. Sessions that fit: 80 % of /proc/meminfo's MemTotal over that figure (and,
   in the cell, from MemAvailable at the start).
"""


def render_markdown(results: dict[str, Any]) -> str:
    cfg = Config(**{k: v for k, v in results["config"].items() if k in Config.__dataclass_fields__})
    meta = results["meta"]
    loads = ", ".join(f"{r['quiet']['loadavg'][0]:.2f}" for r in results["rounds"])
    quiet = sum(r["quiet"]["quiet"] for r in results["rounds"])
    skipped = "".join(f"\n- {IMPL_LABELS.get(k, k)} skipped: {v}" for k, v in results["skipped"].items())
    sessions = ""
    if any(m.table == "session" and m.selector in cfg.measures for m in MEASURES):
        notes = SESSION_NOTES.format(**{k: getattr(cfg, k) for k in ("step_n", "step_warmup", "settle", "mem_calls", "mem_cells", "sessions")})
        sessions = f"\n## Sessions: the agent's step and a session's memory (issue 28)\n\n{render_session_table(results['summary'], cfg)}\n\n{notes}"
    calls = ""
    if any(m.table == "calls" and m.selector in cfg.measures for m in MEASURES):
        calls = f"{render_table(results['summary'], cfg, results['skipped'])}\n\n{NOTES.format(trivial_n=cfg.trivial_n, kb=cfg.kb)}"
    partial = results.get("partial")
    kind = f"a partial run: {partial}; not the table to commit" if partial else "a full run"
    return f"""<!-- Generated by bench/run.py ({kind}): change bench/harness.py or bench/report.py, not this file. -->
# Performance
{f"{chr(10)}**Partial run** ({partial}): not the committed table.{chr(10)}" if partial else ""}
Measured by `bench/run.py` (`.venv/bin/python bench/run.py`; see `bench/README.md`). Raw results:
`{results["json"]}`. Every number comes from a shared machine: compare the ratios,
which are taken within one round, more than the absolute values.

{calls}{sessions}
## Setup

- {results["id"]}: {cfg.rounds} interleaved round(s), {cfg.calls:,} calls per loop after {cfg.warmup} warm-up calls,
  {cfg.kb / 1024:g} MB payload; implementations in rotating order within each round.
- Machine: {meta["cpus"]} CPUs ({meta["cpu_model"]}), {meta["mem_gb"]} GB RAM, {meta["platform"]}.
- 1-minute load average before each round: {loads}; quiet (CPU ≤ {cfg.quiet_cpu:g} %) before {quiet} of {len(results["rounds"])} round(s).
- Versions: {", ".join(f"{k} {v}" for k, v in meta["versions"].items())}.
- Commit: {meta["commit"]}.{skipped}
"""
