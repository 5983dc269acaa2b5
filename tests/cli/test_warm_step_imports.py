"""A warm session step from the shell imports only what a step needs (issue 28).

An agent pays for every module the step imports on every step (and, in a checkout that writes no
bytecode, for compiling each of ours), so the warm path of ``mcp2repl --session NAME -e CODE`` /
``-e -`` / ``--json`` is checked module by module: the entry function runs in a fresh interpreter
against a real session, and what it added to ``sys.modules`` is compared with what it must never
load — the kernel and its engine, V8, the MCP SDK, jupyter_client, rich — and with the standard
modules it no longer needs (subprocess, shutil and the compressors argparse's sizing pulled in,
uuid and datetime for one id and one date). Its output must stay byte for byte what it was.
This is the usual path (``MCP2REPL_STEP_SOCKET=0``): the step through the session's socket, which
imports less still, is pinned in test_step_socket.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_cli import PY, clean_env, cli, config, stop_all

#: Never on a warm step: the kernel's side, and the heavy dependencies.
HEAVY = ("py_mini_racer", "mcp", "ipykernel", "jupyter_client", "rich", "IPython", "mcp_kernel.session", "mcp_kernel.engine", "mcp_kernel.kernel")
#: Standard modules the warm path used to load and needs not (it did: 0.2 s a step on a quiet machine).
NOT_NEEDED = ("subprocess", "shutil", "bz2", "lzma", "uuid", "datetime")

#: Runs the command's entry function as the console script does, then writes what it imported.
RUNNER = """
import json, sys
before = set(sys.modules)
from mcp_kernel.cli.main import main
code = main(sys.argv[2:])
sys.stdout.flush()
with open(sys.argv[1], "w") as out:
    json.dump(sorted(set(sys.modules) - before), out)
sys.exit(code)
"""


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    cwd = tmp_path_factory.mktemp("warm")
    config(cwd, {})
    started = cli("--session", "w", "-e", "let kept = 41", cwd=cwd)
    assert started.code == 0, f"the session did not start: {started.err}"
    yield cwd
    stop_all(cwd)


def _step(cwd: Path, *args: str, stdin: str | None = None) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    loaded = cwd / "loaded.json"
    loaded.unlink(missing_ok=True)
    proc = subprocess.run(
        [PY, "-c", RUNNER, str(loaded), *args], cwd=cwd, env=clean_env(MCP2REPL_STEP_SOCKET="0"), input=stdin, capture_output=True, text=True, timeout=120
    )
    assert loaded.exists(), f"the step did not finish: {proc.returncode}\n{proc.stderr}"
    return proc, json.loads(loaded.read_text())


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY + NOT_NEEDED)]


@pytest.mark.parametrize(
    ("args", "stdin", "out"),
    [
        (("--session", "w", "-e", "return kept + 1"), None, "42\n"),
        (("--session", "w", "--json", "-e", "return kept + 1"), None, '{"ok":true,"value":42}\n'),
        (("--session", "w", "-e", "-"), "return kept + 1", "42\n"),
    ],
    ids=["eval", "json", "stdin"],
)
def test_warm_step_imports_only_what_it_needs(session: Path, args: tuple[str, ...], stdin: str | None, out: str) -> None:
    proc, modules = _step(session, *args, stdin=stdin)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, out, "")
    assert _heavy(modules) == [], f"a warm step imported {_heavy(modules)}"
    assert "zmq" in modules and "mcp_kernel.client.trust" in modules  # it did step through the checked ZMQ client


def test_a_warm_step_that_fails_says_so_as_before(session: Path) -> None:
    """The error path (render's stderr) is on the lean path too: the same bytes, exit status 1."""
    proc, modules = _step(session, "--session", "w", "-e", "throw new TypeError('no')")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("TypeError: no\n"), proc.stderr
    assert _heavy(modules) == []


def test_the_entry_runner_is_the_console_script(session: Path) -> None:
    """What the runner prints is what ``mcp2repl`` prints: the runner is a faithful stand-in."""
    proc, _ = _step(session, "--session", "w", "--json", "-e", "return [1, 'two']")
    assert proc.stdout == cli("--session", "w", "--json", "-e", "return [1, 'two']", cwd=session).out
    assert sys.executable == PY
