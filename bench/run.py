"""The performance issue's benchmark: this kernel against the raw Python and Node MCP SDKs.

    .venv/bin/python bench/run.py [--rounds 3] [--calls 1000] [--sessions 10] [--quick] [--only NAME[,NAME]] [--out DIR]

Measures (``--only`` takes these names, or implementation names: python_sdk, node_sdk, kernel,
ipykernel): seq_python, seq_everything (sequential tool calls), conc_python, conc_everything
(all calls started at once), cold (process start to first tool result), trivial (warm ``1+1``
round trip, and its TypeScript twin), big (a 50 MB tool result: time and peak RSS growth),
typestrip (type stripping against the cell rewrite, in this process: typestrip_bench.py); and
issue 28's session figures (impl_session.py), each beside its baseline of the same run: step (a warm
``mcp2repl --session s -e 'return 1'`` and a one-shot ``mcp2repl -e '1+1'`` against ``python -S -c
pass`` and ``python -c pass``), memory (an idle session's kernel with one stdio server and its helper
processes against ipykernel's ``python3`` kernel; the kernel after 1,000 tool calls and 100 cells),
sessions (N idle sessions side by side: each one's step, memory per session, how many fit).

Each round waits (bounded) for a quiet machine, then runs every implementation once per measure,
in an order that rotates from round to round. A full run writes ``bench/results/<id>.json`` and
``docs/performance.md``; ``--quick``, ``--only`` or ``--out`` write both into the output folder
instead, so a partial run never replaces the committed table.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import impl_kernel
import impl_sdk
import impl_session
import psutil
from harness import (
    BENCH,
    EVERYTHING_BIN,
    IMPLS,
    MEASURES,
    ROOT,
    SELECTORS,
    Config,
    Server,
    rotate,
    servers,
    summarize,
    wait_quiet,
)
from report import render_markdown, render_session_table, render_table

QUICK = {
    "rounds": 1, "calls": 5, "warmup": 2, "kb": 1024, "trivial_n": 10, "trivial_warmup": 2, "quiet_wait": 0.0,
    "step_n": 2, "step_warmup": 1, "mem_calls": 5, "mem_cells": 3, "sessions": 2, "settle": 0.5,
}
SIZES = ("rounds", "calls", "warmup", "kb", "trivial_n", "quiet_wait", "quiet_cpu", "step_n", "mem_calls", "mem_cells", "sessions", "settle")


def parse_args(argv: list[str]) -> tuple[Config, Path, bool, str]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--rounds", type=int, help="interleaved rounds (default 3)")
    p.add_argument("--calls", type=int, help="calls per sequential loop and per concurrent batch (default 1000)")
    p.add_argument("--warmup", type=int, help="warm-up calls before timing (default 50)")
    p.add_argument("--kb", type=int, help="size of the large result in KiB (default 51200 = 50 MB, at most 65536)")
    p.add_argument("--trivial-n", type=int, help="trivial cells timed per kernel (default 200)")
    p.add_argument("--quiet-wait", type=float, help="longest wait for a quiet machine before a round, s (default 60)")
    p.add_argument("--quiet-cpu", type=float, help="machine-wide CPU %% that counts as quiet (default 20)")
    p.add_argument("--step-n", type=int, help="timed shell steps (and floors) per round (default 20)")
    p.add_argument("--mem-calls", type=int, help="tool calls before the memory is read again (default 1000)")
    p.add_argument("--mem-cells", type=int, help="cells after those calls before the memory is read again (default 100)")
    p.add_argument("--sessions", type=int, help="idle sessions started side by side (default 10; 100 for the issue's figure)")
    p.add_argument("--settle", type=float, help="s of quiet before a memory reading (default 3)")
    p.add_argument("--quick", action="store_true", help="tiny sizes, one round, no waiting: checks that everything runs")
    p.add_argument("--only", help="comma-separated measure and/or implementation names")
    p.add_argument("--out", type=Path, help="folder for the JSON results and, unless this is a full run, performance.md")
    a = p.parse_args(argv)
    values = {**(QUICK if a.quick else {})}
    for name in SIZES:
        if getattr(a, name) is not None:
            values[name] = getattr(a, name)
    cfg = Config(**values, quick=a.quick, python=sys.executable)
    if a.only:
        names = [n.strip() for n in a.only.split(",") if n.strip()]
        impl_names = (*IMPLS, "ipykernel")
        unknown = [n for n in names if n not in SELECTORS and n not in impl_names]
        if unknown:
            p.error(f"unknown --only name(s) {', '.join(unknown)}; measures: {', '.join(SELECTORS)}; implementations: {', '.join(impl_names)}")
        cfg.measures = tuple(n for n in SELECTORS if n in names) or SELECTORS
        cfg.impls = tuple(n for n in impl_names if n in names) or impl_names
    if not 0 < cfg.kb <= 65536:
        p.error("--kb must be in 1..65536 (the fixture's big tool)")
    full = not (a.quick or a.only or a.out)
    # what makes its table not the one to commit, said in the table itself
    partial = ", ".join(flag for flag, on in (("--quick", a.quick), (f"--only {a.only}", a.only), (f"--rounds {cfg.rounds}", cfg.rounds < Config.rounds)) if on)
    return cfg, a.out or BENCH / "results", full, partial


Trial = tuple[str, str, Callable[[], Awaitable[dict[str, dict[str, Any]]]]]


def plan(cfg: Config, skipped: dict[str, str]) -> list[list[Trial]]:
    """Groups of trials, one per implementation, that run back to back in a round."""
    srv = servers(cfg.python)
    groups: list[list[Trial]] = []
    for group, kinds in (("python", ("seq", "conc", "big")), ("everything", ("seq", "conc"))):
        wanted = [k for k in kinds if (k if k == "big" else f"{k}_{group}") in cfg.measures]
        reason = srv[group].missing()
        if reason and wanted:
            skipped[f"server {group}"] = reason
        if not wanted or reason:
            continue
        trials: list[Trial] = []
        for impl in IMPLS:
            if impl in cfg.impls and impl not in skipped:
                if impl == "kernel":
                    trials.append((group, impl, lambda s=srv[group], g=group, w=wanted: impl_kernel.session(s, g, w, cfg)))
                else:
                    trials.append((group, impl, lambda i=impl, s=srv[group], g=group, w=wanted: impl_sdk.session(i, s, g, w, cfg)))
        groups.append(trials)
    startup = [m for m in ("cold", "trivial") if m in cfg.measures]
    if startup:
        trials = []
        for impl in (*IMPLS, "ipykernel"):
            if impl not in cfg.impls or impl in skipped:
                continue
            if impl == "kernel":
                trials.append(("startup", impl, lambda: impl_kernel.cold_session(srv["python"], startup, cfg)))
            elif impl == "ipykernel" and "trivial" in startup:
                trials.append(("startup", impl, lambda: impl_kernel.ipykernel_session(cfg)))
            elif impl in ("python_sdk", "node_sdk") and "cold" in startup:
                trials.append(("startup", impl, lambda i=impl: impl_sdk.session(i, srv["python"], "python", ["cold"], cfg)))
        groups.append(trials)
    if "typestrip" in cfg.measures and "kernel" in cfg.impls:
        groups.append([("typestrip", "kernel", lambda: _typestrip(cfg))])
    groups += _session_groups(cfg, srv["python"], skipped)
    return groups


def _session_groups(cfg: Config, server: Server, skipped: dict[str, str]) -> list[list[Trial]]:
    """Issue 28's figures: each trial measures its own baselines (the floors) beside the kernel,
    except ipykernel's idle memory, a trial of its own in the same round."""
    if "kernel" not in cfg.impls or "kernel" in skipped:
        return []
    ipykernel = "ipykernel" in cfg.impls and "ipykernel" not in skipped
    groups: list[list[Trial]] = []
    if "step" in cfg.measures:
        groups.append([("step", "kernel", lambda: impl_session.step(cfg))])
    if "memory" in cfg.measures:
        trials: list[Trial] = [("memory", "kernel", lambda: impl_session.memory(server, cfg))]
        if ipykernel:
            trials.append(("memory", "ipykernel", lambda: impl_session.ipykernel_memory(cfg)))
        groups.append(trials)
    if "sessions" in cfg.measures:
        groups.append([("sessions", "kernel", lambda: impl_session.sessions(server, cfg, ipykernel))])
    return groups


