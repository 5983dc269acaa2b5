"""The ``mcp2repl`` command line.

``mcp2repl run NOTEBOOK`` executes a notebook headless on the mcp2repl kernel (the README's
main job and a papermill-free batch runner). Everything else is the agent command (cli/agent.py):
``-e CODE``, ``--file``, ``--session NAME``, ``mcp2repl sessions`` and the rest.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _run(args: argparse.Namespace) -> int:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    source = Path(args.notebook)
    output = Path(args.output) if args.output else source.with_name(source.stem + ".out.ipynb")
    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name=args.kernel,
        timeout=args.timeout or None,
        allow_errors=args.allow_errors,
        resources={"metadata": {"path": str(source.parent.resolve())}},
    )
    status = 0
    try:
        client.execute()
    except CellExecutionError as exc:
        print(str(exc), file=sys.stderr)
        status = 1
    finally:
        output.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, output)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    errors = sum(1 for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error")
    print(f"Executed {len(cells)} code cells of {source} ({errors} with errors)")
    print(f"Executed notebook: {output.resolve()}")
    return status


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["run"]:  # the agent command: -e, --file, --session, sessions… (cli/agent.py)
        from mcp_kernel.cli.agent import main as agent_main

        return agent_main(argv)
    parser = argparse.ArgumentParser(prog="mcp2repl", description="JavaScript with MCP tools, in Jupyter.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="execute a notebook headless and save the result")
    run.add_argument("notebook")
    run.add_argument("-o", "--output", help="where to write the executed notebook (default NAME.out.ipynb)")
    run.add_argument("-k", "--kernel", default="mcp2repl", help="kernel name (default mcp2repl)")
    run.add_argument("--timeout", type=float, default=0, help="per-cell timeout in seconds (default none)")
    run.add_argument("--allow-errors", action="store_true", help="keep going after a failing cell")
    run.set_defaults(func=_run)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
