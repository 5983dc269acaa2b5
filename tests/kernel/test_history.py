"""History survives kernel restarts (jupyter console's up-arrow), with tail, range and search."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from conftest import KernelProcess
from jupyter_client.manager import start_new_kernel

from mcp_kernel.kernel.history import History


def test_store_and_query(tmp_path: Path) -> None:
    first = History(tmp_path / "h.sqlite")
    first.store(1, "const a = 1")
    first.store(2, "a + 1", "2")
    second = History(tmp_path / "h.sqlite")
    assert second.session == first.session + 1
    second.store(1, "a + 2")
    assert second.tail(2).result() == [(first.session, 2, "a + 1"), (second.session, 1, "a + 2")]
    assert second.range(-1, 1, None, output=True).result() == [(first.session, 1, ("const a = 1", None)), (first.session, 2, ("a + 1", "2"))]
    assert second.search("a + *", unique=True).result() == [(first.session, 2, "a + 1"), (second.session, 1, "a + 2")]
    assert second.search("a + *", n=1).result() == [(second.session, 1, "a + 2")]


def test_unwritable_history_disables_itself(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    history = History(blocker / "sub" / "h.sqlite")
    history.store(1, "x")
    assert history.tail(5).result() == []


def test_history_across_kernel_restarts(tmp_path: Path) -> None:
    env = {**os.environ, "MCP2REPL_HISTORY": str(tmp_path / "h.sqlite"), "XDG_CONFIG_HOME": str(tmp_path)}
    (tmp_path / "mcp.json").write_text('{"mcpServers": {}}')
    km, kc = start_new_kernel(kernel_name="mcp2repl", cwd=str(tmp_path), env=env)
    kc.execute_interactive("const remembered = 'across restarts'", timeout=30)
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    km, kc = start_new_kernel(kernel_name="mcp2repl", cwd=str(tmp_path), env=env)
    try:
        msg_id = kc.history(hist_access_type="tail", n=1000, raw=True, output=False)
        reply = kc.get_shell_msg(timeout=60)
        while reply["parent_header"]["msg_id"] != msg_id:
            reply = kc.get_shell_msg(timeout=60)
        assert [entry[2] for entry in reply["content"]["history"]] == ["const remembered = 'across restarts'"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_history_file_another_kernel_holds_locked_stops_nothing_else(tmp_path: Path) -> None:
    """Regression: a cell's history was written on the event loop, which waited there for another writer's lock:
    a completion asked meanwhile was answered only once SQLite gave up (5 s), and the cell's entry was lost. Now
    the write waits in the history's thread: the completion is answered, then the entry is written and the reply sent."""
    path = tmp_path / "h.sqlite"
    (tmp_path / "mcp.json").write_text('{"mcpServers": {}}')
    kernel = KernelProcess(tmp_path, MCP2REPL_HISTORY=str(path))
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        assert kernel.value("1") == "1"
        holder.execute("BEGIN IMMEDIATE")  # another kernel writing: this one's store must wait
        cell = kernel.kc.execute("'written later'")
        info = kernel.kc.complete("Mat", 3)
        first = kernel.kc.get_shell_msg(timeout=60)  # waited 60 s for either reply
        holder.execute("COMMIT")
        assert first["parent_header"]["msg_id"] == info, first["msg_type"]
        assert kernel.reply(cell, 60)["status"] == "ok"
        rows = kernel.reply(kernel.kc.history(hist_access_type="tail", n=1), 60)["history"]
        assert [entry[2] for entry in rows] == ["'written later'"]
    finally:
        holder.close()
        kernel.close()
