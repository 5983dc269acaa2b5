"""Run folders: a process that dies leaves its last words, and the next start of the same kernel says why."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ECHO, ROOT, KernelProcess

from mcp_kernel import rundir


def _die(state: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh process that owns a run folder named "nb.json" and watches for crashes."""
    prologue = "from mcp_kernel import rundir\nrun = rundir.current()\nrun.record_owner('nb.json')\nrun.watch_crashes()\n"
    env = {**os.environ, "MCP2REPL_STATE_DIR": str(state), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", prologue + script], env=env, capture_output=True, text=True, timeout=60)


def _previous(state: Path, who: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("MCP2REPL_STATE_DIR", str(state))
    _wait_dead(state)
    return rundir.previous_end(who)


def _wait_dead(state: Path) -> None:
    """Wait for the watcher: it writes the tail once the pipe closes, and holds the folder's lock until then."""
    deadline = time.monotonic() + 30
    while not all(rundir._is_dead(p) for p in (state / "runs").iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_an_abort_leaves_what_it_printed_and_the_running_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = _die(
        tmp_path,
        "import os, sys\nrun.record_cell('cell[3]', 'const hog = []\\nwhile (true) hog.push(1)')\n"
        "sys.stderr.write('#\\n# Fatal JavaScript out of memory: Reached heap limit\\n#\\n'); sys.stderr.flush()\nos.abort()\n",
    )
    assert done.returncode == -signal.SIGABRT
    # what it printed still reaches the real stderr, through the watcher
    assert "Fatal JavaScript out of memory: Reached heap limit" in done.stderr
    lines = _previous(tmp_path, "nb.json", monkeypatch)
    clock = r"\d\d:\d\d:\d\d"
    head = rf"The previous run \(pid \d+, started {clock}\) ended without shutting down while running cell\[3\] \(started {clock}\): const hog = \[\]…\."
    assert re.fullmatch(head, lines[0]), lines[0]
    assert lines[1:4] == ["Its last words:", "  #", "  # Fatal JavaScript out of memory: Reached heap limit"]
    assert "  Fatal Python error: Aborted" in lines
    assert lines[-1].startswith(f"Its logs: {tmp_path / 'runs'}")
    # reported once
    assert rundir.previous_end("nb.json") == []


def test_a_kill_without_last_words_says_so_and_other_owners_hear_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = _die(tmp_path, "import os, signal\nrun.record_cell('cell[1]', 'x')\nrun.record_idle()\nos.kill(os.getpid(), signal.SIGKILL)\n")
    assert done.returncode == -signal.SIGKILL
    monkeypatch.setenv("MCP2REPL_STATE_DIR", str(tmp_path))
    _wait_dead(tmp_path)
    assert rundir.previous_end("other.json") == []
    lines = rundir.previous_end("nb.json")
    assert "ended without shutting down while idle; its last cell was cell[1]" in lines[0]
    assert lines[1] == "It left no last words: something outside it killed it (the system's out-of-memory killer, or a client restart)."


def test_a_clean_exit_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = _die(tmp_path, "import sys\nrun.server_logs().joinpath('x.log').write_text('log')\nsys.stderr.write('bye\\n')\n")
    assert (done.returncode, done.stderr) == (0, "bye\n")
    time.sleep(0.5)  # give the watcher its chance to (wrongly) write a tail
    assert list((tmp_path / "runs").iterdir()) == []
    monkeypatch.setenv("MCP2REPL_STATE_DIR", str(tmp_path))
    assert rundir.previous_end("nb.json") == []


def test_dead_folders_are_pruned_to_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = tmp_path / "runs"
    for n in range(rundir.KEEP + 5):
        folder = runs / f"{100000 + n}-x"
        folder.mkdir(parents=True)
        (folder / "lock").touch()  # nobody holds it: dead
        os.utime(folder, (1e9 + n, time.time() - 60 + n))
    old = runs / "99-old"
    old.mkdir()
    (old / "lock").touch()
    os.utime(old, (1e9, time.time() - (rundir.KEEP_DAYS + 1) * 86400))
    monkeypatch.setenv("MCP2REPL_STATE_DIR", str(tmp_path))
    rundir.previous_end("nb.json")
    kept = sorted(p.name for p in runs.iterdir())
    assert kept == [f"{100000 + n}-x" for n in range(5, rundir.KEEP + 5)]


def test_a_restarted_kernel_says_how_the_last_one_died() -> None:
    kernel = KernelProcess()
    try:
        kernel.execute("const kept = 1")
        kernel.kc.execute("while (true) {}")
        time.sleep(1.0)
        os.kill(kernel.pid, signal.SIGABRT)
        deadline = time.monotonic() + 30
        while kernel.km.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        kernel.km.restart_kernel(now=True)
        kernel.kc.wait_for_ready(timeout=60)
        kernel.kc.kernel_info()
        banner = kernel.kc.get_shell_msg(timeout=30)["content"]["banner"]
        assert "ended without shutting down while running cell[2]" in banner
        assert "): while (true) {}." in banner
        assert "  Fatal Python error: Aborted" in banner
        cell = kernel.run("1 + 1")
        assert cell.stderr.startswith("[mcp2repl] The previous run (pid ")
        assert "[mcp2repl]   Fatal Python error: Aborted\n" in cell.stderr
        assert cell.text == "2"
        # said once
        assert kernel.run("2 + 2").stderr == ""
    finally:
        kernel.close()


def test_a_shutdown_closes_the_servers_and_leaves_no_run_folder(tmp_path: Path) -> None:
    """Regression: the session was closed from the control thread, hung, and the kernel was killed."""
    marker = tmp_path / "closed"
    server = f"{sys.executable} {ECHO}; echo clean > {marker}"
    # the supervisor's grace for a server to exit once the kernel is gone: 5 s, which a loaded machine once
    # used up (it then ended the shell before it wrote); a stdin never closed still fails at 60 s
    echo = {"command": "sh", "args": ["-c", server], "env": {"MCP2REPL_LEFT_GRACE": "60"}}
    (tmp_path / "mcp2repl.json").write_text(json.dumps({"mcpServers": {"echo": echo}}))
    state = tmp_path / "state"
    kernel = KernelProcess(cwd=tmp_path, env={"MCP2REPL_STATE_DIR": str(state)})
    assert kernel.value("(await mcp.echo.echo({text: 'hi'}))") == "'hi'"
    [run] = (state / "runs").iterdir()
    assert [p.name for p in (run / "servers-1").iterdir()] == ["echo.log"]  # not a temp folder per kernel (issue 10 #11b)
    process = kernel.km.provisioner.process  # type: ignore[union-attr]
    kernel.close(graceful=True)
    assert process.wait(10) == 0
    # the server saw its stdin end: closed, not killed (it may finish after the kernel, its supervisor waits)
    got = _file_within(marker, 90)
    assert got == "clean\n", f"the server's shell did not write its marker within 90 s of the shutdown; left: {_left(str(marker))}"
    assert list((state / "runs").iterdir()) == []


def _left(mark: str) -> list[str]:
    """The processes whose command line holds ``mark`` (the server's shell), with their parents, for a failure."""
    import psutil

    left = []
    for proc in psutil.process_iter(["pid", "ppid", "status", "cmdline"]):
        if mark in " ".join(proc.info["cmdline"] or []):
            left.append(f"{proc.info['pid']} (parent {proc.info['ppid']}, {proc.info['status']}): {' '.join(proc.info['cmdline'])[-120:]}")
    return left


def _file_within(path: Path, seconds: float) -> str | None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.1)
    return None


def test_a_shutdown_does_not_wait_for_a_server_slow_to_exit(tmp_path: Path) -> None:
    """Issue 23, item 12: "the session did not close within 1.4 s (TimeoutError)" ended every run on a
    loaded machine: the close waited for the servers' processes to exit. Now it closes their stdin,
    and the supervisor lets a server finish after the kernel is gone."""
    import tempfile

    from conftest import OWN_VARS
    from jupyter_client.manager import start_new_kernel

    marker = tmp_path / "closed"
    server = f"{sys.executable} {ECHO}; sleep 1; echo clean > {marker}"  # still busy 1 s after its stdin ended
    (tmp_path / "mcp2repl.json").write_text(json.dumps({"mcpServers": {"echo": {"command": "sh", "args": ["-c", server]}}}))
    env = {k: v for k, v in os.environ.items() if k not in OWN_VARS}
    env.update(XDG_CONFIG_HOME=tempfile.mkdtemp(prefix="mcp2repl-xdg-"), MCP2REPL_STATE_DIR=str(tmp_path / "state"))
    with open(tmp_path / "kernel.err", "wb") as err:
        km, kc = start_new_kernel(kernel_name="mcp2repl", cwd=str(tmp_path), env=env, stderr=err)
    try:
        reply = kc.execute_interactive("(await mcp.echo.echo({text: 'hi'}))", timeout=60)
        assert reply["content"]["status"] == "ok"
        process = km.provisioner.process  # type: ignore[union-attr]
        km.shutdown_kernel(now=False)
        assert process.wait(30) == 0
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)
    logged = (tmp_path / "kernel.err").read_text()
    assert "did not close" not in logged and "without encryption" not in logged, logged
    assert _file_within(marker, 60) == "clean\n", "the server's shell did not write its marker within 60 s of the shutdown"
