"""A named session's processes and their memory, found generically (issue 28's memory rows).

The session's helper processes (the run-folder watcher: tee and tail; the servers' supervisor) were reshaped
while this bench measured them, so none is looked up by name: a helper is every descendant of the
kernel that is not an MCP server's own command (nor a process that server started). RSS is what
the issue's targets are stated in; PSS (resident pages shared by k processes count 1/k in each)
is what many sessions really cost the machine together, since the same interpreter and libraries
are mapped in every one of them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
from harness import Server

MB = 2**20
#: where a named session records its kernel's pid (mcp_kernel/client/registry.py's FOLDER)
SESSIONS = Path(".mcp2repl") / "sessions"


def kernel_pid(cwd: Path, name: str) -> int:
    """The pid of session ``name``'s kernel, from the record ``mcp2repl --session`` writes beside it."""
    return int(json.loads((cwd / SESSIONS / f"{name}.meta.json").read_text())["pid"])


def _is_server(proc: psutil.Process, servers: list[Server]) -> bool:
    """Whether ``proc`` is one of ``servers``' own commands (its arguments end the command line;
    the program may be resolved or reached through a shebang, so its name is compared loosely)."""
    try:
        cmd = proc.cmdline()
    except psutil.Error:
        return False
    for s in servers:
        names = {os.path.basename(s.command), os.path.basename(os.path.realpath(s.command))}
        if s.args and cmd[-len(s.args) :] == s.args and any(os.path.basename(c) in names for c in cmd[: len(cmd) - len(s.args)]):
            return True
        if not s.args and any(os.path.basename(c) in names for c in cmd):
            return True
    return False


def label(proc: psutil.Process) -> str:
    """A short name for a process: its script's file name, ``-m`` module, or program."""
    try:
        cmd = proc.cmdline()
    except psutil.Error:
        return "?"
    for i, arg in enumerate(cmd):
        if arg == "-m" and i + 1 < len(cmd):
            return cmd[i + 1]
        if i and arg.endswith((".py", ".js", ".mjs")):
            return os.path.basename(arg)
    return os.path.basename(cmd[0]) if cmd else "?"


@dataclass
class Usage:
    """One process's memory, in bytes."""

    pid: int
    label: str
    rss: int
    pss: int
    uss: int
    #: anonymous resident memory (``RssAnon``): the process's own data, without the library pages in its RSS
    anon: int = 0

    def mb(self) -> dict[str, Any]:
        return {
            "pid": self.pid, "label": self.label, "rss_mb": round(self.rss / MB, 2), "pss_mb": round(self.pss / MB, 2),
            "uss_mb": round(self.uss / MB, 2), "anon_mb": round(self.anon / MB, 2),
        }


def usage(proc: psutil.Process) -> Usage:
    """RSS, PSS, USS and anonymous memory (0 where the system does not say)."""
    try:
        full = proc.memory_full_info()
        return Usage(proc.pid, label(proc), full.rss, getattr(full, "pss", 0), getattr(full, "uss", 0), _rss_anon(proc.pid))
    except psutil.AccessDenied:
        return Usage(proc.pid, label(proc), proc.memory_info().rss, 0, 0)


def _rss_anon(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass
class Tree:
    """A session kernel's processes: the kernel, its helpers, and its servers (with their children)."""

    kernel: Usage
    helpers: list[Usage]
    servers: list[Usage]

    def total_pss(self) -> int:
        return self.kernel.pss + sum(u.pss for u in self.helpers) + sum(u.pss for u in self.servers)

    def as_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel.mb(), "helpers": [u.mb() for u in self.helpers], "servers": [u.mb() for u in self.servers]}


def tree(pid: int, servers: list[Server]) -> Tree:
    """The kernel ``pid``'s processes now: a server's descendants count as that server's."""
    kernel = psutil.Process(pid)
    children = kernel.children(recursive=True)
    # The deepest process that runs a server's command is the server: a supervisor given that
    # command line to run (a guard) is a helper above it.
    matches = {c.pid: c for c in children if _is_server(c, servers)}
    server_side: set[int] = set()
    for pid, proc in matches.items():
        below = _descendants(proc)
        if not any(c.pid in matches for c in below):
            server_side |= {pid, *(c.pid for c in below)}
    used = {c.pid: u for c in children if (u := _usage_or_none(c))}
    return Tree(
        usage(kernel),
        [u for p, u in used.items() if p not in server_side],
        [u for p, u in used.items() if p in server_side],
    )


def _descendants(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return proc.children(recursive=True)
    except psutil.Error:
        return []


def _usage_or_none(proc: psutil.Process) -> Usage | None:
    try:
        return usage(proc)
    except psutil.Error:  # ended while we looked
        return None


def meminfo() -> dict[str, int]:
    """/proc/meminfo's MemTotal and MemAvailable, in bytes (psutil's figures where there is none)."""
    try:
        fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines() if ":" in line)
        return {k: int(fields[k].split()[0]) * 1024 for k in ("MemTotal", "MemAvailable")}
    except (OSError, KeyError, ValueError):
        vm = psutil.virtual_memory()
        return {"MemTotal": vm.total, "MemAvailable": vm.available}
