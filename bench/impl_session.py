"""Issue 28's session figures for bench/run.py: the agent's step from the shell, a session's memory,
and many idle sessions on one machine, each with its baseline measured in the same trial.

* step: a warm ``mcp2repl --session s -e 'return 1'`` and a one-shot ``mcp2repl -e '1+1'``, each
  against ``python -S -c pass`` and ``python -c pass``, interleaved run by run (rotating order),
  with bytecode cached as a ``pip install`` leaves it; bench/step_bench.py's commands and clock.
* memory: a named session with one stdio server (the bench's Python echo server), idle; its
  helper processes (every descendant of the kernel that is not the server: procmem.py); then the
  kernel after 1,000 tool calls, after 1,000 more (warm: the growth that would add up), and after
  100 more cells. ipykernel's ``python3`` kernel, idle,
  is the baseline (its own trial in the same round).
* sessions: N idle named sessions, each with the same server, started one after another (never
  past 80 % of the machine's memory); each answers one step, timed from the shell, interleaved
  with ``python -S -c pass``; their memory per session (PSS of kernel + helpers + server), and how
  many would fit in 80 % of MemTotal. All of them are stopped at the end, whatever happened.

Results are keyed ``measure@impl`` (run.py files them under that implementation).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import impl_kernel
import procmem
import psutil
import step_bench
from harness import Config, Server, rotate

MCP2REPL = step_bench.MCP2REPL
FLOORS = ("floor_S", "floor")  # python -S -c pass, python -c pass (step_bench.commands)
#: the machine is "full" at this share of MemTotal in use: no session is started past it
FULL = 0.8


def _workdir(servers: list[Server], prefix: str) -> tuple[Path, dict[str, str]]:
    """A fresh folder whose mcp.json names only ``servers``, and the environment of every command
    run there: no user config or MCP2REPL_ settings, bytecode cached in the folder."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    (work / "mcp.json").write_text(json.dumps({"mcpServers": {s.name: {"command": s.command, "args": s.args} for s in servers}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP2REPL_", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"))}
    env |= {"XDG_CONFIG_HOME": str(work / "xdg"), "PYTHONPYCACHEPREFIX": str(work / "pyc")}
    return work, env


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    """A command's stdout; a failure raises with what it printed."""
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
    return done.stdout


def _stop(cwd: Path, env: dict[str, str], names: list[str], pids: list[int]) -> None:
    """``mcp2repl --stop`` every session; a kernel still there after that is ended by its pid."""
    for name in names:
        subprocess.run([MCP2REPL, "--stop", name], cwd=cwd, env=env, capture_output=True, timeout=120)
    alive = [p for pid in pids if (p := _process(pid))]
    for proc in alive:
        for child in procmem._descendants(proc):
            child.kill()
        proc.kill()


def _warm_bytecode(work: Path, env: dict[str, str], server: Server) -> None:
    """Fill the folder's bytecode cache with what a session's kernel and its steps import, in a
    session of its own, stopped at once: the measured kernels then start as they do after ``pip
    install``, which compiles every module (and as ipykernel's does, from the venv's bytecode). A
    kernel that compiled all its modules from source holds ~4 MB more for as long as it lives."""
    _run([MCP2REPL, "--session", "warm", "-e", f"{_call(server)}; return 1"], work, env)
    _stop(work, env, ["warm"], [procmem.kernel_pid(work, "warm")])


def _process(pid: int) -> psutil.Process | None:
    try:
        proc = psutil.Process(pid)
        return proc if proc.status() != psutil.STATUS_ZOMBIE else None
    except psutil.Error:
        return None


def _median(values: list[float]) -> float:
    return statistics.median(values)


# -- step ---------------------------------------------------------------------------------------


async def step(cfg: Config) -> dict[str, dict[str, Any]]:
    return await asyncio.to_thread(_step, cfg)


def _step(cfg: Config) -> dict[str, dict[str, Any]]:
    work, env = _workdir([], "mcp2repl-bench-step-")
    cmds = step_bench.commands("bench")
    jobs = {"floor_S": cmds["floor_S"][0], "floor": cmds["floor"][0], "warm": cmds["warm_e"][0], "oneshot": [MCP2REPL, "-e", "1+1"]}
    times: dict[str, list[float]] = {name: [] for name in jobs}
    pids: list[int] = []
    try:
        _run([*cmds["warm_e"][0][:-2], "--idle-timeout", "900", "-e", "return 1"], work, env)  # start the session
        pids.append(procmem.kernel_pid(work, "bench"))
        assert _run(jobs["warm"], work, env).strip() == "1" and _run(jobs["oneshot"], work, env).strip() == "2"
        for index in range(cfg.step_warmup + cfg.step_n):  # the warm-up runs also write the bytecode cache
            for name in rotate(list(jobs), index):
                ms = step_bench._wall(jobs[name], work, env)
                if index >= cfg.step_warmup:
                    times[name].append(ms)
    finally:
        _stop(work, env, ["bench"], pids)
        shutil.rmtree(work, ignore_errors=True)
    med = {name: _median(t) for name, t in times.items()}
    out: dict[str, dict[str, Any]] = {}
    for key, name in (("step_warm", "warm"), ("step_oneshot", "oneshot")):
        out[f"{key}@kernel"] = {"value": med[name], "min_ms": min(times[name]), "max_ms": max(times[name]), "n": cfg.step_n}
        for floor in FLOORS:
            out[f"{key}@{floor}"] = {"value": med[floor], "min_ms": min(times[floor]), "max_ms": max(times[floor]), "n": cfg.step_n}
    return out


