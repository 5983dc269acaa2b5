"""Start the kernel process (what kernel.json runs: ``python -m mcp_kernel -f CONNECTION_FILE``)."""

from __future__ import annotations


def launch() -> None:
    from ipykernel.kernelapp import IPKernelApp

    from .kernel import MCPKernel

    IPKernelApp.launch_instance(kernel_class=MCPKernel)
