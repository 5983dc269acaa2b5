"""``python -S guard.py PARENT_PID`` (command in ``MCP2REPL_GUARD_ARGV``): a stdio server that dies with us.

Stdio servers run in their own session so an interrupt (SIGINT to the kernel's process group)
never reaches them. The price: nothing takes them down when the kernel dies, and servers written
by others ignore SIGTERM, ignore stdin's end, or leave children behind (``npx`` wrappers, worker
pools, a daemon that double-forks into its own session). So this small supervisor stays alive
between the kernel and the server:

* it is a *child subreaper*, so every descendant of the server stays in its subtree even when
  intermediate parents die (a ``setsid`` grandchild is re-parented here, not to init);
* it asks for SIGHUP when the kernel dies (``PR_SET_PDEATHSIG``), handles it, and the server
  itself gets SIGKILL should the guard ever die first;
* the server inherits stdin/stdout/stderr and runs in its own process group; the guard keeps
  neither pipe, so the kernel sees end-of-file as soon as the server's tree is gone;
* on SIGTERM, on the kernel's death and when the server exits, it ends every descendant
  (SIGTERM, then SIGKILL after :data:`GRACE` seconds) and exits with the server's status; when
  the kernel is gone, the server first gets :data:`LEFT_GRACE` seconds to exit by itself (its
  stdin ended with the kernel: a kernel that shuts down closes it and does not wait)
  (a server killed by a signal makes the guard die of the same signal).

The command comes in an environment variable, not argv, so ``ps`` shows the server's command
line once, on the server; it is written as ``LENGTH:ARG`` for each argument (:func:`encode_argv`,
so that no JSON parser is imported). On Linux one supervisor per kernel does this job for all its
servers (supervisor.py), so the guard runs elsewhere: there it polls for the kernel's death and
kills the server's process group (it still works on Linux, and its tests run there). Each server has a guard, so what it imports counts per server: only
``os``, ``sys``, ``time``, ``_signal``, ``ctypes`` and the process table (proctable.py), and it starts with ``-S`` (9.7 MB RSS, 10.8
with ``json`` and ``signal``).
"""

from __future__ import annotations

import _signal as signal  # signal without its enum wrappers (enum and, with json, re: ~1.2 MB of each guard)
import os
import sys
import time

if __package__:  # imported by the kernel (spawn.py)
    from .proctable import below, processes
else:  # run as a script: its folder is on sys.path (it runs without -I)
    from proctable import below, processes

ARGV_VAR = "MCP2REPL_GUARD_ARGV"
#: Seconds between SIGTERM and SIGKILL for the server's tree.
GRACE = float(os.environ.get("MCP2REPL_KILL_GRACE", "1.0"))
#: Seconds a server gets to exit by itself once the kernel is gone (its stdin ended with the kernel)
#: before its tree is ended: a kernel that leaves only closes the pipes (spawn.stop), and a Python
#: server takes seconds to exit on a busy machine. Nobody waits for this.
LEFT_GRACE = float(os.environ.get("MCP2REPL_LEFT_GRACE", "5.0"))
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
LINUX = sys.platform.startswith("linux")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
#: The death signal asked for: not SIGTERM (the kernel's own "stop now"), so the guard tells the two
#: apart. It comes as the kernel exits, even while the kernel's process still exists (Linux sends it
#: when the thread that started us ends, and a process's threads end one by one).
KERNEL_GONE = signal.SIGHUP


def encode_argv(argv: list[str]) -> str:
    """The command as :data:`ARGV_VAR` holds it: ``LENGTH:ARG`` for each argument (any text, no separator to escape)."""
    return "".join(f"{len(arg)}:{arg}" for arg in argv)


def decode_argv(text: str) -> list[str] | None:
    """The command :func:`encode_argv` wrote; None for anything else (then the usage is printed)."""
    argv, at = [], 0
    while at < len(text):
        colon = text.find(":", at)
        if colon <= at or not (text[at:colon].isascii() and text[at:colon].isdigit()):
            return None
        end = colon + 1 + int(text[at:colon])
        if end > len(text):
            return None
        argv.append(text[colon + 1 : end])
        at = end
    return argv or None


class _Stop(Exception):
    """Raised by the signal handler to leave a blocking wait."""