# -- memory -------------------------------------------------------------------------------------


def _call(server: Server) -> str:
    return f"await mcp.{server.name}.{server.tool}({json.dumps(server.arguments)})"


async def memory(server: Server, cfg: Config) -> dict[str, dict[str, Any]]:
    return await asyncio.to_thread(_memory, server, cfg)


def _memory(server: Server, cfg: Config) -> dict[str, dict[str, Any]]:
    work, env = _workdir([server], "mcp2repl-bench-memory-")
    step = [MCP2REPL, "--session", "mem"]
    pid = 0
    try:
        _warm_bytecode(work, env, server)
        _run([*step, "--idle-timeout", "900", "-e", f"{_call(server)}; return 1"], work, env)  # started, server connected and called once
        pid = procmem.kernel_pid(work, "mem")
        time.sleep(cfg.settle)
        idle = procmem.tree(pid, [server])
        loop = f"for (let i = 0; i < {cfg.mem_calls}; i++) {_call(server)}; return {cfg.mem_calls}"
        assert _run([*step, "-e", loop], work, env).strip() == str(cfg.mem_calls)
        time.sleep(cfg.settle)
        calls = procmem.tree(pid, [server])
        assert _run([*step, "-e", loop], work, env).strip() == str(cfg.mem_calls)  # as many again: warm, does it still grow?
        time.sleep(cfg.settle)
        more = procmem.tree(pid, [server])
        for i in range(cfg.mem_cells):
            assert _run([*step, "-e", f"return {i} + 1"], work, env).strip() == str(i + 1)
        time.sleep(cfg.settle)
        cells = procmem.tree(pid, [server])
    finally:
        _stop(work, env, ["mem"], [pid] if pid else [])
        shutil.rmtree(work, ignore_errors=True)
    helpers = idle.helpers
    # RSS counts the pages a helper shares (its Python's library, mapped by the kernel too); USS is what it alone holds
    shown = ", ".join(f"{u.label} {u.rss / procmem.MB:.1f} (USS {u.uss / procmem.MB:.1f})" for u in helpers) or "none"
    return {
        "mem_idle@kernel": {"value": idle.kernel.rss / procmem.MB, "tree": idle.as_json()},
        "mem_helper_max@kernel": {"value": max((u.rss for u in helpers), default=0) / procmem.MB, "detail": f"{len(helpers)}: {shown}"},
        "mem_helpers@kernel": {"value": sum(u.rss for u in helpers) / procmem.MB, "detail": f"{len(helpers)} process(es)"},
        "mem_after_calls@kernel": {"value": calls.kernel.rss / procmem.MB, "calls": cfg.mem_calls, "tree": calls.as_json(), "detail": _anon(calls, idle)},
        "mem_after_more_calls@kernel": {"value": more.kernel.rss / procmem.MB, "calls": 2 * cfg.mem_calls, "tree": more.as_json(), "detail": _anon(more, calls)},
        "mem_after_cells@kernel": {"value": cells.kernel.rss / procmem.MB, "cells": cfg.mem_cells, "tree": cells.as_json(), "detail": _anon(cells, idle)},
    }


def _anon(now: procmem.Tree, then: procmem.Tree) -> str:
    """The kernel's anonymous memory now against ``then``: its own data, without the library code
    pages a warmer V8 touches again (file-backed and shared: what makes the rest of RSS grow)."""
    a, b = now.kernel.anon, then.kernel.anon
    return f"anonymous {a / procmem.MB:.1f} MB, {a / b:.2f}× that row's" if a and b else ""


async def ipykernel_memory(cfg: Config) -> dict[str, dict[str, Any]]:
    """ipykernel's own ``python3`` kernel after one cell, idle: the floor of a Jupyter kernel here."""
    async with impl_kernel.started("python3", []) as k:
        await k.value("1+1")
        await asyncio.sleep(cfg.settle)
        used = procmem.usage(psutil.Process(k.pid))
    return {"mem_idle@ipykernel": {"value": used.rss / procmem.MB, "usage": used.mb()}}


# -- many sessions ------------------------------------------------------------------------------


