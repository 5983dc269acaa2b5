"""``mcp2repl serve``: the kernel as an MCP server (mcp_kernel/serve), with the command line's options.

The same server options as ``mcp2repl -e`` (``--config``, ``--server``, ``--profile``, limits and the
``MCP2REPL_*`` variables, flags first), so a client's config needs one entry; bad input is one line
on stderr and exit status 2 before anything starts.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..client.trust import is_loopback
from ..serve.options import ServeOptions
from .options import (
    USAGE,
    UsageError,
    add_limit_options,
    add_server_options,
    check_config,
    limits_from,
    make_parser,
    number_option,
    servers_from,
)

DESCRIPTION = """\
Serve mcp2repl to an MCP client: tools run (code as one step of a persistent session), search_tools,
describe_tool and list_servers, over stdio (default) or Streamable HTTP at /mcp (--http)."""
EPILOG = """\
environment (flags override): MCP2REPL_CONFIG, MCP2REPL_SERVER, MCP2REPL_PROFILE, MCP2REPL_SESSION,
MCP2REPL_TIMEOUT, MCP2REPL_MAX_OUTPUT_CHARS, MCP2REPL_ARTIFACT_DIR, MCP2REPL_IDLE_TIMEOUT, MCP2REPL_ANSWER_WAIT,
MCP2REPL_SERVE_TOKEN (the HTTP bearer token; else one is generated into .mcp2repl/serve-token)."""


def parser() -> argparse.ArgumentParser:
    p = make_parser("mcp2repl serve", DESCRIPTION, EPILOG)
    way = p.add_argument_group("transport")
    way.add_argument("--http", metavar="[HOST:]PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp (default host 127.0.0.1)")
    way.add_argument("--allow-remote", action="store_true", help="allow --http on a non-loopback address (the token is still required)")
    add_server_options(p)
    out = p.add_argument_group("steps")
    add_limit_options(out, timeout_help="a step's time limit when its run gives no timeout_s (default: none)")
    out.add_argument("--session", metavar="NAME", help="run every step in this named session (the one mcp2repl --session NAME uses)")
    out.add_argument("--idle-timeout", metavar="SECONDS", help="close an HTTP client's session after this long unused (default 3600)")
    out.add_argument("--answer-wait", metavar="SECONDS", help="how long a step that asked a 2026-07-28 client waits for its answer (default 600)")
    return p


def parse(argv: list[str], environ: dict[str, str] | None = None) -> ServeOptions:
    env = os.environ if environ is None else environ
    ns = parser().parse_args(argv)
    o = ServeOptions(**servers_from(ns, env), **limits_from(ns, env))
    o.session = ns.session or env.get("MCP2REPL_SESSION") or None
    o.token = env.get("MCP2REPL_SERVE_TOKEN") or None
    o.allow_remote = ns.allow_remote
    idle = limits_from(ns, env, idle=True).get("idle_timeout")
    o.idle_timeout = idle or o.idle_timeout
    o.answer_wait = number_option("--answer-wait", ns.answer_wait, "MCP2REPL_ANSWER_WAIT", env, float) or o.answer_wait
    if ns.http is not None:
        o.http = _address(ns.http)
        if not is_loopback(o.http[0]) and not o.allow_remote:
            raise UsageError(f"--http {ns.http}: {o.http[0]} is not a loopback address; add --allow-remote to serve other machines")
    elif ns.allow_remote:
        raise UsageError("--allow-remote is about --http: give --http HOST:PORT")
    check_config(o.config, "--config" if ns.config else "MCP2REPL_CONFIG", o.cwd)
    if o.session is not None:
        from ..client.registry import SessionError, check_name

        try:
            check_name(o.session)
        except SessionError as exc:
            raise UsageError(str(exc)) from None
    return o


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise UsageError(f"--http {text}: give [HOST:]PORT with a port from 1 to 65535 (0: any free one)")
    return host, int(port)


#: Set by a running ``mcp2repl serve`` for the servers it starts (servers/spawn.py: SERVE_MARK).
SERVE_MARK = "MCP2REPL_SERVE_PID"


def main(argv: list[str]) -> int:
    try:
        options = parse(argv)
        if parent := os.environ.get(SERVE_MARK):
            raise UsageError(
                f"this mcp2repl serve was started as an MCP server of another one (pid {parent}): the MCP config it reads "
                "lists mcp2repl itself. Leave mcp2repl out of that config, or give mcp2repl serve a config of its own (--config FILE)"
            )
    except UsageError as exc:
        print(f"mcp2repl serve: error: {exc}", file=sys.stderr)
        return USAGE
    from ..serve.main import serve

    os.environ[SERVE_MARK] = str(os.getpid())  # passed on to the servers this one starts
    return serve(options)
