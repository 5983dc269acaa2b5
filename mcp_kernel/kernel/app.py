"""Start the kernel process (what kernel.json runs: ``python -m mcp_kernel -f CONNECTION_FILE``)."""

from __future__ import annotations

import os
import sys

#: Exit status of a kernel whose ports were taken before it could bind them: its starter may try
#: again with other ports (``client/registry.py`` does; the value is pinned equal there by a test).
PORTS_TAKEN = 75


def launch() -> None:
    import zmq
    from ipykernel.kernelapp import IPKernelApp

    from .. import rundir
    from .kernel import MCPKernel

    rundir.current().watch_crashes()
    try:
        # Cells cannot write to file descriptors, so ipykernel's fd capture has nothing to show; without
        # it, what V8 prints as it aborts reaches the crash watcher instead of a pipe that dies with us.
        IPKernelApp.launch_instance(kernel_class=MCPKernel, capture_fd_output=False)
    except zmq.ZMQError as exc:
        if exc.errno != zmq.EADDRINUSE:
            raise
        # A client picks free ports, then the kernel binds them: another process may take one in
        # between. Exiting the usual way would wait forever on the sockets already bound.
        sys.stderr.write(f"[mcp2repl] {exc}: another process took a port of this kernel's connection file\n")
        sys.stderr.flush()
        os._exit(PORTS_TAKEN)
