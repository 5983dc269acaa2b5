"""The process table as the supervisor reads it from /proc: children, sessions, and whose mark a process carries.

Imported by supervisor.py and guard.py, run as scripts (so: the standard library's ``os`` only), and
by the kernel's side (supervised.py, spawn.py), which ends a server's processes itself when its
supervisor or guard is stuck. Linux only (elsewhere: an empty table).
"""

from __future__ import annotations

import os

#: Set in each server's environment as ``SUPERVISOR_PID:SERVER_PID``: its descendants inherit it, so
#: one that left the server's session and lost its parent is still known as that server's.
MARK = "MCP2REPL_SUPERVISED"
#: What :func:`processes` reads: the children of each process, and the session of each.
Table = tuple[dict[int, list[int]], dict[int, int]]


def processes() -> Table:
    """Every live process, from one pass over /proc: the children of each, and the session of each."""
    children: dict[int, list[int]] = {}
    sessions: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return children, sessions
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # the command name may hold spaces and ")"
        if len(fields) > 3 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
            sessions[int(entry)] = int(fields[3])
    return children, sessions


def below(roots: list[int], children: dict[int, list[int]], spared: set[int] = set()) -> set[int]:  # noqa: B006 - never changed
    """``roots`` and all their descendants, but not ``spared`` nor what is below them."""
    found: set[int] = set()
    todo = [r for r in roots if r not in spared]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(c for c in children.get(pid, ()) if c not in spared)
    return found


def environ(pid: int) -> list[bytes]:
    """The ``NAME=VALUE`` entries of the environment ``pid`` started with (none: gone, or not ours to read)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return fh.read().split(b"\0")
    except OSError:
        return []


def marked_by(pid: int, me: int) -> int | None:
    """The server whose :data:`MARK` the environment of ``pid`` carries (from this supervisor), if any."""
    prefix = b"%s=%d:" % (MARK.encode(), me)
    for entry in environ(pid):
        if entry.startswith(prefix) and entry[len(prefix) :].isdigit():
            return int(entry[len(prefix) :])
    return None


def carrying(mark: bytes) -> list[int]:
    """Every process whose environment holds ``mark`` (``NAME=VALUE``) exactly."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    return [int(entry) for entry in entries if entry.isdigit() and mark in environ(int(entry))]
