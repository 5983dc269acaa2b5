"""The ``mcp2repl`` command line.

``mcp2repl run NOTEBOOK`` executes a notebook headless on the mcp2repl kernel (the README's
main job and a papermill-free batch runner, in :mod:`mcp_kernel.cli.run`); ``mcp2repl serve`` is
the kernel as an MCP server (:mod:`mcp_kernel.cli.serve`); ``mcp2repl lab`` is JupyterLab on the
sessions' kernels (:mod:`mcp_kernel.cli.lab`). Everything else is the
agent command (cli/agent.py): ``-e CODE``, ``--file``, ``--session NAME``, ``mcp2repl sessions``…
"""

from __future__ import annotations

import sys

#: Exit status of a command stopped by Ctrl-C (as for a step that was interrupted).
INTERRUPTED = 3


def main(argv: list[str] | None = None) -> int:
    """Everything is imported lazily, inside the guard: on a loaded machine start-up takes seconds,
    and a Ctrl-C during it must end the command with one line, not an import traceback."""
    command = argv is None  # the console script: this process is the command's own
    try:
        argv = sys.argv[1:] if argv is None else argv
        if "--session" in argv and argv[:1] not in (["serve"], ["lab"], ["run"], ["sessions"]):
            from mcp_kernel.cli.quick import run as quick  # a warm step through the session's socket (cli/quick.py)

            if (status := quick(argv)) is not None:
                return _leave(status) if command else status
        if argv[:1] == ["serve"]:  # the kernel as an MCP server (cli/serve.py, mcp_kernel/serve)
            from mcp_kernel.cli.serve import main as serve_main

            return serve_main(argv[1:])
        if argv[:1] == ["lab"]:  # JupyterLab with this folder's sessions as running kernels (cli/lab.py)
            from mcp_kernel.cli.lab import main as lab_main

            return lab_main(argv[1:])
        if argv[:1] != ["run"]:  # the agent command: -e, --file, --session, sessions… (cli/agent.py)
            from mcp_kernel.cli.agent import main as agent_main

            status = agent_main(argv)
            if command and "mcp_kernel.cli.oneshot" in sys.modules:  # a one-shot run: no interpreter teardown (oneshot.leave)
                from mcp_kernel.cli.oneshot import leave

                leave(status)
            return status
        return _run_notebook(argv)
    except KeyboardInterrupt:
        print("mcp2repl: interrupted", file=sys.stderr)
        return INTERRUPTED


def _leave(status: int) -> int:  # never returns (typing is not imported on this path)
    """The console script's fast step ends here, its output flushed, as a one-shot run does (oneshot.leave), without
    importing it: the interpreter's teardown is ~10% of a bare ``python -c pass`` and of a warm step, and the fast
    client registers no ``atexit`` handler (it imports nothing that would, cli/quick.py), so none is skipped."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone (| head): nothing more to say
            pass
    os._exit(status)


def _run_notebook(argv: list[str]) -> int:
    import argparse

    from mcp_kernel.cli.run import run, seconds

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
