"""Issue 28: where the milliseconds of a warm session step from the shell go, against the floors in the same run.

A warm ``mcp2repl --session s -e 'return 1'`` is what an agent pays on every step, so it is
measured against what no Python command can beat, in the same run (medians of ``--runs``,
interleaved, ratios taken per run):

* ``floor_S``: ``python -S -c pass`` (the interpreter alone) and ``floor``: ``python -c pass``
  (with ``site``: this venv's ``.pth`` files);
* ``imports``: ``python -c 'import <the warm path's modules>'``: the imports alone, no step;
* ``helper_floor``: the floor of a client that imports almost nothing — reads a connection file,
  signs one JSON line with its key (hmac), sends it over a Unix socket to a resident process (a
  thread here, answering at once) and prints the answer: what a step through a resident helper
  could cost at best;
* ``warm_e``, ``warm_json``, ``warm_stdin``: ``mcp2repl --session bench`` with ``-e 'return 1'``,
  with ``--json``, and with ``-e -`` (the code on stdin), through the console script: the fast client
  and the session kernel's step socket (cli/quick.py, cli/stepsocket.py); ``usual_e``: the same step
  the usual way (``MCP2REPL_STEP_SOCKET=0``: the ZMQ client in the command's own process).

Each in two modes: ``cached`` (bytecode cached, as a ``pip install`` leaves it: a fresh
``PYTHONPYCACHEPREFIX``, written on the warm-up runs) and ``source`` (``PYTHONDONTWRITEBYTECODE=1``:
an editable checkout without ``__pycache__`` in an environment that sets it, as this machine's
does, compiles every mcp_kernel module the step imports on every step).

Then where it goes: ``-X importtime`` of one warm step, self time summed per top-level package,
and the step's phases timed in one process (options, the trust checks of the session's files,
attaching — a kernel_info round trip —, the step itself, closing).

``--baseline REF`` runs the same steps with ``mcp_kernel`` as of a git ref too (its files first
on ``PYTHONPATH``, the same console script, and a session of its own, ``base``, whose kernel runs
that ref's code too: a change on either side of the socket is measured before and after in one run). Run: ``.venv/bin/python bench/step_bench.py [--runs 20] [--baseline merge-envelope]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
MCP2REPL = str(Path(PY).with_name("mcp2repl"))
#: What the warm step imports (cli/main.py's lazy imports on the --session path).
WARM_MODULES = "mcp_kernel.cli.agent, mcp_kernel.cli.sessions"
_IMPORT = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)")


#: The helper-floor client: a connection file, one signed line over a Unix socket, one answer.
HELPER_CLIENT = """
import hashlib, hmac, json, socket, sys
info = json.load(open(sys.argv[1]))
line = json.dumps({"code": "return 1"}).encode()
sig = hmac.new(info["key"].encode(), line, hashlib.sha256).hexdigest().encode()
sock = socket.socket(socket.AF_UNIX)
sock.connect(info["socket"])
sock.sendall(sig + b" " + line + b"\\n")
sys.stdout.write(json.loads(sock.makefile("rb").readline())["text"] + "\\n")
"""


def _helper(path: str) -> None:
    """A stand-in for a resident helper: one signed line in, one JSON line out."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    while True:
        conn, _ = server.accept()
        with conn:
            conn.makefile("rb").readline()
            conn.sendall(b'{"ok":true,"text":"1"}\n')


def _wall(cmd: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True, input=stdin)
    return (time.perf_counter() - started) * 1000


def commands(session: str) -> dict[str, tuple[list[str], bytes | None]]:
    step = [MCP2REPL, "--session", session]
    return {
        "floor_S": ([PY, "-S", "-c", "pass"], None),
        "floor": ([PY, "-c", "pass"], None),
        "imports": ([PY, "-c", f"import {WARM_MODULES}"], None),
        "helper_floor": ([PY, "-c", HELPER_CLIENT, "helper.json"], None),
        "warm_e": ([*step, "-e", "return 1"], None),
        "warm_json": ([*step, "--json", "-e", "return 1"], None),
        "warm_stdin": ([*step, "-e", "-"], b"return 1"),
        # the usual path (the ZMQ client in the command's process), for comparison: one exec of env more
        "usual_e": (["env", "MCP2REPL_STEP_SOCKET=0", *step, "-e", "return 1"], None),
    }


def import_profile(session: str, cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """ms of import self time per top-level package in one warm step (``-X importtime``)."""
    cmd = [PY, "-X", "importtime", "-c", "import sys; from mcp_kernel.cli.main import main; sys.exit(main())", "--session", session, "-e", "return 1"]
    err = subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True, text=True).stderr
    per: dict[str, float] = defaultdict(float)
    for line in err.splitlines():
        if m := _IMPORT.match(line):
            name = m.group(4)
            root = ".".join(name.split(".")[:2]) if name.startswith("mcp_kernel") else name.split(".")[0]
            per[root] += int(m.group(1)) / 1000
    return dict(sorted(per.items(), key=lambda kv: -kv[1]))


