"""The ``mcp2repl`` command line.

Today: ``mcp2repl run NOTEBOOK`` executes a notebook headless on the mcp2repl kernel (the README's
main job and a papermill-free batch runner, in :mod:`mcp_kernel.cli.run`). Named persistent
``--session`` kernels for agents will be further subcommands of this same entry point.
"""

from __future__ import annotations

import argparse
import sys

from mcp_kernel.cli.run import run, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mcp2repl", description="JavaScript with MCP tools, in Jupyter.")
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser(
        "run",
        help="execute a notebook headless and save the result",
        description="Execute a notebook headless and save the result. Exit status: 0 all cells ran, "
        "1 a cell failed, 2 usage error (bad option, unreadable notebook, unknown kernel), 3 a cell timed out.",
    )
    cmd.add_argument("notebook")
    cmd.add_argument("-o", "--output", help="where to write the executed notebook (default NAME.out.ipynb)")
    cmd.add_argument("-k", "--kernel", default="mcp2repl", help="kernel name (default mcp2repl)")
    cmd.add_argument(
        "--timeout",
        type=seconds,
        default=0,
        help="per-cell limit in seconds (default 0: none); a cell past it is interrupted and its error recorded. "
        "The kernel's MCP servers are started before the first cell is timed.",
    )
    cmd.add_argument("--allow-errors", action="store_true", help="keep going after a failing or timed-out cell")
    cmd.set_defaults(func=run)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
