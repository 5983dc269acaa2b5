"""A one-shot ``mcp2repl -e CODE`` imports only what its program needs, and ends the way it always did (issue 28).

A one-shot run pays for every module it imports (and, in a checkout that writes no bytecode, for
compiling each of ours), so ``-e '1+1'`` with no config is checked module by module, as the warm
step is in test_warm_step_imports.py: the console script's entry runs in a fresh interpreter, and
an ``atexit`` handler registered before it writes ``sys.modules`` — the run ends with ``os._exit``
after running ``atexit``'s handlers (cli/oneshot.py: ``leave``), so the handler running at all is
part of what is checked. What it must not load: the MCP SDK and pydantic (no server is touched),
ZMQ (no session), YAML (no YAML config), anyio and regex (no server to start, no regex selector),
and the parts of ours only a tool, an editor or a big cell uses.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from agent_cli import PY, clean_env, config, fixture

#: Never for ``-e '1+1'`` without a config: dependencies, then ours, then standard modules.
UNUSED = (
    "mcp",
    "mcp_types",
    "pydantic",
    "zmq",
    "yaml",
    "anyio",
    "regex",
    "ipykernel",
    "jupyter_client",
    "mcp_kernel.servers.manager",
    "mcp_kernel.servers.typescript",
    "mcp_kernel.servers.examples",
    "mcp_kernel.api.completion",
    "mcp_kernel.api.guide",
    "mcp_kernel.api.jsdoc",
    "mcp_kernel.client.registry",
    "mcp_kernel.client.wire",
    "mcp_kernel.kernel",
    "uuid",
    "pickle",
)

#: The console script's entry, as ``mcp2repl`` runs it (argv from sys.argv), with a handler that
#: writes what was imported when the process ends.
RUNNER = """
import atexit, json, sys
out_path = sys.argv.pop(1)

def written():
    with open(out_path, "w") as out:
        json.dump(sorted(sys.modules), out)

atexit.register(written)
from mcp_kernel.cli.main import main
sys.exit(main())
"""


def _run(cwd: Path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    loaded = cwd / "loaded.json"
    loaded.unlink(missing_ok=True)
    proc = subprocess.run(
        [PY, "-c", RUNNER, str(loaded), *args], cwd=cwd, env=clean_env(**env), capture_output=True, text=True, timeout=180
    )
    assert loaded.exists(), f"the run's atexit handler did not run: exit status {proc.returncode}\n{proc.stderr}"
    return proc, json.loads(loaded.read_text())


def _unused(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == u or m.startswith(u + ".") for u in UNUSED)]


@pytest.mark.parametrize(
    ("args", "out"),
    [(("-e", "1+1"), "2\n"), (("--json", "-e", "1+1"), '{"ok":true,"value":2}\n'), (("-e", "const t: number = 41; t + 1"), "42\n")],
    ids=["eval", "json", "typescript"],
)
def test_a_one_shot_imports_only_what_its_program_needs(tmp_path: Path, args: tuple[str, ...], out: str) -> None:
    proc, modules = _run(tmp_path, *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, out, "")
    assert _unused(modules) == [], f"a one-shot run imported {_unused(modules)}"
    assert "py_mini_racer" in modules and "mcp_kernel.session" in modules  # it did run a cell in V8


def test_a_failing_one_shot_says_so_and_exits_1(tmp_path: Path) -> None:
    proc, modules = _run(tmp_path, "-e", "throw new TypeError('no')")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("TypeError: no\n"), proc.stderr
    assert _unused(modules) == []


def test_the_fast_exit_flushes_all_output_and_keeps_the_exit_status(tmp_path: Path) -> None:
    """Output bigger than a pipe's buffer is all there, stderr too, and a usage error's status is 2."""
    proc, _ = _run(tmp_path, "-e", "console.log('x'.repeat(15000)); console.error('said'); 7", PYTHONUNBUFFERED="")  # block-buffered stdout
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "7\n" + "x" * 15000 + "\n", "said\n")  # the value first, as always
    usage = subprocess.run([PY, "-c", RUNNER, str(tmp_path / "u.json"), "-e"], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2 and usage.stdout == "" and "-e" in usage.stderr


@pytest.mark.timeout(300)
def test_a_one_shot_that_starts_a_server_still_cleans_up_at_exit(tmp_path: Path) -> None:
    """The run folder (its server logs) is removed by its atexit handler: the fast exit still runs what must run at exit."""
    state = tmp_path / "state"
    config(tmp_path, {"echo": fixture("echo_server.py")})
    proc, modules = _run(tmp_path, "-e", "(await mcp.echo.add({ a: 20, b: 22 })).sum", MCP2REPL_STATE_DIR=str(state))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "42\n", "")
    assert "mcp" in modules and "anyio" in modules  # this one did need the SDK and a server
    assert [p.name for p in (state / "runs").iterdir()] == [], "the run folder was left behind"
