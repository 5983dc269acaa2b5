"""``mcp2repl run NOTEBOOK``: execute a notebook headless, save it, summarise it, exit with a status.

nbclient executes the cells. What is added here, and why:

* ``--timeout`` interrupts the cell that overran, through nbclient's public ``interrupt_on_timeout``
  and ``error_on_timeout``, instead of nbclient's default of raising ``CellTimeoutError`` out of the
  whole run (a traceback, no saved notebook, a kernel left spinning). The kernel's own error for the
  interrupted cell keeps its location but is renamed a ``TimeoutError``: the user did not press stop.
* An mcp2repl kernel starts its MCP servers in the background when it starts, and a first cell that
  calls a tool waits for them. The wait is paid before the first cell is timed (a silent
  ``api.servers({wait: true})``), so ``--timeout`` measures cells, not server start-up.
* Exit statuses a script can branch on (:data:`OK`, :data:`FAILED`, :data:`USAGE`, :data:`STOPPED`).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Exit statuses of the ``mcp2repl`` command: all went well; a cell failed; the command line or a
#: file it names is wrong; a cell timed out (the CLI's contract, issue 11, also gives 3 to interrupts).
OK, FAILED, USAGE, STOPPED = 0, 1, 2, 3

#: Sent silently before the first cell. ``api.servers({wait: true})`` returns once every configured
#: server is ready or has failed; each server's start is bounded by the kernel (MCP2REPL_START_TIMEOUT),
#: so this bound only guards against a server that never settles. A silent request is not counted
#: (execution counts still start at 1) and sends no output.
WAIT_FOR_SERVERS = "await api.servers({wait: true, timeout: 600})"

#: Marks the execute reply that nbclient makes up (from ``error_on_timeout``) when it interrupts a
#: cell for its time limit: the only sure sign that a cell's error is a timeout.
TIMED_OUT = "mcp2repl_timed_out"

#: Seconds nbclient waits, after the made-up reply, for the interrupted cell's own outputs and its
#: idle status: the kernel's error (with where the code was spinning) is kept when it comes in time.
INTERRUPT_GRACE = 10


def seconds(text: str) -> float:
    """``--timeout``'s type: a finite number of seconds, 0 for no limit (nbclient's own convention)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0 (0: no limit), not {text!r}")
    return value


@dataclass
class _Tally:
    """What the summary reports, counted from the cells nbclient actually executed.

    Counted in a hook rather than read from the saved notebook: cells after a stop keep whatever
    counts and outputs the input file had.
    """

    executed: int = 0
    errors: int = 0
    last: int | None = None  #: execution count of the last executed cell (where a stop happened)
    timed_out: list[tuple[int | None, str]] = field(default_factory=list)  #: (execution count, first line)


