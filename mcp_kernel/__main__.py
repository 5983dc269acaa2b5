"""``python -m mcp_kernel``: run the kernel (as kernel.json does), or ``install`` the kernelspec.

Nothing Jupyter is imported until a kernel really starts, so ``--help`` and ``install`` are quick.
"""

from __future__ import annotations

import sys

USAGE = """usage: python -m mcp_kernel install [--user | --sys-prefix | --prefix DIR] [--name NAME] [--display-name TEXT] [--env NAME VALUE]
       python -m mcp_kernel -f CONNECTION_FILE [--MCPKernel.OPTION=VALUE ...]

mcp2repl: a Jupyter kernel whose cells are JavaScript in one persistent V8, with the tools of MCP servers as functions.

  install        register the kernelspec (see `python -m mcp_kernel install --help`)
  -f FILE        run the kernel on a Jupyter connection file (what kernel.json does; clients start it for you)

Kernel options (also environment variables):
  --MCPKernel.timeout=SECONDS         per-cell time limit (MCP2REPL_TIMEOUT)
  --MCPKernel.heap_limit_mb=MB        V8 heap limit (MCP2REPL_HEAP_LIMIT_MB, default 2048)
  --MCPKernel.max_output_chars=N      largest result or view (MCP2REPL_MAX_OUTPUT_CHARS, default 20000)
  --MCPKernel.mcp_config=PATH         MCP server config file (MCP2REPL_CONFIG)
  --MCPKernel.progress_mode=MODE      auto, display, stderr or off (MCP2REPL_PROGRESS)

Use it: jupyter console --kernel mcp2repl, JupyterLab, papermill, or the mcp2repl command (mcp2repl --help).
Documentation: the README of the mcp2repl package.
"""


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["install"]:
        from .cli.install import main as install_main

        sys.exit(install_main(args[1:]))
    if not args or args[0] in ("-h", "--help", "help", "--help-all"):
        sys.stdout.write(USAGE)
        sys.exit(0 if args else 2)
    from .kernel.app import launch

    if "-f" in args[:-1] and any(a.startswith("--MCPKernel.record=") for a in args):  # a named session's kernel
        from pathlib import Path

        from .cli.stepsocket import serve
        from .kernel.direct import channel

        serve(Path(args[args.index("-f") + 1]), channel)
    launch()


if __name__ == "__main__":
    main()
