"""Kernels behind Jupyter Enterprise Gateway (PyPI), started here in its default local-process mode.

Enterprise Gateway pins jupyter_client<7, so it runs from its own venv (.venv-gateway, made by
``scripts/bootstrap.sh --test``); it launches this checkout's mcp2repl kernelspec like any kernel.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from mcp_kernel.client import KernelSession, SessionError

ROOT = Path(__file__).resolve().parents[2]
GATEWAY = ROOT / ".venv-gateway" / "bin" / "jupyter-enterprisegateway"
MCP2REPL = str(Path(sys.executable).with_name("mcp2repl"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    assert GATEWAY.exists(), "Enterprise Gateway is missing: run scripts/bootstrap.sh --test (it makes .venv-gateway)"
    token = secrets.token_hex(8)
    port = _free_port()
    log = open(tmp_path_factory.mktemp("gateway") / "gateway.log", "w")
    proc = subprocess.Popen(
        [str(GATEWAY), "--ip=127.0.0.1", f"--port={port}", f"--EnterpriseGatewayApp.auth_token={token}",
         # the tests run as root, which the gateway refuses by default
         "--EnterpriseGatewayApp.unauthorized_users=nobody-here"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "JUPYTER_PATH": os.environ["JUPYTER_PATH"]},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/api", timeout=2)
            break
        except urllib.error.HTTPError:
            break  # it answers (401 without the token): it is up
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the gateway did not start"
            time.sleep(0.3)
    yield url, token
    kernels = psutil.Process(proc.pid).children(recursive=True)
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
    for p in kernels:
        if p.is_running():
            p.kill()
    log.close()


def test_step_api_through_the_gateway(gateway: tuple[str, str], tmp_path: Path) -> None:
    url, token = gateway
    s = KernelSession("remote", cwd=tmp_path, gateway=url, token=token)
    try:
        assert s.step("globalThis.total = 0; async function add(id) { total += (await mcp.demo.get_book({ book_id: id })).pages; return total }").ok
        first = s.step("await add('b01')", trace=True)
        assert (first.value > 0, [(c["server"], c["tool"]) for c in first.calls]) == (True, [("demo", "get_book")])
        second = s.step("console.log('adding'); await add('b02')")
        assert (second.stdout, second.value > first.value) == ("adding\n", True)
        timed = s.step("while (true) {}", timeout=1)
        assert (timed.error.name, timed.error.message) == ("TimeoutError", "the step ran past its time limit of 1 s and was interrupted (state is kept)")
    finally:
        s.close()
    again = KernelSession("remote", cwd=tmp_path, gateway=url, token=token)  # the named session is found again
    try:
        assert again.step("total").value == second.value
    finally:
        again.stop()
    assert not (tmp_path / ".mcp2repl" / "sessions" / "remote.gateway.json").exists()


def test_command_line_through_the_gateway(gateway: tuple[str, str], tmp_path: Path) -> None:
    url, token = gateway
    env = {**os.environ, "MCP2REPL_GATEWAY_TOKEN": token}

    def run(*args: str) -> tuple[int, str, str]:
        p = subprocess.run([MCP2REPL, "--gateway", url, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    assert run("-e", "6 * 7") == (0, "42\n", "")
    assert run("--session", "g", "-e", "globalThis.v = 'kept'") == (0, "'kept'\n", "")
    assert run("--session", "g", "-e", "v") == (0, "'kept'\n", "")
    assert run("--stop", "g") == (0, "stopped session 'g' on the gateway\n", "")
    bad = subprocess.run(
        [MCP2REPL, "--gateway", url, "-e", "1"], cwd=tmp_path, env={**os.environ, "MCP2REPL_GATEWAY_TOKEN": "wrong"}, capture_output=True, text=True
    )
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == (
        f"mcp2repl: error: the gateway at {url} refused to start an mcp2repl kernel: HTTP 401 (check MCP2REPL_GATEWAY_TOKEN) "
        '{"reason": "Unauthorized", "message": ""}\n'
    )
    with pytest.raises(SessionError, match=r"cannot reach the gateway at http://127\.0\.0\.1:9"):
        KernelSession("x", cwd=tmp_path, gateway="http://127.0.0.1:9", token="t")
