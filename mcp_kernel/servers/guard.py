"""``python -m mcp_kernel.servers.guard PID -- COMMAND ARGS…``: exec a stdio server that dies with us.

Stdio servers run in their own session so an interrupt (SIGINT to the kernel's process group)
never reaches them. The price is that a kernel killed with SIGKILL would leave them running if
they ignore stdin's end. On Linux the kernel asks to be the parent-death signal target: this
tiny launcher sets PR_SET_PDEATHSIG and then becomes the server with ``execvp``.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: python -m mcp_kernel.servers.guard PARENT_PID -- COMMAND [ARGS...]\n")
        raise SystemExit(2)
    parent = int(argv[0])
    command = argv[2:]
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the kernel died before prctl took effect
        raise SystemExit(1)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"cannot start {command[0]!r}: {exc.strerror}\n")
        raise SystemExit(127) from None


if __name__ == "__main__":
    main(sys.argv[1:])
