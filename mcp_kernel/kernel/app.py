"""Start the kernel process (what kernel.json runs: ``python -X no_debug_ranges -m mcp_kernel -f CONNECTION_FILE``)."""

from __future__ import annotations

import logging
import os
import sys

from ..client.trust import is_loopback

#: ipykernel's warning for every TCP kernel (tests/test_compat.py pins the text and the logger's name).
TCP_WARNING = "Kernel is running over TCP without encryption"
APP_LOGGER = "IPKernelApp"

#: Exit status of a kernel whose ports were taken before it could bind them: its starter may try
#: again with other ports (``client/registry.py`` does; the value is pinned equal there by a test).
PORTS_TAKEN = 75


class LoopbackTcpWarning(logging.Filter):
    """Drops ipykernel's "running over TCP without encryption" warning when the kernel binds loopback only.

    Every user saw it (the demo, jupyter console, ``mcp2repl run``, papermill, a session's "last
    words"), and none could act on it: on 127.0.0.1 only processes of this machine reach the ports,
    and they need the connection file's key to be heard. A kernel bound to another address keeps it.
    """

    def __init__(self, ip: object) -> None:
        super().__init__()
        self._ip = ip  # the kernel's address, read when the warning comes (the connection file is loaded by then)

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(TCP_WARNING):
            return True
        ip = self._ip() if callable(self._ip) else self._ip
        return not is_loopback(str(ip or ""))


def no_unheard_records(log: logging.Logger) -> None:
    """Let ``log`` make no record that none of its handlers would write.

    traitlets sets its app's logger to DEBUG and the handler to the app's level (WARNING unless
    ``--debug``), so each of ipykernel's debug lines (four a cell) was made into a record, its
    caller looked up, and then dropped (~7 % of the kernel's main thread in a profile of trivial cells).
    """
    levels = [handler.level for handler in log.handlers]
    if levels and log.level < min(levels):
        log.setLevel(min(levels))


def launch() -> None:
    import zmq
    from ipykernel import kernelapp

    from .. import compat, rundir

    compat.defer_package_inits()  # before anything imports the MCP SDK: its client side alone
    from .kernel import MCPKernel

    class IPKernelApp(compat.FileIpFirst, kernelapp.IPKernelApp):
        """ipykernel's app, taking the connection file's ip as it is (compat.FileIpFirst); named as
        ipykernel's, since traitlets names the app's logger after its class (APP_LOGGER)."""

        def initialize(self, argv: list[str] | None = None) -> None:
            super().initialize(argv)
            no_unheard_records(self.log)

    rundir.current().watch_crashes()
    logging.getLogger(APP_LOGGER).addFilter(LoopbackTcpWarning(lambda: IPKernelApp.instance().ip if IPKernelApp.initialized() else ""))
    try:
        # Cells cannot write to file descriptors, so ipykernel's fd capture has nothing to show; without
        # it, what V8 prints as it aborts reaches the crash watcher instead of a pipe that dies with us.
        IPKernelApp.launch_instance(kernel_class=MCPKernel, capture_fd_output=False)
        compat.end_kernel_process(IPKernelApp.instance())  # the loop stopped: a shutdown request was answered
    except zmq.ZMQError as exc:
        if exc.errno != zmq.EADDRINUSE:
            raise
        # A client picks free ports, then the kernel binds them: another process may take one in
        # between. Exiting the usual way would wait forever on the sockets already bound.
        sys.stderr.write(f"[mcp2repl] {exc}: another process took a port of this kernel's connection file\n")
        sys.stderr.flush()
        os._exit(PORTS_TAKEN)
