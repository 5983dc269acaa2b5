"""A session's step lock: one client steps at a time, and a waiting one says whom it waits for.

Every step holds an exclusive ``flock`` on ``NAME.lock`` and, while it holds it, writes into it
who it is (pid, what it runs, since when), so that a second client of a busy session can say
"pid P (mcp2repl --session s) has been running a step since 14:02:11" instead of hanging in
silence. The lock is polled rather than waited for, so a step's timeout covers the wait: at the
timeout the wait ends with :class:`SessionBusy`; without one it goes on, said once after
:data:`NOTICE_AFTER` seconds. The file's modification time is the session's last use.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .trust import open_private

#: Seconds a client waits for a busy session before it says so (once).
NOTICE_AFTER = 2.0
POLL = 0.05


class SessionBusy(TimeoutError):
    """Another client held the session's lock for all of a step's timeout."""


class WaitInterrupted(Exception):
    """The client was interrupted while it waited for a busy session."""


@contextlib.contextmanager
def hold(
    path: Path,
    shown: str,
    name: str,
    *,
    what: str,
    doing: str,
    timeout: float | None,
    notify: Callable[[str], None],
    interrupted: Callable[[], bool] = lambda: False,
    pid: int | None = None,
) -> Iterator[None]:
    """Hold session ``name``'s lock for one step (``doing``: what the holder is doing, in words).

    ``pid``: the process others are told holds it (this one; a step served by the session's kernel
    names its client, cli/stepsocket.py)."""
    fd = open_private(path, os.O_RDWR, shown)
    try:
        _acquire(fd, name, timeout, notify, interrupted)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": pid or os.getpid(), "what": what, "doing": doing, "since": time.time()}).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # a crashed holder's words would outlive its lock; an empty file says nothing
    finally:
        os.close(fd)


def _acquire(fd: int, name: str, timeout: float | None, notify: Callable[[str], None], interrupted: Callable[[], bool]) -> None:
    started = time.monotonic()
    said = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        waited = time.monotonic() - started
        if timeout is not None and waited >= timeout:
            raise SessionBusy(busy(name, fd))
        if interrupted():
            raise WaitInterrupted(busy(name, fd))
        if not said and waited >= NOTICE_AFTER:
            notify(f"{busy(name, fd)}; waiting for it")
            said = True
        time.sleep(POLL)


def busy(name: str, fd: int) -> str:
    """Who holds the lock, from what the holder wrote into it."""
    try:
        held = json.loads(os.pread(fd, 4096, 0) or b"null")
        since = time.strftime("%H:%M:%S", time.localtime(float(held["since"])))
        return f"session {name!r} is busy: pid {int(held['pid'])} ({held['what']}) has been {held['doing']} since {since}"
    except (OSError, ValueError, TypeError, KeyError):
        return f"session {name!r} is busy: another client is running a step"