async def _typestrip(cfg: Config) -> dict[str, dict[str, Any]]:
    import typestrip_bench  # imports the kernel's own modules: only when measured

    return typestrip_bench.measures(quick=cfg.quick)


async def run_round(index: int, groups: list[list[Trial]]) -> dict[str, Any]:
    values: dict[str, dict[str, float]] = {}
    details: dict[str, dict[str, str]] = {}
    trials: list[dict[str, Any]] = []
    for group in groups:
        for order, (name, impl, trial) in enumerate(rotate(group, index)):
            t = time.perf_counter()
            record: dict[str, Any] = {"group": name, "impl": impl, "order": order}
            try:
                record["results"] = await trial()
            except Exception as e:  # noqa: BLE001 - one failing trial must not lose the others' numbers
                record["error"] = "".join(traceback.format_exception(e))[-3000:]
                print(f"round {index + 1}: {impl} on {name} failed:\n{record['error']}", file=sys.stderr)
            record["seconds"] = round(time.perf_counter() - t, 2)
            trials.append(record)
            for key, result in record.get("results", {}).items():
                measure, _, who = key.partition("@")  # measure@impl: a baseline measured inside this trial
                values.setdefault(measure, {})[who or impl] = result["value"]
                if "detail" in result:
                    details.setdefault(measure, {})[who or impl] = result["detail"]
            print(f"round {index + 1}: {impl:10s} {name:10s} {record['seconds']:7.1f} s", file=sys.stderr)
    return {"trials": trials, "values": values, "details": details}


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def meta() -> dict[str, Any]:
    def run(*cmd: str) -> str:
        try:
            return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=30).stdout.strip()
        except OSError:
            return "?"

    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")), platform.processor())
    everything = EVERYTHING_BIN.parent.parent / "@modelcontextprotocol" / "server-everything" / "package.json"
    dirty = run("git", "status", "--porcelain", "--", "mcp_kernel")
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model or "?",
        "mem_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "platform": f"{platform.system()} {platform.release()}",
        "commit": run("git", "rev-parse", "--short", "HEAD") + (" (mcp_kernel modified)" if dirty else ""),
        "versions": {
            "Python": platform.python_version(),
            "mcp": _version("mcp"),
            "mini-racer": _version("mini-racer"),
            "ipykernel": _version("ipykernel"),
            "jupyter_client": _version("jupyter_client"),
            "Node": run("node", "--version") or "?",
            "@modelcontextprotocol/sdk": impl_sdk.node_sdk_version() or "?",
            "server-everything": json.loads(everything.read_text())["version"] if everything.exists() else "?",
        },
    }


