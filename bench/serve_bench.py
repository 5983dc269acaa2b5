"""``mcp2repl serve`` (issue 24): a warm ``run`` against a warm step of the step API, and what a model reads.

Measures, interleaved per round (ratios taken within a round, medians over rounds):

* ``run``: a ``run`` of ``1+1`` through ``mcp2repl serve`` over stdio, timed by the Python SDK's
  ClientSession (request to result), on a warm connection;
* ``step``: ``KernelSession.step("1+1")`` on a warm named session (target: ``run`` <= 1.5x ``step``).

Economy: the same steps (demo and server-memory tasks: a trivial step, a 100-call loop, a 40-book
catalog with a filter, a knowledge-graph round trip, a failing step) through ``run`` and through
``mcp2repl --session S --json -e CODE``. Bytes a model reads: ``run``'s text block (what clients show
the model), and for clients that pass ``structuredContent`` on, text plus that; the CLI's stdout (its
envelope). Bytes it writes: ``run``'s arguments as JSON, the CLI's command line (with ``MCP2REPL_SESSION``
and ``MCP2REPL_JSON`` exported, as the skill advises: ``mcp2repl -e CODE``). ``initialize``'s
instructions and ``tools/list`` are counted once for ``run``; what teaches the CLI its use, the skill
(``skills/mcp2repl/SKILL.md``, which the agent reads once), is counted once for the CLI likewise.

Run: ``.venv/bin/python bench/serve_bench.py [--rounds 5] [--steps 200]``. Needs
``scripts/bootstrap.sh --test`` (server-memory under tests/fixtures/node).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MCP2REPL = str(Path(sys.executable).with_name("mcp2repl"))
#: the one-time read that teaches an agent the CLI, as initialize's instructions and tools/list teach it run
SKILL_BYTES = len((ROOT / "skills" / "mcp2repl" / "SKILL.md").read_bytes())
MEMORY = ROOT / "tests" / "fixtures" / "node" / "node_modules" / ".bin" / "mcp-server-memory"
TASKS: dict[str, list[str]] = {
    "trivial": ["1+1"],
    "loop of 100 calls": ["let n = 0; for (let i = 0; i < 100; i++) n += (await mcp.demo.get_book({ book_id: 'b01' })).pages > 0; n"],
    "catalog": [
        "globalThis.ids = Array.from({ length: 40 }, (_, i) => 'b' + String(i + 1).padStart(2, '0')); ids.length",
        "const books = await Promise.all(ids.map((id) => mcp.demo.get_book({ book_id: id })));"
        " books.filter((b) => b.rating >= 4.5).map((b) => `${b.title} (${b.year})`)",
    ],
    "knowledge graph": [
        "await mcp.memory.create_entities({ entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote notes'] },"
        " { name: 'Engine', entityType: 'machine', observations: ['analytical'] }] }); 'created'",
        "await mcp.memory.create_relations({ relations: [{ from: 'Ada', to: 'Engine', relationType: 'described' }] }); 'related'",
        "(await mcp.memory.search_nodes({ query: 'Ada' })).entities.map((e) => e.name)",
    ],
    "a failing step": ["const b = await mcp.demo.get_book({ book_id: 'b01' }); b.nope.deeper"],
}


def _config(work: Path) -> Path:
    config = {
        "mcpServers": {
            "demo": {"command": sys.executable, "args": ["-m", "mcp_kernel.demo.server"]},
            "memory": {"command": str(MEMORY), "env": {"MEMORY_FILE_PATH": str(work / "memory.jsonl")}},
        }
    }
    path = work / "mcp.json"
    path.write_text(json.dumps(config))
    return path


class Served:
    """One ``mcp2repl serve`` over stdio, with a ClientSession kept open on a background task."""

    def __init__(self, work: Path, env: dict[str, str]) -> None:
        self.work, self.env = work, env
        self.errlog = (work / "serve.log").open("w")

    async def __aenter__(self) -> Served:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=MCP2REPL, args=["serve"], env=self.env, cwd=str(self.work))
        self._transport = stdio_client(params, errlog=self.errlog)
        read, write = await self._transport.__aenter__()
        self._session = ClientSession(read, write)
        self.session = await self._session.__aenter__()
        self.init = await self.session.initialize()
        self.tools = await self.session.list_tools()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._session.__aexit__(*exc)
        await self._transport.__aexit__(*exc)
        self.errlog.close()


def _bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


async def _economy(served: Served, work: Path, env: dict[str, str]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for task, steps in TASKS.items():
        run_text = run_struct = run_written = cli_read = cli_written = 0
        for code in steps:
            result = await served.session.call_tool("run", {"code": code})
            text = "\n".join(c.text for c in result.content if c.type == "text")
            run_text += len(text.encode())
            run_struct += len(text.encode()) + _bytes(result.structured_content)
            run_written += _bytes({"code": code})
            command = ["mcp2repl", "-e", code]
            step_env = {**env, "MCP2REPL_SESSION": "econ", "MCP2REPL_JSON": "1"}
            cli = await asyncio.to_thread(subprocess.run, [MCP2REPL, *command[1:]], cwd=work, env=step_env, capture_output=True, text=True)
            cli_read += len(cli.stdout.encode())
            cli_written += len(shlex.join(command).encode())
        rows[task] = {
            "run_text_read": run_text,
            "run_text_and_structured_read": run_struct,
            "run_written": run_written,
            "cli_json_read": cli_read,
            "cli_written": cli_written,
        }
    return rows


async def _main(args: argparse.Namespace, work: Path, env: dict[str, str]) -> dict[str, Any]:
    from mcp_kernel.client import KernelSession

    await asyncio.to_thread(subprocess.run, [MCP2REPL, "--session", "bench", "-e", "1"], cwd=work, env=env, check=True, capture_output=True)
    kernel = KernelSession("bench", cwd=work)
    rounds = []
    try:
        async with Served(work, env) as served:
            for _ in range(20):  # warm both
                await served.session.call_tool("run", {"code": "1+1"})
                kernel.step("1+1")
            for index in range(args.rounds):
                row: dict[str, float] = {}
                for name in (("run", "step") if index % 2 == 0 else ("step", "run")):
                    times = []
                    for _ in range(args.steps):
                        started = time.perf_counter()
                        if name == "run":
                            result = await served.session.call_tool("run", {"code": "1+1"})
                            assert result.structured_content["value"] == 2
                        else:
                            assert kernel.step("1+1").value == 2
                        times.append((time.perf_counter() - started) * 1000)
                    row[name] = statistics.median(times)
                row["ratio"] = row["run"] / row["step"]
                rounds.append(row)
                print(f"round {index + 1}: run {row['run']:.2f} ms, step {row['step']:.2f} ms, ratio {row['ratio']:.2f}", file=sys.stderr)
            listing = _bytes(served.tools.model_dump(by_alias=True, exclude_none=True, mode="json")["tools"])
            instructions = len((served.init.instructions or "").encode())
            economy = await _economy(served, work, env)
    finally:
        kernel.stop()
        await asyncio.to_thread(subprocess.run, [MCP2REPL, "--stop", "econ"], cwd=work, env=env, capture_output=True)
    totals = {k: sum(row[k] for row in economy.values()) for k in next(iter(economy.values()))}
    once = listing + instructions
    return {
        "run_ms": round(statistics.median(r["run"] for r in rounds), 2),
        "step_ms": round(statistics.median(r["step"] for r in rounds), 2),
        "run_vs_step": round(statistics.median(r["ratio"] for r in rounds), 2),
        "run_vs_step_target": 1.5,
        "tools_list_bytes": listing,
        "instructions_bytes": instructions,
        "economy": economy,
        "economy_totals": totals,
        "run_read_incl_tools_list": totals["run_text_read"] + once,
        "run_read_with_structured_incl_tools_list": totals["run_text_and_structured_read"] + once,
        "cli_read": totals["cli_json_read"],
        "skill_bytes": SKILL_BYTES,
        "cli_read_incl_skill": totals["cli_json_read"] + SKILL_BYTES,
        "run_written": totals["run_written"],
        "cli_written": totals["cli_written"],
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=200)
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="mcp2repl-serve-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP2REPL_")}
    env["XDG_CONFIG_HOME"] = str(work / "xdg")
    _config(work)
    sys.path.insert(0, str(ROOT))
    try:
        summary = asyncio.run(_main(args, work, env))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
