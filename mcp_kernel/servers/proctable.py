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



def processes() -> tuple[dict[int, list[int]], dict[int, int]]:
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


def marked_by(pid: int, me: int) -> int | None:
    """The server whose :data:`MARK` the environment of ``pid`` carries (from this supervisor), if any."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = fh.read()
    except OSError:
        return None
    prefix = b"%s=%d:" % (MARK.encode(), me)
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix) and entry[len(prefix) :].isdigit():
            return int(entry[len(prefix) :])
    return None


def carrying(mark: bytes) -> list[int]:
    """Every process whose environment holds ``mark`` (``NAME=VALUE``) exactly."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    if mark in fh.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                continue
    return found
