"""This process's folder in the per-user state folder: server logs and the last words of a crash.

A kernel can die for reasons outside its control: V8 aborting the process, a segfault in a native
library, the system's out-of-memory killer. The client then only sees "kernel died". So every
process that hosts sessions keeps a folder, ``runs/<pid>-<time>``, in
``$MCP2REPL_STATE_DIR`` (default ``$XDG_STATE_HOME/mcp2repl``, i.e. ``~/.local/state/mcp2repl``):

* ``run.json``: who it is (pid, start, cwd, which kernel) and the cell it is running, rewritten at
  each cell start;
* ``faults.txt``: Python's fault handler writes the threads' stacks there on a fatal signal;
* ``stderr.txt``: the tail of the process's stderr, kept by watcher processes that outlive it
  (``tee -p | tail -c``, or crashtail.py where that ``tee`` is missing): V8 prints "Fatal
  JavaScript out of memory" to stderr and aborts, and only a reader outside the process is sure to
  see it;
* ``servers-N/``: each session's server logs.

A clean exit removes the folder. The next start finds folders whose owner is gone (the owner holds a
lock for its whole life), reports the one that matches it, and keeps at most ``KEEP`` of them for
``KEEP_DAYS`` days. This module imports only the standard library and crashtail.py (the watcher's script).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import crashtail
from .crashtail import RECORD

KEEP = 20
KEEP_DAYS = 7
CODE_SHOWN = 120


def state_dir() -> Path:
    """The per-user folder (created owner-only)."""
    explicit = os.environ.get("MCP2REPL_STATE_DIR")
    if explicit:
        root = Path(explicit)
    else:
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        root = Path(base) / "mcp2repl"
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    return root


class RunDir:
    """The folder of this process; :func:`current` makes it on first use."""

    def __init__(self, root: Path) -> None:
        runs = root / "runs"
        runs.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = runs / f"{os.getpid()}-{time.strftime('%Y%m%dT%H%M%S')}"
        self.path.mkdir(mode=0o700, exist_ok=True)
        # held until the process ends, however it ends: a folder whose lock is free has no owner
        self._lock = open(self.path / "lock", "w")
        _try_lock(self._lock.fileno())
        self._record: dict[str, Any] = {"pid": os.getpid(), "started": time.time(), "cwd": os.getcwd(), "who": "", "cell": None}
        self._fd = os.open(self.path / RECORD, os.O_RDWR | os.O_CREAT, 0o600)
        self._written = 0
        self._write()
        self._sessions = 0
        self.faults: Any = None
        atexit.register(self.remove)

    def server_logs(self) -> Path:
        """A fresh folder for one session's server logs."""
        self._sessions += 1
        path = self.path / f"servers-{self._sessions}"
        path.mkdir(mode=0o700, exist_ok=True)
        return path

    def record_owner(self, who: str) -> None:
        """Name what runs here (a connection file, a session name): the next start of it reads our last words."""
        self._record["who"] = who
        self._write()

    def record_cell(self, cell: str, code: str) -> None:
        """Note the cell about to run (a small write per cell)."""
        first = code.strip().splitlines()[0] if code.strip() else ""
        shown = first[:CODE_SHOWN] + ("…" if len(first) > CODE_SHOWN or "\n" in code.strip() else "")
        self._record["cell"] = {"name": cell, "code": shown, "at": time.time(), "running": True}
        self._write()

    def record_idle(self) -> None:
        cell = self._record["cell"]
        if cell is not None:
            cell["running"] = False
            self._write()

    def watch_crashes(self) -> None:
        """Keep fault stacks and the stderr tail in this folder (process-wide: for a kernel or daemon, not a library user)."""
        import faulthandler

        self.faults = open(self.path / "faults.txt", "w")
        faulthandler.enable(self.faults, all_threads=True)
        if os.name != "posix":
            return
        read_end, write_end = os.pipe()
        try:
            if not self._tee_and_tail(read_end):
                subprocess.Popen(
                    [sys.executable, "-S", "-I", crashtail.__file__, str(self.path)],
                    stdin=read_end,
                    stdout=2,  # the real stderr, before it becomes the pipe
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # an interrupt to our process group must not stop it
                )
        except OSError:
            os.close(write_end)
            return
        finally:
            os.close(read_end)
        sys.stderr.flush()
        os.dup2(write_end, 2)
        os.close(write_end)

    def _tee_and_tail(self, stdin: int) -> bool:
        """The watcher as ``tee -p | tail -c``: 3.6 MB of RSS for the two, against 8.4 for crashtail.py.

        ``tee`` passes our stderr through to the real one and copies it into a pipe; ``tail`` keeps
        the last :data:`crashtail.TAIL_BYTES` of that and writes them to ``stderr.txt`` once the pipe
        ends. ``tail`` holds our lock too, so the folder only counts as dead (:func:`_is_dead`) once
        the tail is written. ``-p`` makes ``tee`` go on when the real stderr is gone (a closed
        terminal), as crashtail does; only GNU's and uutils' ``tee`` take it. False when the tools
        are missing or another ``tee``: the caller starts crashtail.py instead.
        """
        tee, tail = shutil.which("tee"), shutil.which("tail")
        if not (tee and tail) or not sys.platform.startswith("linux"):
            return False
        null = subprocess.DEVNULL
        try:
            if subprocess.run([tee, "-p", os.devnull], stdin=null, stdout=null, stderr=null, timeout=10).returncode != 0:
                return False
        except (OSError, subprocess.SubprocessError):
            return False
        into_tail, from_tee = os.pipe()
        try:
            with open(self.path / "stderr.txt", "wb") as kept:
                keep = [tail, "-c", str(crashtail.TAIL_BYTES)]
                subprocess.Popen(keep, stdin=into_tail, stdout=kept, stderr=null, pass_fds=(self._lock.fileno(),), start_new_session=True)
            # tee opens its file argument: /dev/fd/N reopens the pipe it inherits as fd N
            subprocess.Popen([tee, "-p", f"/dev/fd/{from_tee}"], stdin=stdin, stdout=2, stderr=null, pass_fds=(from_tee,), start_new_session=True)
        except OSError:
            return False  # a tail already started sees its pipe end and exits
        finally:
            os.close(into_tail)
            os.close(from_tee)
        return True

    def remove(self) -> None:
        """A clean exit: nothing to report."""
        if self.faults is not None:
            import faulthandler

            faulthandler.disable()
            self.faults.close()
            self.faults = None
        shutil.rmtree(self.path, ignore_errors=True)

    def _write(self) -> None:
        """Rewrite the record in place with one ``pwrite``: it runs twice per cell, so no open, rename or fsync.

        A process that dies is never half-way through a system call, so the file always holds a whole
        record; a shorter one is padded with spaces (JSON ignores them) instead of truncating.
        """
        data = json.dumps(self._record).encode()
        try:
            os.pwrite(self._fd, data.ljust(self._written), 0)
        except OSError:
            return
        self._written = max(self._written, len(data))