class NotebookRun:
    """One ``mcp2repl run``: the nbclient client, its hooks, and the tally they keep."""

    def __init__(self, nb: Any, *, kernel: str, timeout: float, allow_errors: bool, cwd: Path) -> None:
        self.timeout = timeout
        self.tally = _Tally()
        self.evalue = f"Cell timed out after {timeout:g} s (mcp2repl run --timeout {timeout:g})"
        self.nb, self.kernel, self.allow_errors, self.cwd = nb, kernel, allow_errors, cwd
        self.client = self._new_client()

    def _new_client(self) -> Any:
        from nbclient import NotebookClient

        timeout = self.timeout
        return NotebookClient(
            self.nb,
            kernel_name=self.kernel,
            # timeout_func, not timeout: nbclient's ``timeout`` trait takes whole seconds only
            timeout_func=(lambda cell: timeout) if timeout else None,
            interrupt_on_timeout=True,
            error_on_timeout={
                "ename": "TimeoutError",
                "evalue": self.evalue,
                "traceback": [f"TimeoutError: {self.evalue}"],
                TIMED_OUT: True,
            },
            iopub_timeout=INTERRUPT_GRACE,
            allow_errors=self.allow_errors,
            on_notebook_start=self._servers_ready,
            on_cell_executed=self._executed,
            resources={"metadata": {"path": str(self.cwd)}},
        )

    async def _servers_ready(self, notebook: Any) -> None:
        """Before the first timed cell, wait until an mcp2repl kernel's servers have started."""
        client = self.client
        assert client.kc is not None
        info = await client.async_wait_for_reply(client.kc.kernel_info())
        if info is None or info["content"].get("implementation") != "mcp2repl":
            return  # another kernel (-k): it has no api.servers
        await client.async_wait_for_reply(client.kc.execute(WAIT_FOR_SERVERS, silent=True, store_history=False))

    def _executed(self, cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        """Count the cell; a timed-out one gets its error recorded as a timeout.

        Runs before nbclient decides whether to stop, so the traceback put into the reply here is
        also the one printed when the run stops at this cell.
        """
        content = execute_reply["content"]
        self.tally.executed += 1
        self.tally.last = cell.get("execution_count")
        if content.get("status") == "error":
            self.tally.errors += 1
        if content.get(TIMED_OUT):
            content["traceback"] = self._record_timeout(cell)
            first = next((line.strip() for line in cell.source.splitlines() if line.strip()), "")
            self.tally.timed_out.append((self.tally.last, first if len(first) <= 60 else first[:59] + "…"))

    def _record_timeout(self, cell: Any) -> list[str]:
        """Make the cell's error say it timed out, keeping the kernel's frames (where it was spinning).

        The kernel answers nbclient's interrupt with its own error (mcp2repl: ``InterruptError:
        Execution interrupted`` and the frames); that error replaces its headline. A kernel that sent
        no error in time still gets one, so a timed-out cell never looks like a success.
        """
        from nbformat.v4 import new_output

        headline = f"TimeoutError: {self.evalue}"
        errors = [i for i, out in enumerate(cell.outputs) if out.get("output_type") == "error"]
        frames: list[str] = []
        if errors:
            old = cell.outputs[errors[-1]]
            traceback = list(old.get("traceback") or [])
            own_headline = f"{old.get('ename')}: {old.get('evalue')}"
            frames = traceback[1:] if traceback[:1] == [own_headline] else traceback
        error = new_output("error", ename="TimeoutError", evalue=self.evalue, traceback=[headline, *frames])
        if errors:
            cell.outputs[errors[-1]] = error
        else:
            cell.outputs.append(error)
        return list(error.traceback)

    def execute(self) -> bool:
        """Run every cell; True when nbclient stopped at a failing (or timed-out) cell.

        A kernel that dies before it answers its first request is started once more: jupyter_client
        picks free ports, then the kernel binds them, and another process may take one between
        ("Address already in use"); the kernel's second start gets other ports.
        """
        from nbclient.exceptions import CellExecutionError

        retried = False
        while True:
            try:
                self.client.execute()
            except CellExecutionError as exc:
                print(str(exc), file=sys.stderr)
                return True
            except Exception as exc:
                if retried or self.tally.executed or not _died_starting(exc):
                    raise
                retried = True
                print("mcp2repl run: the kernel died as it started; starting it once more", file=sys.stderr)
                self.client = self._new_client()
            else:
                return False

    def summary(self, source: Path, total: int, stopped: bool) -> list[str]:
        """The lines printed after the run: how far it got, and which cells timed out."""
        tally = self.tally
        where = f"{tally.executed} of {total}" if stopped else f"{tally.executed}"
        lines = [
            f"Executed {where} code cells of {source} ({tally.errors} with errors)" + (f"; stopped at In [{tally.last}]" if stopped else "")
        ]
        lines += [f"In [{count}] timed out after {self.timeout:g} s and was interrupted: {first}" for count, first in tally.timed_out]
        return lines


def run(args: argparse.Namespace) -> int:
    """``mcp2repl run``: the exit status is :data:`STOPPED` when any cell timed out, even with
    ``--allow-errors`` (a cell that never finished is not an error the notebook meant to show)."""
    from ..lean_imports import hide_iri_grammar

    hide_iri_grammar()  # before nbformat and nbclient import jsonschema
    import nbformat
    from jupyter_client.kernelspec import NoSuchKernel

    source = Path(args.notebook)
    output = Path(args.output) if args.output else source.with_name(source.stem + ".out.ipynb")
    try:
        nb = nbformat.read(source, as_version=4)
    except OSError as exc:
        print(f"mcp2repl run: cannot read {source}: {exc.strerror or exc}", file=sys.stderr)
        return USAGE
    except ValueError as exc:  # nbformat's NotJSONError and friends
        print(f"mcp2repl run: cannot read {source}: {exc}", file=sys.stderr)
        return USAGE
    total = sum(1 for cell in nb.cells if cell.cell_type == "code")
    job = NotebookRun(nb, kernel=args.kernel, timeout=args.timeout, allow_errors=args.allow_errors, cwd=source.parent.resolve())
    try:
        stopped = job.execute()
    except NoSuchKernel as exc:
        print(f"mcp2repl run: no kernel named {exc.name!r} (`jupyter kernelspec list` shows the installed ones)", file=sys.stderr)
        return USAGE
    except BaseException:
        _save(nb, output)  # a run that dies (dead kernel, Ctrl-C) still leaves what it executed
        raise
    _save(nb, output)
    for line in job.summary(source, total, stopped):
        print(line)
    print(f"Executed notebook: {output.resolve()}")
    if job.tally.timed_out:
        return STOPPED
    return FAILED if stopped else OK


def _died_starting(exc: BaseException | None) -> bool:
    """Did the kernel die before its first reply? (nbclient's clean-up may raise over jupyter_client's error.)"""
    while exc is not None:
        if isinstance(exc, RuntimeError) and "died before replying to kernel_info" in str(exc):
            return True
        exc = exc.__context__
    return False


def _save(nb: Any, output: Path) -> None:
    import nbformat

    output.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, output)
