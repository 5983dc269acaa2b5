"""A step of ``mcp2repl --session NAME -e CODE`` run inside the session's kernel, for the fast client (cli/quick.py).

A warm step from the shell spent ~150 ms importing and attaching (ZMQ, the trust checks, a
kernel_info round trip) before the step itself. The session's kernel has all of that loaded, so
the client hands it the command line (its argv, its MCP2REPL_* environment, its stdin) and prints
what comes back. Here the step runs through exactly the path the command takes in its own process
— the same parser, ``sessions.step`` (the session's lock, a Jupyter execute on the kernel's shell
queue, recorded as ``cli``), the same renderers — only with its output collected instead of
printed: both paths print the same bytes and exit with the same status by construction.
"""

from __future__ import annotations

import traceback
from typing import TextIO

from ..client.kernel_session import Channel
from ..client.registry import SessionError
from . import render, sessions
from .options import Options, UsageError, parse, program


def _not_served(o: Options, name: str) -> str | None:
    """Why this command is not for a served step (the client then runs it itself); None: it is."""
    if o.session != name:
        return "another session"
    if o.gateway or o.stop or o.restart or o.load or o.file or o.library is not None or not o.eval:
        return "not a plain step"
    return None


#: A served step's reply: its exit status (its output went to ``out`` and ``err`` as it came); or why the client must run it itself.
Reply = int | str


def run(
    argv: list[str],
    env: dict[str, str],
    stdin: bytes | None,
    name: str,
    watch: sessions.Watch,
    pid: int,
    out: TextIO,
    err: TextIO,
    channel: Channel | None = None,
) -> Reply:
    """Step ``argv`` (with the client's MCP2REPL_* ``env`` and ``stdin``) as the command would in its own process;
    what it prints goes to ``out`` and ``err`` (the client's, live: a busy session's notice is said as it waits).
    ``channel``: this kernel's own shell (kernel/direct.py); None: a ZMQ connection to it, as the command makes."""
    as_json = "--json" in argv
    try:
        o = parse(argv, env)
        as_json = o.json
        if why := _not_served(o, name):
            return why
        code = program(o, stdin)
        result, limit = sessions.step(o, code, [], err=err, watch=watch, pid=pid, channel=channel)
        assert result is not None  # a plain step has code
        status = render.envelope(result, out, limit=limit, trace=o.trace) if o.json else render.human(result, out, err, quiet=o.quiet)
    except UsageError as exc:
        status = render.usage(str(exc), as_json, out=out, err=err)
    except SessionError as exc:
        status = render.usage(str(exc), as_json, "SessionError", out, err)
    except Exception:  # noqa: BLE001 - said to the client as its own process would: a traceback, status 1
        err.write(traceback.format_exc())
        status = 1
    return status