_current: RunDir | None = None


def current() -> RunDir:
    global _current
    if _current is None:
        _current = RunDir(state_dir())
    return _current


def previous_end(who: str) -> list[str]:
    """Lines about the last unclean end of ``who`` (reported once), after pruning old folders."""
    try:
        runs = state_dir() / "runs"
        dead = sorted((p for p in runs.iterdir() if p.is_dir() and _is_dead(p)), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    lines: list[str] = []
    for path in dead:
        record = _read_record(path)
        if not lines and record and record.get("who") == who and not (path / "reported").exists():
            lines = describe(path, record)
            with contextlib.suppress(OSError):
                (path / "reported").touch()
    cutoff = time.time() - KEEP_DAYS * 86400
    for index, path in enumerate(dead):
        with contextlib.suppress(OSError):
            if index >= KEEP or path.stat().st_mtime < cutoff:
                shutil.rmtree(path, ignore_errors=True)
    return lines


def describe(path: Path, record: dict[str, Any]) -> list[str]:
    """What the folder of a dead process says about its end."""
    started = time.strftime("%H:%M:%S", time.localtime(record.get("started", 0)))
    head = f"The previous run (pid {record.get('pid')}, started {started}) ended without shutting down"
    cell = record.get("cell")
    if isinstance(cell, dict):
        at = time.strftime("%H:%M:%S", time.localtime(cell.get("at", 0)))
        doing = "while running" if cell.get("running") else "while idle; its last cell was"
        head += f" {doing} {cell.get('name')} (started {at}): {cell.get('code')}"
    lines = [head + "."]
    words = _last_words(path)
    if words:
        lines.append("Its last words:")
        lines += [f"  {line}" for line in words]
    else:
        lines.append("It left no last words: something outside it killed it (the system's out-of-memory killer, or a client restart).")
    lines.append(f"Its logs: {path}")
    return lines


def _last_words(path: Path) -> list[str]:
    words: list[str] = []
    with contextlib.suppress(OSError):
        tail = (path / "stderr.txt").read_text(encoding="utf-8", errors="replace")
        words += [line.strip()[:300] for line in tail.splitlines() if line.strip()][-6:]
    with contextlib.suppress(OSError):
        faults = (path / "faults.txt").read_text(encoding="utf-8", errors="replace").splitlines()
        if faults:
            words.append(faults[0].strip()[:300])  # "Fatal Python error: Aborted" / "Segmentation fault"
    return words


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # not POSIX: no ownership test, folders only age out
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def _is_dead(path: Path) -> bool:
    try:
        fd = os.open(path / "lock", os.O_RDWR)
    except OSError:
        return False  # being created
    try:
        return _try_lock(fd)
    finally:
        os.close(fd)  # closing releases a lock taken here
