"""api.types() in a real kernel: the .d.ts of its servers compiles with tsc, catches wrong calls,
and declares everything the runtime has; a cell that type-checks against it also runs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ECHO, EVERYTHING, KernelProcess
from ts_reference import TSC, require_node_package

TSC_FLAGS = ["--noEmit", "--strict", "--target", "esnext", "--lib", "esnext,dom", "--module", "esnext", "--moduleDetection", "force"]

#: valid TypeScript against the declarations, and a cell the kernel runs
CELL = """\
const hits = await mcp.demo.search_books({ query: "dragon", limit: 2 });
const titles: string[] = hits.results.map((b) => b.title);
const book = await tools.get_book({ book_id: hits.results[0].id });
const year: number = book.year;
const raw = await mcp.demo.list_genres(undefined, { raw: true });
const items: number = raw.content.length;
const picked = api.project<{ id: string }[]>(hits.results, { $items: { id: true } });
const sum = await mcp.everything.get_sum({ a: 1, b: 2 });
const outcome = await tools.call("demo.get_book", { book_id: "nope" });
[titles.length > 0, year > 1900, items, picked[0].id === hits.results[0].id, outcome.ok, typeof sum]
"""


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProcess]:
    cwd = tmp_path_factory.mktemp("types")
    config = {
        "mcpServers": {
            "demo": {"command": sys.executable, "args": ["-m", "mcp_kernel.demo.server"]},
            "echo": {"command": sys.executable, "args": [str(ECHO)]},
            "everything": {"command": str(EVERYTHING), "roots": False},  # its roots log would land on a cell
        }
    }
    (cwd / "mcp.json").write_text(json.dumps(config))
    kernel = KernelProcess(cwd)
    kernel.wait_for_servers()  # server-everything may log on this cell (it logs the roots it was given)
    yield kernel
    kernel.close()


def saved_types(k: KernelProcess, name: str, options: str = "") -> str:
    k.value(f"await api.saveArtifact({json.dumps(name)}, await api.types({options}), {{ format: 'text' }}); 1")
    assert k.cwd is not None
    return (k.cwd / ".mcp2repl" / "artifacts" / name).read_text()


def tsc(folder: Path, *files: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TSC), *TSC_FLAGS, *files], cwd=folder, capture_output=True, text=True, timeout=120)


def test_a_cell_that_type_checks_also_runs(k: KernelProcess, tmp_path: Path) -> None:
    require_node_package("typescript")
    if not EVERYTHING.exists():
        pytest.skip("server-everything is not installed: run scripts/bootstrap.sh --test")
    (tmp_path / "mcp2repl.d.ts").write_text(saved_types(k, "mcp2repl.d.ts"))
    (tmp_path / "cell.ts").write_text(CELL)
    done = tsc(tmp_path, "mcp2repl.d.ts", "cell.ts")
    assert done.returncode == 0, done.stdout + done.stderr
    assert k.value(CELL) == "[ true, true, 1, true, false, 'string' ]"


def test_observed_results_type_later_declarations(k: KernelProcess) -> None:
    # book_stats_json has no output schema: its result type is the shape of the results seen so far
    declared = "function book_stats_json(args?: {\n      book_id?: string | null; // default null\n    }, options?: mcp2repl.CallOptions): Promise<"
    before = saved_types(k, "before.d.ts", "{ server: 'demo' }")
    assert f"{declared}unknown>;" in before
    k.value("await mcp.demo.book_stats_json(); 1")
    after = saved_types(k, "after.d.ts", "{ server: 'demo' }")
    assert "namespace echo" not in after
    assert f"{declared}{{ shop: string; books: number;" in after


def test_wrong_calls_fail_to_type_check(k: KernelProcess, tmp_path: Path) -> None:
    require_node_package("typescript")
    (tmp_path / "mcp2repl.d.ts").write_text(saved_types(k, "mcp2repl.d.ts"))
    (tmp_path / "bad.ts").write_text('await mcp.demo.get_book({ bookid: "b01" });\nawait mcp.demo.search_books({ query: 1 });\napi.printt(1);\n')
    done = tsc(tmp_path, "mcp2repl.d.ts", "bad.ts")
    assert [line.split(": error ")[1][:6] for line in done.stdout.splitlines()] == ["TS2561", "TS2322", "TS2551"], done.stdout


def test_every_runtime_global_is_declared(k: KernelProcess) -> None:
    dts = saved_types(k, "all.d.ts")
    api_block = dts.split("declare namespace api {", 1)[1].split("\n}\n", 1)[0]
    members = json.loads(k.value("JSON.stringify(Object.getOwnPropertyNames(api))").strip("'"))
    missing = [m for m in members if f" {m}(" not in api_block and f" {m}<" not in api_block and f"const {m}:" not in api_block]
    assert missing == []
    for name in ("declare namespace mcp {", "declare namespace tools {", "declare function sleep(", "declare function emit(", "declare class ToolError"):
        assert name in dts
    servers = json.loads(k.value("JSON.stringify(Object.keys(mcp).filter(k => !['call', 'tools', 'servers'].includes(k)))").strip("'"))
    assert sorted(servers) == ["demo", "echo", "everything"]
    assert all(f"  namespace {s} {{" in dts for s in servers)


def test_an_unknown_server_is_a_type_error(k: KernelProcess) -> None:
    error = k.run("await api.types({ server: 'nope' })").error
    assert (error["ename"], error["evalue"]) == ("TypeError", 'api.types: no server "nope" (servers: "demo", "echo", "everything")')
