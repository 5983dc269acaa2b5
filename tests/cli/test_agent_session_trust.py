"""Planted sessions: files under ``.mcp2repl/sessions/`` that mcp2repl did not write get no code.

``.mcp2repl/`` sits in the working directory, often a cloned repository, so its files prove nothing.
A red team planted a connection file pointing at a fake kernel (tests/fixtures/fake_kernel.py):
the first step sent it the agent's code and printed its forged result as a success.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_cli import Run, cli, plant, session_pid, stop_all, wait_gone, write_record

KERNELS = ".mcp2repl/sessions/kernels"


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    stop_all(tmp_path)


def _untrusted(name: str, reason: str) -> str:
    return (
        f"session {name!r} is untrusted: {reason}. No code was sent to it: remove its files with --stop {name}, "
        "or replace it with --restart (KernelSession(..., restart=True))"
    )


def test_a_planted_connection_file_gets_no_code_and_is_listed_as_untrusted(here: Path) -> None:
    fake = plant(here, "default")  # "key": "", no record beside it, 127.0.0.1
    try:
        reason = f"{KERNELS}/default.json has no session record beside it (.mcp2repl/sessions/default.meta.json): mcp2repl did not start it"
        run = cli("--session", "default", "--json", "-e", "globalThis.apiKey = 'CODE'; 1", cwd=here)
        message = _untrusted("default", reason)
        assert run == Run(2, json.dumps({"ok": False, "error": {"name": "SessionError", "message": message, "stack": ""}}, separators=(",", ":")) + "\n", "")
        assert not fake.received.exists()
        [row] = json.loads(cli("sessions", "--json", cwd=here).out)
        assert (row["name"], row["state"], row["reason"], row["connectionFile"]) == ("default", "untrusted", reason, None)
        table = cli("sessions", cwd=here).out.splitlines()
        assert table[1].split()[:3] == ["default", "untrusted", "-"] and table[1].endswith(f"  {reason}")
        assert cli("--restart", "--session", "default", "-e", "6 * 7", cwd=here) == Run(
            0, "42\n", f"[mcp2repl] session 'default' was untrusted ({reason}); its files were replaced by a new session\n"
        )
        assert not fake.received.exists() and fake.proc.poll() is None
    finally:
        fake.close()


def test_a_record_naming_a_process_that_is_not_its_kernel_is_dead_and_stop_never_signals_it(here: Path) -> None:
    fake = plant(here, "s", key="k3y")  # signs its messages with the key it wrote
    try:
        fake.conn.chmod(0o600)
        write_record(here, "s", fake.proc.pid)  # a live process of the user's, but not "-m mcp_kernel -f …/s.json"
        run = cli("--session", "s", "-e", "1", cwd=here)
        assert run.code == 2 and run.err.startswith(f"mcp2repl: error: session 's' is dead: its kernel (pid {fake.proc.pid}) ended")
        [row] = json.loads(cli("sessions", "--json", cwd=here).out)
        assert (row["state"], row["reason"]) == ("dead", f"pid {fake.proc.pid} is not its kernel")
        assert cli("--stop", "s", cwd=here) == Run(0, "session 's' was not running (its kernel had died); its files are removed\n", "")
        fake.conn.parent.mkdir(exist_ok=True)
        fake.conn.write_text("{}")  # untrusted this time (mode 0644), the record still naming the fake
        write_record(here, "s", fake.proc.pid)
        assert cli("--stop", "s", cwd=here) == Run(
            0, f"session 's' was untrusted ({KERNELS}/s.json has mode 0644, not 0600: others may read or write it); its files are removed\n", ""
        )
        assert (fake.proc.poll(), fake.conn.exists(), fake.received.exists()) == (None, False, False)
    finally:
        fake.close()


def test_a_kernel_like_process_with_an_empty_key_gets_no_code(here: Path) -> None:
    fake = plant(here, "s", as_kernel=True)  # its command line passes for the session's kernel
    try:
        fake.conn.chmod(0o600)
        write_record(here, "s", fake.proc.pid)
        reason = f"{KERNELS}/s.json has an empty key: messages from it could not be verified"
        assert cli("--session", "s", "-e", "1", cwd=here) == Run(2, "", f"mcp2repl: error: {_untrusted('s', reason)}\n")
        assert not fake.received.exists()
    finally:
        fake.close()


def test_a_world_writable_sessions_folder_is_tightened_and_a_foreign_one_refused(here: Path) -> None:
    folder = here / ".mcp2repl" / "sessions"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    run = cli("--session", "t", "-e", "1", cwd=here)
    assert run == Run(0, "1\n", "[mcp2repl] .mcp2repl/sessions was open to others (mode 0777): tightened to 0700\n")
    assert (folder.stat().st_mode & 0o777, (folder / "kernels").stat().st_mode & 0o777) == (0o700, 0o700)
    pid = session_pid(here, "t")
    assert cli("--stop", "t", cwd=here).code == 0 and wait_gone(pid)
    if os.getuid() != 0:
        pytest.skip("giving the folder to another user needs root")
    os.chown(folder, 65534, 65534)
    message = ".mcp2repl/sessions belongs to uid 65534, not to you: mcp2repl uses no session there (remove it, or work in another folder)"
    assert cli("--session", "t", "-e", "1", cwd=here) == Run(2, "", f"mcp2repl: error: {message}\n")
    assert cli("sessions", cwd=here) == Run(2, "", f"mcp2repl: error: {message}\n")


def test_planted_links_are_never_written_through(here: Path) -> None:
    folder = here / ".mcp2repl" / "sessions"
    folder.mkdir(parents=True, mode=0o700)
    victims = {kind: here / f"victim-{kind}" for kind in ("lock", "log", "meta.json.tmp")}
    for kind, victim in victims.items():
        victim.write_text("keep me\n")
        (folder / f"s.{kind}").symlink_to(victim)
    for kind in ("lock", "log"):
        message = f".mcp2repl/sessions/s.{kind} is a symbolic link: mcp2repl writes no file through one (remove it)"
        assert cli("--session", "s", "-e", "1", cwd=here) == Run(2, "", f"mcp2repl: error: {message}\n")
        (folder / f"s.{kind}").unlink()
    assert cli("--session", "s", "-e", "1", cwd=here) == Run(0, "1\n", "")
    assert [v.read_text() for v in victims.values()] == ["keep me\n"] * 3


def test_session_x_and_session_x_meta_do_not_collide(here: Path) -> None:
    assert cli("--session", "x", "-e", "globalThis.who = 'x'", cwd=here).code == 0
    assert cli("--session", "x.meta", "-e", "globalThis.who = 'x.meta'", cwd=here) == Run(0, "'x.meta'\n", "")
    assert cli("--session", "x", "-e", "who", cwd=here) == Run(0, "'x'\n", "")
    rows = json.loads(cli("sessions", "--json", cwd=here).out)
    assert [(r["name"], r["state"]) for r in rows] == [("x", "running"), ("x.meta", "running")]
    assert sorted(p.name for p in (here / KERNELS).iterdir()) == ["x.json", "x.meta.json"]


def test_a_planted_gateway_record_is_not_used(tmp_path: Path) -> None:
    from mcp_kernel.client import KernelSession, SessionError

    record = tmp_path / ".mcp2repl" / "sessions" / "g.gateway.json"
    record.parent.mkdir(parents=True, mode=0o700)
    record.write_text(json.dumps({"url": "http://127.0.0.1:9", "kernel_id": "someone-elses"}))  # 0644, as a clone writes it
    with pytest.raises(SessionError) as refused:
        KernelSession("g", cwd=tmp_path, gateway="http://127.0.0.1:9")
    assert str(refused.value) == (
        "session 'g' is untrusted: .mcp2repl/sessions/g.gateway.json has mode 0644, not 0600: others may read or write it. "
        "No code was sent to it: remove that file, or replace it with --restart (KernelSession(..., restart=True))"
    )