def phases(session: str, cwd: Path, runs: int) -> dict[str, float]:
    """The warm step's phases in this process (median ms): its imports are paid already here."""
    os.chdir(cwd)
    from mcp_kernel.cli.options import parse
    from mcp_kernel.cli.sessions import start_options
    from mcp_kernel.client.kernel_session import KernelSession
    from mcp_kernel.client.registry import SessionFiles

    got: dict[str, list[float]] = defaultdict(list)
    for _ in range(runs):
        t0 = time.perf_counter()
        o = parse(["--session", session, "-e", "return 1"])
        t1 = time.perf_counter()
        SessionFiles(session).check()
        t2 = time.perf_counter()
        ks = KernelSession(session, options=start_options(o), client="bench", kind="cli")  # check + connect (kernel_info)
        t3 = time.perf_counter()
        result = ks.step("return 1")
        t4 = time.perf_counter()
        ks.close()
        t5 = time.perf_counter()
        assert result.value == 1, result
        for name, a, b in (("parse", t0, t1), ("trust_checks", t1, t2), ("attach", t2, t3), ("step", t3, t4), ("close", t4, t5)):
            got[name].append((b - a) * 1000)
    return {k: round(statistics.median(v), 2) for k, v in got.items()}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--baseline", metavar="REF", help="also run the step with mcp_kernel as of this git ref (before/after in one run)")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="mcp2repl-step-bench-"))
    (work / "mcp.json").write_text('{"mcpServers": {}}')
    (work / "helper.json").write_text(json.dumps({"key": os.urandom(16).hex(), "socket": str(work / "helper.sock")}))
    threading.Thread(target=_helper, args=(str(work / "helper.sock"),), daemon=True).start()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MCP2REPL_", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"))}
    base["XDG_CONFIG_HOME"] = str(work / "xdg")
    envs = {
        "cached": {**base, "PYTHONPYCACHEPREFIX": str(work / "pyc")},
        "source": {**base, "PYTHONDONTWRITEBYTECODE": "1"},  # the standard library's own __pycache__ is still read
    }
    cmds = commands("bench")
    jobs = [(mode, name, envs[mode]) for mode in envs for name in cmds]
    if args.baseline:  # that ref's mcp_kernel first on the path: the same console script runs the older code
        (work / "baseline").mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "mcp_kernel"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(work / "baseline")], input=archive, check=True)
        jobs += [(mode, f"baseline_{name}", {**envs[mode], "PYTHONPATH": str(work / "baseline")}) for mode in envs for name in cmds if name not in ("floor_S", "floor", "helper_floor")]
    base_cmds = commands("base")  # the baseline's steps go to a kernel of the baseline's code
    run = {name: base_cmds[name.removeprefix("baseline_")] if name.startswith("baseline_") else cmds[name] for _, name, _ in jobs}
    sys.path.insert(0, str(ROOT))
    rows: list[dict[str, float]] = []
    try:
        # the kernel writes no bytecode either: a __pycache__ it left in the checkout would make "source" cached
        subprocess.run([MCP2REPL, "--session", "bench", "-e", "1"], cwd=work, env=envs["source"], check=True, capture_output=True)
        if args.baseline:
            base_env = {**envs["source"], "PYTHONPATH": str(work / "baseline")}
            subprocess.run([MCP2REPL, "--session", "base", "-e", "1"], cwd=work, env=base_env, check=True, capture_output=True)
        for _ in range(3):  # warm the page cache, the bytecode cache and the kernel
            for _mode, name, env in jobs:
                _wall(run[name][0], work, env, run[name][1])
        for index in range(args.runs):
            order = jobs[index % len(jobs) :] + jobs[: index % len(jobs)]  # rotate the order run by run
            rows.append({f"{mode}_{name}": _wall(run[name][0], work, env, run[name][1]) for mode, name, env in order})
        profile = {mode: import_profile("bench", work, env) for mode, env in envs.items()}
        steps = phases("bench", work, args.runs)
    finally:
        for name in ("bench", "base"):
            subprocess.run([MCP2REPL, "--stop", name], cwd=work, env=envs["source"], capture_output=True)
        os.chdir(ROOT)
        shutil.rmtree(work, ignore_errors=True)
    summary: dict[str, object] = {"runs": args.runs, "load_avg": round(os.getloadavg()[0], 2), "baseline": args.baseline}
    if cached := sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("mcp_kernel/**/__pycache__")):
        summary["source_mode_note"] = f"not compiled from source: {', '.join(cached[:3])} exist (remove them to measure it)"
    for mode in envs:
        table: dict[str, object] = {}
        for _, name, _ in [job for job in jobs if job[0] == mode]:
            key = f"{mode}_{name}"
            table[f"{name}_ms"] = round(statistics.median(r[key] for r in rows), 1)
            if name not in ("floor_S", "floor"):
                table[f"{name}_vs_floor_S"] = round(statistics.median(r[key] / r[f"{mode}_floor_S"] for r in rows), 2)
                table[f"{name}_vs_floor"] = round(statistics.median(r[key] / r[f"{mode}_floor"] for r in rows), 2)
        table["import_self_total_ms"] = round(sum(profile[mode].values()), 1)
        table["import_self_ms"] = {k: round(v, 1) for k, v in list(profile[mode].items())[:16]}
        summary[mode] = table
    summary["target_ms"] = 40
    summary["phases_in_process_ms"] = steps
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
