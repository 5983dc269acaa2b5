"""``python -m mcp_kernel``: run the kernel, or ``python -m mcp_kernel install …`` to register it."""

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "install":
        from .install import main as install_main

        sys.exit(install_main(sys.argv[2:]))
    from ipykernel.kernelapp import IPKernelApp

    from .kernel import MCPKernel

    IPKernelApp.launch_instance(kernel_class=MCPKernel)


if __name__ == "__main__":
    main()