def main(argv: list[str]) -> int:
    cfg, out, full, partial = parse_args(argv)
    skipped: dict[str, str] = {}
    for impl in cfg.impls:
        reason = impl_sdk.ensure_node() if impl == "node_sdk" else impl_kernel.available({"kernel": "mcp2repl", "ipykernel": "python3"}.get(impl, ""))
        if impl != "python_sdk" and reason:
            skipped[impl] = reason
            print(f"skipping {impl}: {reason}", file=sys.stderr)
    groups = plan(cfg, skipped)
    run_id = time.strftime("%Y%m%d-%H%M%S")
    rounds = []
    for index in range(cfg.rounds):
        quiet = wait_quiet(cfg.quiet_wait, cfg.quiet_cpu)
        print(f"round {index + 1}/{cfg.rounds}: load {quiet['loadavg']}, quiet={quiet['quiet']} after {quiet['waited_s']} s", file=sys.stderr)
        rounds.append({"round": index + 1, "quiet": quiet, **asyncio.run(run_round(index, groups))})
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "id": run_id,
        "config": dataclasses.asdict(cfg),
        "meta": meta(),
        "skipped": skipped,
        "partial": partial,
        "rounds": rounds,
        "summary": summarize(rounds, cfg),
    }
    json_path = out / f"{run_id}.json"
    results["json"] = str(json_path.resolve().relative_to(ROOT)) if json_path.resolve().is_relative_to(ROOT) else str(json_path)
    json_path.write_text(json.dumps(results, indent=1) + "\n")
    md_path = ROOT / "docs" / "performance.md" if full else out / "performance.md"
    md_path.write_text(render_markdown(results))
    if any(m.table == "calls" and m.selector in cfg.measures for m in MEASURES):
        print(render_table(results["summary"], cfg, skipped))
    if any(m in cfg.measures for m in ("step", "memory", "sessions")):
        print("\n" + render_session_table(results["summary"], cfg))
    print(f"\nresults: {json_path}\ntable: {md_path}")
    failed = sum("error" in t for r in rounds for t in r["trials"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
