"""Session files and processes: a session's pid is checked to be its kernel before any signal."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from mcp_kernel.client import registry
from mcp_kernel.client.registry import SessionFiles


def test_terminate_spares_a_process_that_only_has_the_pid(tmp_path: Path) -> None:
    # pids come round again (pid_max is 32768 here) and every session kernel leads its own group:
    # a stale pid may name another session's kernel by the time it is signalled
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        _wait_exec(other.pid, b"time.sleep(60)")
        registry.terminate(other.pid, tmp_path / "s.json", grace=0.2)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
    conn = tmp_path / "s.json"
    kernel = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "-m", "mcp_kernel", "-f", str(conn)], start_new_session=True)
    try:
        _wait_exec(kernel.pid, str(conn).encode())
        registry.terminate(kernel.pid, tmp_path / "other.json", grace=0.2)  # another session's connection file
        assert kernel.poll() is None
        registry.terminate(kernel.pid, conn, grace=5)  # its command line runs the kernel of this file: ended
        assert kernel.wait(timeout=10) == -15
    finally:
        kernel.kill()
        kernel.wait()


def _wait_exec(pid: int, marker: bytes) -> None:
    """Until the child runs its own program (before exec, its command line is still ours)."""
    deadline = time.monotonic() + 30
    while marker not in Path(f"/proc/{pid}/cmdline").read_bytes() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_stop_of_a_session_whose_pid_was_reused_removes_only_its_files(tmp_path: Path) -> None:
    files = SessionFiles("s", tmp_path)
    files.secure(create=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        for path, text in ((files.meta, f'{{"pid": {other.pid}}}'), (files.conn, "{}")):
            path.write_text(text)
            path.chmod(0o600)
        assert files.state() == "dead"
        assert registry.stop(files) == "session 's' was not running (its kernel had died); its files are removed"
        assert (other.poll(), files.conn.exists(), files.meta.exists()) == (None, False, False)
    finally:
        other.kill()
        other.wait()