async def sessions(server: Server, cfg: Config, ipykernel: bool = True) -> dict[str, dict[str, Any]]:
    """N idle sessions side by side (and, with ``ipykernel``, ipykernel's ``python3`` kernel beside them)."""
    work, env = _workdir([server], "mcp2repl-bench-sessions-")
    names: list[str] = []
    pids: list[int] = []
    ipy: procmem.Usage | None = None
    try:
        await asyncio.to_thread(_warm_bytecode, work, env, server)
        started = await asyncio.to_thread(_start_sessions, work, env, server, cfg.sessions, names, pids)
        if ipykernel:
            async with impl_kernel.started("python3", []) as k:  # the baseline, up beside the sessions
                await k.value("1+1")
                await asyncio.sleep(cfg.settle)
                trees = [procmem.tree(pid, [server]) for pid in pids]
                ipy = procmem.usage(psutil.Process(k.pid))
        else:
            await asyncio.sleep(cfg.settle)
            trees = [procmem.tree(pid, [server]) for pid in pids]
        steps = await asyncio.to_thread(_time_steps, work, env, names)
    finally:
        await asyncio.to_thread(_stop, work, env, names, pids)
        shutil.rmtree(work, ignore_errors=True)
    per = [t.total_pss() / procmem.MB for t in trees]
    per_session = _median(per)
    mem = started["meminfo"]
    fit_total = int(FULL * mem["MemTotal"] / procmem.MB / per_session)
    fit_now = int(max(0.0, mem["MemAvailable"] - (1 - FULL) * mem["MemTotal"]) / procmem.MB / per_session)  # read before any started
    parts = {
        "kernel": _median([t.kernel.pss / procmem.MB for t in trees]),
        "helpers": _median([sum(u.pss for u in t.helpers) / procmem.MB for t in trees]),
        "server": _median([sum(u.pss for u in t.servers) / procmem.MB for t in trees]),
    }
    within = sum(ms <= 100 for ms in steps["kernel"])
    n = len(names)
    out = {
        "sessions_pss@kernel": {
            "value": per_session, "sessions": n, "parts_mb": parts, "per_session_mb": per, "trees": [t.as_json() for t in trees],
            "detail": f"{n} sessions; kernel {parts['kernel']:.1f} + helpers {parts['helpers']:.1f} + server {parts['server']:.1f}",
        },
        "sessions_fit@kernel": {
            "value": fit_total, "fit_from_available_at_start": fit_now, "meminfo_at_start": mem, "start_s": started["start_s"],
            "stopped_early": started["stopped_early"],
            "detail": f"in {FULL:.0%} of MemTotal; {fit_now} with what was available at the start" + (f"; {started['stopped_early']}" if started["stopped_early"] else ""),
        },
        "sessions_step@kernel": {
            "value": max(steps["kernel"]), "median_ms": _median(steps["kernel"]), "within_100ms": within, "sessions": n, "times_ms": steps["kernel"],
            "first_step_times_ms": steps["first_kernel"], "first_floor_S_times_ms": steps["first_floor_S"],
            "detail": f"{within} of {n} within 100 ms, median {_median(steps['kernel']):.0f} ms",
        },
        "sessions_step@floor_S": {"value": max(steps["floor_S"]), "median_ms": _median(steps["floor_S"]), "times_ms": steps["floor_S"]},
    }
    if ipy is not None:
        out["sessions_pss@ipykernel"] = {"value": ipy.pss / procmem.MB, "usage": ipy.mb()}
    return out


def _start_sessions(work: Path, env: dict[str, str], server: Server, n: int, names: list[str], pids: list[int]) -> dict[str, Any]:
    """Start up to ``n`` sessions, one after another; none once the next could fill the machine past FULL."""
    at_start = procmem.meminfo()
    estimate = 300 * procmem.MB  # one session's RSS, until the first one is measured
    stopped = ""
    t0 = time.perf_counter()
    for i in range(n):
        mem = procmem.meminfo()
        if mem["MemAvailable"] - estimate < (1 - FULL) * mem["MemTotal"]:
            stopped = f"stopped starting at {i}: the next session would fill the machine past {FULL:.0%}"
            break
        name = f"s{i}"
        names.append(name)  # before it starts: stopped at the end even if its start fails half-way
        _run([MCP2REPL, "--session", name, "--idle-timeout", "900", "-e", "return 1"], work, env)
        pids.append(procmem.kernel_pid(work, name))
        if i == 0:
            first = procmem.tree(pids[0], [server])
            estimate = first.kernel.rss + sum(u.rss for u in (*first.helpers, *first.servers))
    return {"meminfo": at_start, "start_s": round(time.perf_counter() - t0, 2), "stopped_early": stopped}


def _time_steps(work: Path, env: dict[str, str], names: list[str]) -> dict[str, list[float]]:
    """Two passes over the idle sessions, one step of each from the shell beside a ``python -S -c
    pass``; the second is the measure (the first, kept as ``first_*``, also writes the bytecode
    cache of the fast client, which starting a session does not import)."""
    floor = step_bench.commands("x")["floor_S"][0]
    times: dict[str, list[float]] = {"first_kernel": [], "first_floor_S": [], "kernel": [], "floor_S": []}
    for prefix in ("first_", ""):
        for index, name in enumerate(names):
            jobs = {"kernel": [MCP2REPL, "--session", name, "-e", "return 1"], "floor_S": floor}
            for who in rotate(list(jobs), index):
                times[prefix + who].append(step_bench._wall(jobs[who], work, env))
    return times
