"""What makes a session's files trusted (client/trust.py), and the wire dropping every unverified message.

A fake kernel (tests/fixtures/fake_kernel.py) stands in for a planted one; with ``as_kernel`` its
command line reads ``-m mcp_kernel -f CONN`` like a session kernel's, so every other check is
reached. Each case starts from a session that passes every check and breaks one thing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mcp_kernel.client.registry import SessionError, SessionFiles
from mcp_kernel.client.wire import KernelConnection

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from agent_cli import Planted, plant, write_record

ROOT_ONLY = pytest.mark.skipif(os.getuid() != 0, reason="files and processes of another user need root")


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[Planted]:
    """Session "s" under tmp_path, backed by a fake kernel that passes every check."""
    planted = plant(tmp_path, "s", key="k3y", as_kernel=True)
    planted.conn.chmod(0o600)
    planted.conn.parent.chmod(0o700)
    planted.conn.parent.parent.chmod(0o700)
    write_record(tmp_path, "s", planted.proc.pid)
    yield planted
    planted.close()


def _edit(conn: Path, **changes: object) -> None:
    conn.write_text(json.dumps({**json.loads(conn.read_text()), **changes}))


def test_a_session_passing_every_check_is_running(tmp_path: Path, fake: Planted) -> None:
    verdict = SessionFiles("s", tmp_path).check()
    assert (verdict.state, verdict.reason, verdict.pid, verdict.info and verdict.info["key"]) == ("running", "", fake.proc.pid, "k3y")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda c: _edit(c, key=""), "{conn} has an empty key: messages from it could not be verified"),
        (lambda c: _edit(c, signature_scheme="hmac-md5"), "{conn} signs with 'hmac-md5', not hmac-sha256"),
        (lambda c: _edit(c, ip="0.0.0.0"), "{conn} names address '0.0.0.0', not a loopback one"),
        (lambda c: _edit(c, ip="10.1.2.3"), "{conn} names address '10.1.2.3', not a loopback one"),
        (lambda c: _edit(c, transport="ipc"), "{conn} names transport 'ipc', not tcp"),
        (lambda c: _edit(c, shell_port="x"), "{conn} names no valid shell_port"),
        (lambda c: c.write_text("not json"), "{conn} is not a connection file"),
        (lambda c: c.chmod(0o644), "{conn} has mode 0644, not 0600: others may read or write it"),
        (lambda c: c.chmod(0o620), "{conn} has mode 0620, not 0600: others may read or write it"),
        (lambda c: (c.rename(c.with_name("real")), c.symlink_to(c.with_name("real"))), "{conn} is a symbolic link"),
        (lambda c: (c.unlink(), c.mkdir()), "{conn} is not a regular file"),
        (lambda c: (c.parent.parent / "s.meta.json").chmod(0o666), "{meta} has mode 0666, not 0600: others may read or write it"),
        (lambda c: (c.parent.parent / "s.meta.json").write_text("[]"), "{meta} is not a session record"),
        (lambda c: (c.parent.parent / "s.meta.json").unlink(), "{conn} has no session record beside it ({meta}): mcp2repl did not start it"),
    ],
)
def test_one_broken_thing_makes_a_session_untrusted(tmp_path: Path, fake: Planted, change: Callable[[Path], object], reason: str) -> None:
    change(fake.conn)
    verdict = SessionFiles("s", tmp_path).check()
    conn, meta = ".mcp2repl/sessions/kernels/s.json", ".mcp2repl/sessions/s.meta.json"
    assert (verdict.state, verdict.reason, verdict.info) == ("untrusted", reason.format(conn=conn, meta=meta), None)


@ROOT_ONLY
def test_files_and_processes_of_another_user_are_not_trusted(tmp_path: Path, fake: Planted) -> None:
    files = SessionFiles("s", tmp_path)
    os.chown(fake.conn, 65534, 65534)
    assert (files.check().state, files.check().reason) == ("untrusted", ".mcp2repl/sessions/kernels/s.json belongs to uid 65534, not to you")
    os.chown(fake.conn, 0, 0)
    os.chown(files.kernels, 65534, 65534)
    with pytest.raises(SessionError, match=r"^\.mcp2repl/sessions/kernels belongs to uid 65534, not to you: mcp2repl uses no session there"):
        files.check()
    os.chown(files.kernels, 0, 0)
    as_nobody = subprocess.Popen(  # /bin/sh: nobody may not run this venv's python
        ["/bin/sh", "-c", "sleep 60; :", "sh", "-m", "mcp_kernel", "-f", str(fake.conn)], user=65534, group=65534, cwd="/"
    )
    try:
        write_record(tmp_path, "s", as_nobody.pid)
        _wait_cmdline(as_nobody.pid, str(fake.conn))
        assert (files.check().state, files.check().reason) == ("dead", f"pid {as_nobody.pid} runs as uid 65534, not as you")
    finally:
        as_nobody.kill()
        as_nobody.wait()


def test_a_folder_open_to_others_is_tightened_once_with_a_notice(tmp_path: Path, fake: Planted) -> None:
    files = SessionFiles("s", tmp_path)
    files.folder.chmod(0o777)
    files.kernels.chmod(0o755)
    assert files.check().state == "running" and files.check().state == "running"
    assert files.notices == [
        ".mcp2repl/sessions was open to others (mode 0777): tightened to 0700",
        ".mcp2repl/sessions/kernels was open to others (mode 0755): tightened to 0700",
    ]
    assert (files.folder.stat().st_mode & 0o777, files.kernels.stat().st_mode & 0o777) == (0o700, 0o700)


def test_a_record_naming_an_ended_or_other_process_is_dead(tmp_path: Path, fake: Planted) -> None:
    files = SessionFiles("s", tmp_path)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "-m", "mcp_kernel", "-f", str(fake.conn) + ".other"])
    try:
        write_record(tmp_path, "s", other.pid)
        _wait_cmdline(other.pid, str(fake.conn) + ".other")
        assert (files.check().state, files.check().reason) == ("dead", f"pid {other.pid} is not its kernel")
    finally:
        other.kill()
        other.wait()
    assert (files.check().state, files.check().reason) == ("dead", f"pid {other.pid} is not running")
    fake.conn.unlink()
    assert files.check().state == "ended"


def test_the_wire_drops_unsigned_and_wrongly_signed_messages(tmp_path: Path) -> None:
    good = plant(tmp_path, "good", key="k3y")
    unsigned = plant(tmp_path, "unsigned", key="k3y", sign_with="")
    forged = plant(tmp_path, "forged", key="k3y", sign_with="another key")
    try:
        conn = KernelConnection(json.loads(good.conn.read_text()))
        try:
            assert conn.wait_ready(30)["banner"] == "fake"  # the same fake, signing right, is heard
        finally:
            conn.close()
        for fake in (unsigned, forged):
            conn = KernelConnection(json.loads(fake.conn.read_text()))
            try:
                with pytest.raises(TimeoutError, match=r"^the kernel did not answer within 3 s$"):
                    conn.wait_ready(3)
            finally:
                conn.close()
    finally:
        for fake in (good, unsigned, forged):
            fake.close()


def test_the_wire_refuses_a_connection_it_could_not_verify(tmp_path: Path) -> None:
    info = {"ip": "127.0.0.1", "transport": "tcp", "shell_port": 1, "control_port": 2, "iopub_port": 3, "signature_scheme": "hmac-sha256"}
    with pytest.raises(ValueError, match=r"^the connection info has no key: messages could not be verified$"):
        KernelConnection({**info, "key": ""})
    with pytest.raises(ValueError, match=r"^the connection info signs with 'hmac-sha1', not hmac-sha256$"):
        KernelConnection({**info, "key": "k", "signature_scheme": "hmac-sha1"})


def _wait_cmdline(pid: int, marker: str) -> None:
    """Until the child runs its own program (before exec, its command line is still ours)."""
    import time

    deadline = time.monotonic() + 30
    while marker.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, f"pid {pid} did not exec within 30 s"
        time.sleep(0.01)