def descendants(root: int) -> list[int]:
    """Every live descendant of ``root`` (Linux: one pass over /proc; elsewhere: none known)."""
    return sorted(below([root], processes()[0]) - {root})


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _reap() -> list[tuple[int, int]]:
    """Collect every exited child without blocking (orphans re-parented here included)."""
    done = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def kill_tree(server: int, grace: float = GRACE, reaped: bool = False) -> int | None:
    """SIGTERM the server's group and every descendant, SIGKILL what is left after ``grace``.

    Returns the server's wait status if it was reaped here. Once the server is reaped its group is
    signalled no more: an empty group's number is free for another program's group, and the
    server's descendants are reached through the subtree anyway (we are their subreaper).
    """
    status = None
    me = os.getpid()
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        if not reaped or not LINUX:
            try:
                os.killpg(server, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait
        while True:
            # a process that forks while we signal shows up in the next pass
            _signal_all(descendants(me), sig)
            for pid, st in _reap():
                if pid == server:
                    status, reaped = st, True
            if not descendants(me) and (LINUX or status is not None):
                return status
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
    return status


_libc: object = None


def _prctl(option: int, value: int) -> bool:
    global _libc
    try:
        if _libc is None:
            import ctypes

            _libc = ctypes.CDLL(None, use_errno=True)
        return int(_libc.prctl(option, value, 0, 0, 0)) == 0  # type: ignore[attr-defined]
    except (OSError, AttributeError):
        return False


def _spawn(command: list[str], env: dict[str, str]) -> int:
    """Fork and exec the server in its own process group; an exec failure exits 127 with a message."""
    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, False)
    pid = os.fork()
    if pid == 0:  # the child: only async-signal-safe-ish steps until exec
        try:
            os.close(read_end)
            os.setpgid(0, 0)
            for sig in (*STOP_SIGNALS, signal.SIGCHLD):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            if LINUX:
                _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # should the guard itself be SIGKILLed
            os.execvpe(command[0], command, env)
        except OSError as exc:
            os.write(write_end, (exc.strerror or str(exc)).encode())
        finally:
            os._exit(127)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        failure = fh.read()  # empty once exec succeeded (the pipe is close-on-exec)
    if failure:
        os.waitpid(pid, 0)
        sys.stderr.write(f"cannot start {command[0]!r}: {failure.decode(errors='replace')}\n")
        sys.stderr.flush()
        raise SystemExit(127)
    return pid


def _exit_within(server: int, seconds: float) -> int | None:
    """The server's wait status if it exits within ``seconds`` (orphans are reaped meanwhile), else None."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for pid, st in _reap():
            if pid == server:
                return st
        time.sleep(0.02)
    return None


def _exit_like(status: int | None) -> None:
    """Exit with the server's status; a server killed by a signal: die of the same signal."""
    if status is None:
        os._exit(1)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if LINUX:
            _prctl(PR_SET_DUMPABLE, 0)  # no core file of the guard for a SIGSEGV'd server
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # their disposition cannot be set
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        try:
            os.kill(os.getpid(), sig)
        except OSError:
            pass
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


def main(argv: list[str]) -> None:
    command = decode_argv(os.environ.pop(ARGV_VAR, ""))
    if len(argv) != 1 or not argv[0].isdigit() or not command or not command[0]:
        sys.stderr.write(f"usage: {ARGV_VAR}=LENGTH:COMMAND[LENGTH:ARG...] python -S guard.py PARENT_PID\n")
        raise SystemExit(2)
    parent = int(argv[0])
    stopping: list[int] = []

    waiting = [False]  # in the wait for the server: only there may a signal interrupt us

    def stop(sig: int, frame: object) -> None:
        stopping.append(sig)
        if waiting[0]:  # elsewhere it is only recorded: raised in the clean-up (a second signal, or one after
            waiting[0] = False  # the server's exit), it killed the guard, and the server's tree outlived it
            raise _Stop

    for sig in STOP_SIGNALS:
        signal.signal(sig, stop)
    if LINUX:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, KERNEL_GONE)
    if os.getppid() != parent:  # the kernel died before the death signal was armed
        raise SystemExit(1)
    # a stop signal during the spawn waits until the server's pid is known
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    server = _spawn(command, dict(os.environ))
    # the server has the pipes now; keeping them here would delay the kernel's end-of-file
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    status = None
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        while status is None and not stopping:
            waiting[0] = True
            if stopping:  # came just before the flag
                break
            if LINUX:
                pid, st = os.waitpid(-1, 0)  # orphans re-parented here are reaped too
            else:
                pid, st = os.waitpid(server, os.WNOHANG)
                if pid == 0:
                    if os.getppid() != parent:
                        break
                    time.sleep(0.2)
                    continue
            if pid == server:
                status = st
    except (_Stop, ChildProcessError):
        pass
    finally:
        waiting[0] = False
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)  # finish the clean-up whatever arrives now
    if status is None and (os.getppid() != parent or stopping[:1] == [KERNEL_GONE]):  # the kernel is leaving: its stdin ends
        status = _exit_within(server, LEFT_GRACE)
    left = kill_tree(server, reaped=status is not None)
    _exit_like(status if status is not None else left)

if __name__ == "__main__":
    main(sys.argv[1:])
