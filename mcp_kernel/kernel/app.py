"""Start the kernel process (what kernel.json runs: ``python -m mcp_kernel -f CONNECTION_FILE``)."""

from __future__ import annotations


def launch() -> None:
    from ipykernel.kernelapp import IPKernelApp

    from .. import rundir
    from .kernel import MCPKernel

    rundir.current().watch_crashes()
    # Cells cannot write to file descriptors, so ipykernel's fd capture has nothing to show; without
    # it, what V8 prints as it aborts reaches the crash watcher instead of a pipe that dies with us.
    IPKernelApp.launch_instance(kernel_class=MCPKernel, capture_fd_output=False)
