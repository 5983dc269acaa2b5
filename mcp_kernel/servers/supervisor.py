"""``python -S -I supervisor.py``: one process under a kernel that starts, watches and ends all its stdio servers.

Servers run in their own session, so an interrupt to the kernel's process group never reaches
them; then nothing takes them down when the kernel dies, and servers written by others ignore
SIGTERM and stdin's end, or leave children behind (``npx`` wrappers, worker pools, daemons that
double-fork). A guard per server (guard.py, still used off Linux) cost 9.7 MB of RSS each; this
process does the job for all of a kernel's servers. It is a *child subreaper*, so a server's
descendants stay below it when their parents die; a server starts in a session of its own with
SIGKILL as its parent-death signal; what a server leaves behind when it ends is ended too (its
session, and the orphans here that carry its :data:`MARK`; unmarked ones once the kernel is gone);
once the kernel lets go of a server (its socket ends) the server gets :data:`LEFT_GRACE` seconds
to exit by itself. The protocol with the kernel is in supervised.py. One ``poll`` loop, never
blocked on the kernel nor on a server's exec; it imports only ``os``, ``sys``, ``time``,
``_signal``, ``_socket``, ``select`` and ``ctypes`` (for ``prctl``).
"""

from __future__ import annotations

import _signal as signal
import _socket as socket
import os
import select
import sys
import time

if __package__:  # imported by the kernel, for its constants and decode()
    from .proctable import MARK, Table, below, marked_by, processes
else:  # run as a script: -I keeps this folder off sys.path, and it goes last (no module here shadows one of the stdlib)
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    from proctable import MARK, Table, below, marked_by, processes


def _seconds(text: str | None, default: float) -> float:
    try:
        return max(0.0, float(text)) if text is not None else default
    except ValueError:
        return default


#: Seconds between SIGTERM and SIGKILL for a tree being ended (a server's own environment may set its own).
GRACE = _seconds(os.environ.get("MCP2REPL_KILL_GRACE"), 1.0)
#: Seconds a server gets to exit by itself once the kernel let go of it, before its tree is ended.
LEFT_GRACE = _seconds(os.environ.get("MCP2REPL_LEFT_GRACE"), 5.0)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
TICK = 0.02  # s between passes over a tree being ended
#: File descriptors one start request brings: stdin's read end, stdout's write end, the log, the control socket.
FDS = 4


def prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        return int(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def decode(data: bytes) -> list[str] | None:
    """The items of a start request's body (``LENGTH:ITEM`` pieces, supervised.encode); None for anything else."""
    items, at = [], 0
    while at < len(data):
        colon = data.find(b":", at)
        if colon <= at or not data[at:colon].isdigit():
            return None
        end = colon + 1 + int(data[at:colon])
        if end > len(data):
            return None
        items.append(data[colon + 1 : end].decode("utf-8", "surrogateescape"))
        at = end
    return items


class Server:
    """One server: its control socket, its fds until it starts, then its pid, exit status and ending."""

    def __init__(self, control: socket.socket, fds: list[int]) -> None:
        self.control = control
        self.fds = fds  # stdin, stdout, log: handed to the server, then closed here
        self.request = b""
        self.pid = 0
        self.status: int | None = None  # wait status, once reaped
        self.ending_since: float | None = None  # SIGTERM sent at; SIGKILL follows GRACE later
        self.killed = False
        self.left_at: float | None = None  # the kernel let go at: it is ended LEFT_GRACE later
        self.grace, self.left_grace = GRACE, LEFT_GRACE  # a server's own environment may set both
        self.exec_pipe, self.failure = -1, b""  # until its exec is done: why it failed

    def say(self, text: bytes) -> None:
        try:
            self.control.send(text)
        except OSError:
            pass  # the kernel let go of it


class Supervisor:
    def __init__(self, kernel: socket.socket) -> None:
        self.me = os.getpid()
        self.kernel: socket.socket | None = kernel
        self.servers: dict[int, Server] = {}  # by control socket fd
        self.execs: dict[int, Server] = {}  # by exec pipe fd, until the exec is done
        self.reserve: list[int] = []  # fds kept free for a request's own: out of fds, the start fails and says so
        self.poll = select.poll()
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wake-up fd hears of it
        self.stop_now = False  # SIGTERM or SIGINT: end every tree now
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: setattr(self, "stop_now", True))
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        self.poll.register(kernel.fileno(), select.POLLIN)
        self.poll.register(self.wake_r, select.POLLIN)
        self.keep_reserve()

    # ---- requests ---------------------------------------------------------------------------

    def accept(self) -> None:
        """A start request on the kernel's socket: one byte with the fds; the command follows on the control socket."""
        assert self.kernel is not None
        while self.reserve:
            os.close(self.reserve.pop())
        try:
            data, ancillary, _flags, _addr = self.kernel.recvmsg(1, socket.CMSG_SPACE(FDS * 4))
        except BlockingIOError:
            return
        except OSError:
            data, ancillary = b"", []
        finally:
            self.keep_reserve()
        fds = [int.from_bytes(d[i : i + 4], sys.byteorder) for _l, _t, d in ancillary for i in range(0, len(d) - len(d) % 4, 4)]
        if not data or len(fds) != FDS:
            for fd in fds:
                os.close(fd)
            if not data:
                self.kernel_gone()
            return
        control = socket.socket(fileno=fds[3])
        control.setblocking(False)
        self.servers[control.fileno()] = Server(control, fds[:3])
        self.poll.register(control.fileno(), select.POLLIN)

    def keep_reserve(self) -> None:
        try:
            while len(self.reserve) < FDS:
                self.reserve.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass  # out of fds already: the next request may lose its own (the kernel waits for an answer in vain)

    def kernel_gone(self) -> None:
        if self.kernel is not None:
            self.poll.unregister(self.kernel.fileno())
            self.kernel.close()
            self.kernel = None
        for server in self.servers.values():
            server.left_at = server.left_at or time.monotonic()

    def control(self, fd: int) -> None:
        server = self.servers[fd]
        try:
            data = server.control.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the kernel dropped this server: as if it had left
            self.poll.unregister(fd)
            if server.pid == 0:
                self.forget(server)
            elif server.left_at is None:
                server.left_at = time.monotonic()
            return
        if server.pid == 0:  # the request: LENGTH:BODY
            server.request += data
            head, colon, body = server.request.partition(b":")
            if len(head) > 20 or (colon and not head.isdigit()):
                self.forget(server)
            elif colon and len(body) >= int(head):
                self.start(server, body[: int(head)])
            return
        if b"K" in data:
            server.killed = True
            self.end(server)
        elif b"T" in data:
            self.end(server)

    def start(self, server: Server, request: bytes) -> None:
        """Fork and exec the server in its own session; ``P<pid>`` at once, the exec's outcome comes on a pipe."""
        items = decode(request)
        if not items or len(items) < 3 or not items[1].isdigit() or int(items[1]) < 1 or len(items) < 2 + int(items[1]):
            self.forget(server)
            return
        cwd, count = items[0], int(items[1])
        command = items[2 : 2 + count]
        env = dict(item.split("=", 1) for item in items[2 + count :] if "=" in item)
        server.grace = _seconds(env.get("MCP2REPL_KILL_GRACE"), GRACE)
        server.left_grace = _seconds(env.get("MCP2REPL_LEFT_GRACE"), LEFT_GRACE)
        try:
            read_end, write_end = os.pipe()  # close-on-exec: it ends, empty, once exec succeeded
            try:
                pid = os.fork()
            except OSError:
                os.close(read_end)
                os.close(write_end)
                raise
        except OSError as exc:  # out of fds or processes: this server fails, the others go on
            server.say(f"Fcannot start {command[0]!r}: {exc.strerror or exc}\n".encode(errors="replace"))
            self.forget(server)
            return
        if pid == 0:  # the child: only a few steps until exec
            try:
                os.close(read_end)
                os.setsid()
                for target, fd in enumerate(server.fds):
                    os.dup2(fd, target)
                os.closerange(3, write_end)
                os.closerange(write_end + 1, 1 << 16)
                for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
                signal.set_wakeup_fd(-1)
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # should this process ever die first
                if os.getppid() != self.me:  # it died before the signal was armed
                    os._exit(1)
                if cwd:
                    os.chdir(cwd)
                env[MARK] = f"{self.me}:{os.getpid()}"
                os.execvpe(command[0], command, env)
            except Exception as exc:  # noqa: BLE001 - whatever stops the exec is the server's failure
                where = f" (working folder {cwd!r})" if cwd and getattr(exc, "filename", None) == cwd else ""
                os.write(write_end, f"cannot start {command[0]!r}: {getattr(exc, 'strerror', None) or exc}{where}\n".encode(errors="replace"))
            finally:
                os._exit(127)
        os.close(write_end)
        os.set_blocking(read_end, False)
        server.pid, server.exec_pipe = pid, read_end
        self.execs[read_end] = server
        self.poll.register(read_end, select.POLLIN)
        server.say(b"P%d\n" % pid)

    def exec_heard(self, server: Server) -> None:
        """The exec pipe of ``server`` is readable: a failure's message, or its end (the exec is done)."""
        try:
            while chunk := os.read(server.exec_pipe, 4096):
                server.failure += chunk
        except BlockingIOError:
            return
        except OSError:
            pass
        del self.execs[server.exec_pipe]
        self.poll.unregister(server.exec_pipe)
        os.close(server.exec_pipe)
        server.exec_pipe = -1
        if server.failure:
            try:
                os.write(server.fds[2], server.failure)
            except OSError:
                pass
        for fd in server.fds:  # the server holds its pipes now: the kernel sees their end with it
            os.close(fd)
        server.fds = []

    def forget(self, server: Server) -> None:
        if server.exec_pipe >= 0:
            self.exec_heard(server)  # (the child is gone: its pipe has ended)
        for fd in server.fds:
            os.close(fd)
        server.fds = []
        if self.servers.pop(server.control.fileno(), None) is not None:
            try:
                self.poll.unregister(server.control.fileno())
            except KeyError:
                pass  # unregistered at its end of file
        server.control.close()

    # ---- ends -------------------------------------------------------------------------------

    def end(self, server: Server) -> None:
        if server.pid and server.ending_since is None:
            server.ending_since = time.monotonic()
            self.signal_tree(server)

    def reap(self) -> None:
        """Collect every exited child (orphans re-parented here too); a server that exited is ended."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            for server in self.servers.values():
                if server.pid == pid and server.status is None:
                    server.status = status
                    self.end(server)  # what it left behind

    def tree(self, server: Server, table: Table | None = None) -> set[int]:
        """What ending ``server`` reaches: its descendants, its session, and the orphans here that are its own.

        An orphan (a process re-parented here) is the server's if it is in the server's session, or
        if its environment carries the server's :data:`MARK`; one that carries no mark is ended only
        once the kernel is gone (it may belong to a server still running). ``table``: processes(), if read already.
        """
        children, sessions = table or processes()
        running = {s.pid for s in self.servers.values() if s.pid and s.status is None and s is not server}
        ours = below([self.me], children) - {self.me}
        roots = [p for p in ours if (p == server.pid and server.status is None) or sessions[p] == server.pid]
        for pid in children.get(self.me, ()):
            if pid == server.pid or sessions[pid] in running:
                continue
            owner = marked_by(pid, self.me)
            if owner == server.pid or (owner is not None and owner not in running) or (owner is None and self.kernel is None):
                roots.append(pid)
        return below(roots, children, running)

    def signal_tree(self, server: Server, table: Table | None = None) -> set[int]:
        now = time.monotonic()
        assert server.ending_since is not None
        if server.killed or now - server.ending_since >= server.grace:
            server.killed = True
        sig = signal.SIGKILL if server.killed else signal.SIGTERM
        targets = self.tree(server, table)
        for pid in targets:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        return targets

    def tick(self) -> None:
        """Timers: servers the kernel let go of, trees being ended; a server whose tree is gone is reported."""
        now = time.monotonic()
        for server in list(self.servers.values()):
            if server.left_at is not None and server.ending_since is None and now - server.left_at >= server.left_grace:
                self.end(server)
        ending = [s for s in self.servers.values() if s.ending_since is not None]
        if not ending:
            return
        self.reap()
        table = processes()  # one pass over /proc for every tree being ended
        for server in ending:
            left = self.signal_tree(server, table)
            if not left and server.status is not None:
                if server.exec_pipe >= 0:
                    self.exec_heard(server)  # its message in the log before the kernel hears of the exit
                server.say(b"E%d\n" % server.status)
                self.forget(server)
            elif not left and now - server.ending_since > server.grace + 5:
                self.forget(server)  # a server that cannot be reaped (not ours): nothing left to do

    def run(self) -> None:
        """Serve until the kernel and every server are gone; whatever happens, end every tree before leaving."""
        try:
            self.serve()
        finally:
            self.sweep()  # (after a crash too: the servers' trees, at once)

    def serve(self) -> None:
        while self.kernel is not None or self.servers:
            if self.stop_now:  # SIGTERM: end every tree now (SIGKILL after the grace)
                self.kernel_gone()
                for server in list(self.servers.values()):
                    if server.pid:
                        self.end(server)
                    else:
                        self.forget(server)
            try:
                timed = any(s.ending_since is not None or s.left_at is not None for s in self.servers.values())
                events = self.poll.poll(TICK * 1000 if timed or self.stop_now else None)
            except InterruptedError:
                events = []
            for fd, _mask in events:
                if fd == self.wake_r:
                    try:
                        while os.read(self.wake_r, 512):
                            pass
                    except OSError:
                        pass
                    self.reap()
                elif self.kernel is not None and fd == self.kernel.fileno():
                    self.accept()
                elif fd in self.servers:
                    self.control(fd)
                elif fd in self.execs:
                    self.exec_heard(self.execs[fd])
            self.tick()

    def sweep(self) -> None:
        """Kernel and servers gone: end whatever is still here (orphans that carried no server's mark)."""
        started = time.monotonic()
        while True:
            self.reap()
            left = below([self.me], processes()[0]) - {self.me}
            waited = time.monotonic() - started
            if not left or waited > GRACE + 2.0:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL if waited >= GRACE else signal.SIGTERM)
                except OSError:
                    pass
            time.sleep(TICK)


def main() -> None:
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    kernel = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.close(devnull)
    kernel.setblocking(False)
    Supervisor(kernel).run()


if __name__ == "__main__":
    main()
