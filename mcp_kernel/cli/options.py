"""The agent command line's options: flags first, then ``MCP2REPL_*`` variables, then defaults.

The original mcp2repl is driven by agents that export the stable options once (config, server,
session, JSON output, limits) and then run short ``-e`` steps, so every stable option has a
variable and a flag overrides it. Bad input never reaches a kernel: it is one line on stderr and
exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

USAGE = 2
TRUE = frozenset({"1", "true", "yes", "on"})

DESCRIPTION = """\
Run JavaScript with MCP tools as functions: one program in-process (-e, --file), or one step in a
named persistent session (--session NAME) that keeps globals and MCP connections between commands.
Exit status: 0 ok, 1 the program threw, 2 usage or config error, 3 timeout or interrupt."""

EPILOG = """\
environment (flags override): MCP2REPL_CONFIG, MCP2REPL_SERVER, MCP2REPL_PROFILE, MCP2REPL_SESSION,
MCP2REPL_JSON, MCP2REPL_TRACE, MCP2REPL_QUIET, MCP2REPL_TIMEOUT, MCP2REPL_MAX_OUTPUT_CHARS, MCP2REPL_ARTIFACT_DIR,
MCP2REPL_IDLE_TIMEOUT, MCP2REPL_GATEWAY, MCP2REPL_GATEWAY_TOKEN.
other commands: mcp2repl sessions [--json]; mcp2repl sessions export NAME [-o FILE] [--parameters] [--keep-errors];
mcp2repl sessions plans|approve|reject NAME [ID]; mcp2repl run NOTEBOOK.ipynb [-o OUT]; mcp2repl serve [--http PORT] (an MCP server);
mcp2repl lab [ARGS] (JupyterLab on the sessions)"""


class UsageError(Exception):
    """Bad input: said in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, as wide as argparse makes it, without importing shutil to know how wide.

    argparse builds a formatter for every ``add_argument`` and sizes it with
    ``shutil.get_terminal_size()``: shutil (and the bz2 and lzma it imports) cost a warm step from
    the shell ~10 ms on every step, for a width that only ``--help`` uses.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size().columns`` says it: $COLUMNS, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


@dataclass
class Options:
    """Everything one invocation asked for, merged with the environment."""

    eval: list[str] = field(default_factory=list)
    file: str | None = None
    load: list[str] = field(default_factory=list)
    config: str | None = None
    server: str | None = None
    profile: str | None = None
    library: str | None = None
    limit: int = 6
    json: bool = False
    trace: bool = False
    quiet: bool = False
    timeout: float | None = None
    max_output_chars: int | None = None
    artifact_dir: str | None = None
    session: str | None = None
    restart: bool = False
    stop: bool = False
    idle_timeout: float = 3600.0
    gateway: str | None = None


def make_parser(prog: str, description: str, epilog: str) -> argparse.ArgumentParser:
    """A parser whose errors are UsageError (one line, exit status 2), for every mcp2repl command."""
    return _Parser(prog=prog, description=description, epilog=epilog, formatter_class=_Formatter)


def add_server_options(p: argparse.ArgumentParser) -> None:
    """--config, --server, --profile: which MCP servers a session has (mcp2repl and mcp2repl serve)."""
    servers = p.add_argument_group("MCP servers")
    servers.add_argument("--config", metavar="FILE", help="MCP server config file (else mcp2repl.json/.mcp.json/mcp.json here)")
    servers.add_argument("--server", metavar="NAME", help="use only this server of the config")
    servers.add_argument("--profile", metavar="NAME", help="the config's preset to use")


def add_limit_options(group: argparse._ArgumentGroup, timeout_help: str = "interrupt the program after this long (exit 3)") -> None:
    """--timeout, --max-output-chars, --artifact-dir: a step's limits and where its artifacts go."""
    group.add_argument("--timeout", metavar="SECONDS", help=timeout_help)
    group.add_argument("--max-output-chars", metavar="N", help="largest result shown; bigger ones are fitted and saved as artifacts")
    group.add_argument("--artifact-dir", metavar="DIR", help="where artifacts go (default .mcp2repl/artifacts)")


def servers_from(ns: argparse.Namespace, env: dict[str, str] | os._Environ[str]) -> dict[str, str | None]:
    """The server options, flags first, then MCP2REPL_CONFIG / _SERVER / _PROFILE."""
    return {
        "config": ns.config or env.get("MCP2REPL_CONFIG") or None,
        "server": ns.server or env.get("MCP2REPL_SERVER") or None,
        "profile": ns.profile or env.get("MCP2REPL_PROFILE") or None,
    }


def check_config(path: str | None, where: str, cwd: Path | None = None) -> None:
    """A config file named on the command line (or MCP2REPL_CONFIG) that cannot be read: one line, before anything starts."""
    if path is None:
        return
    full = (cwd or Path.cwd()) / Path(path).expanduser()
    problem = "no such file" if not full.exists() else "is a folder, not a file" if full.is_dir() else None
    if problem is None and not os.access(full, os.R_OK):
        problem = "cannot be read (permission denied)"
    if problem:
        raise UsageError(f"{where} {path}: {problem}")


def limits_from(ns: argparse.Namespace, env: dict[str, str] | os._Environ[str], idle: bool = False) -> dict[str, Any]:
    """The limits, flags first, then MCP2REPL_TIMEOUT / _MAX_OUTPUT_CHARS / _ARTIFACT_DIR (raises UsageError).

    ``idle``: only ``idle_timeout`` (--idle-timeout, MCP2REPL_IDLE_TIMEOUT; None when neither is given).
    """
    if idle:
        return {"idle_timeout": number_option("--idle-timeout", ns.idle_timeout, "MCP2REPL_IDLE_TIMEOUT", env, float) or None}
    chars = number_option("--max-output-chars", ns.max_output_chars, "MCP2REPL_MAX_OUTPUT_CHARS", env, int)
    if chars is not None and chars < 200:
        raise UsageError(f"--max-output-chars must be at least 200, not {chars}")
    return {
        "timeout": number_option("--timeout", ns.timeout, "MCP2REPL_TIMEOUT", env, float) or None,
        "max_output_chars": chars,
        "artifact_dir": ns.artifact_dir or env.get("MCP2REPL_ARTIFACT_DIR") or None,
    }


def parser() -> argparse.ArgumentParser:
    p = make_parser("mcp2repl", DESCRIPTION, EPILOG)
    run = p.add_argument_group("what to run")
    run.add_argument("-e", "--eval", action="append", metavar="CODE", help="JavaScript to run (repeatable: lines joined; '-' reads stdin)")
    run.add_argument("-f", "--file", metavar="PATH", help="run a JavaScript file")
    run.add_argument("--load", action="append", metavar="PATH", help="install the helpers of a .js file first (read here, repeatable)")
    run.add_argument("--library", metavar="QUERY", help="print generated TypeScript docs of the tools matching QUERY, run no code")
    run.add_argument("--limit", type=int, metavar="N", help="how many docs --library prints (default 6)")
    add_server_options(p)
    out = p.add_argument_group("output and limits")
    out.add_argument("--json", action="store_true", default=None, help="print one JSON envelope {ok, value|text|error, …}")
    out.add_argument("--trace", action="store_true", default=None, help="with --json: the step's tool calls, with timings, and elapsed_ms")
    out.add_argument("--quiet", action="store_true", default=None, help="no mcp2repl notices on stderr (the program's output stays)")
    add_limit_options(out)
    ses = p.add_argument_group("sessions")
    ses.add_argument("--session", metavar="NAME", help="run the step in this persistent session (started on first use)")
    ses.add_argument("--restart", action="store_true", help="start the session afresh (its state is dropped), e.g. after its kernel died")
    ses.add_argument("--stop", nargs="?", const="", metavar="NAME", help="stop a session (default: --session / MCP2REPL_SESSION)")
    ses.add_argument("--idle-timeout", metavar="SECONDS", help="a new session ends after this long without a step (default 3600)")
    ses.add_argument("--gateway", metavar="URL", help="run kernels behind this Jupyter gateway (token: MCP2REPL_GATEWAY_TOKEN)")
    return p


def parse(argv: list[str], environ: dict[str, str] | None = None) -> Options:
    """Options from the command line and the environment; raises UsageError."""
    env = os.environ if environ is None else environ
    ns = parser().parse_args(argv)
    o = Options()
    o.eval = ns.eval or []
    o.file, o.load, o.library = ns.file, ns.load or [], ns.library
    o.config, o.server, o.profile = servers_from(ns, env).values()
    o.session = ns.session or env.get("MCP2REPL_SESSION") or None
    o.gateway = ns.gateway or env.get("MCP2REPL_GATEWAY") or None
    o.json = ns.json if ns.json is not None else env.get("MCP2REPL_JSON", "").strip().lower() in TRUE
    o.trace = ns.trace if ns.trace is not None else env.get("MCP2REPL_TRACE", "").strip().lower() in TRUE
    o.quiet = ns.quiet if ns.quiet is not None else env.get("MCP2REPL_QUIET", "").strip().lower() in TRUE
    o.timeout, o.max_output_chars, o.artifact_dir = limits_from(ns, env).values()
    o.idle_timeout = limits_from(ns, env, idle=True)["idle_timeout"] or 3600.0
    if ns.limit is not None and ns.limit < 1:
        raise UsageError(f"--limit must be 1 or more, not {ns.limit}")
    o.limit = ns.limit or 6
    o.restart = ns.restart
    if ns.stop is not None:
        o.stop = True
        o.session = ns.stop or o.session
        if not o.session:
            raise UsageError("--stop needs a session name (--stop NAME, --session NAME or MCP2REPL_SESSION)")
    _check(o)
    if not o.stop:
        check_config(o.config, "--config" if ns.config else "MCP2REPL_CONFIG")
    return o


def number_option(flag: str, given: str | None, var: str, env: dict[str, str] | os._Environ[str], kind: type) -> float | None:
    """A number >= 0 from ``flag`` (given) or else the variable ``var``: None when neither is set, a UsageError naming the one that is wrong."""
    text, where = (given, flag) if given is not None else (env.get(var) or None, var)
    if text is None:
        return None
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"{where} must be a {'whole ' if kind is int else ''}number, not {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{where} must be a number >= 0, not {text!r}")
    return value


def _check(o: Options) -> None:
    if o.stop:
        if o.eval or o.file or o.library:
            raise UsageError("--stop takes no code: stop the session in a command of its own")
        return
    if o.restart and not o.session:
        raise UsageError("--restart is about sessions: give --session NAME (or MCP2REPL_SESSION)")
    if o.eval and o.file:
        raise UsageError("give the program with -e or with --file, not both")
    if o.library is not None and (o.eval or o.file or o.load):
        raise UsageError("--library prints tool docs and runs no code: leave out -e, --file and --load")
    if o.eval.count("-") > 1:
        raise UsageError("'-e -' (read stdin) can be given once")
    if not (o.eval or o.file or o.load or o.library is not None or o.restart):
        raise UsageError("nothing to run: give -e CODE, -e - (stdin), --file PATH, --load PATH or --library QUERY (see mcp2repl --help)")


def program(o: Options, stdin: bytes | None = None) -> str:
    """The code to run: -e parts joined by lines (``-`` is stdin), or the file's text.

    ``stdin``: the bytes a step served by the session's kernel was given (cli/served.py): read by
    the client, decoded here by the same rules."""
    if o.file:
        try:
            with open(o.file, encoding="utf-8") as fh:
                return fh.read()
        except OSError as exc:
            raise UsageError(f"--file {o.file}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"--file {o.file}: not UTF-8 text") from None
    parts = [_stdin(stdin) if part == "-" else part for part in o.eval]
    return "\n".join(parts)


def _stdin(given: bytes | None = None) -> str:
    """stdin as UTF-8 (strict: the text layer may smuggle bad bytes in as surrogates), lines as text mode reads them."""
    try:
        text = (sys.stdin.buffer.read() if given is None else given).decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("-e -: stdin is not UTF-8 text") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def helpers(o: Options) -> list[tuple[str, str]]:
    """``(path as given, text)`` of every --load file, read here (the kernel may be remote); the manifest
    and errors name the file as the user did, not by a host path."""
    out = []
    for path in o.load:
        if not path.endswith(".js"):
            raise UsageError(f"--load {path}: helpers are .js files")
        try:
            with open(path, encoding="utf-8") as fh:
                out.append((path, fh.read()))
        except OSError as exc:
            raise UsageError(f"--load {path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"--load {path}: not UTF-8 text") from None
    return out


def load_cell(path: str, source: str) -> str:
    """A step that installs a helper file read on this side (api/agent.js: loadSource)."""
    return f"await __mcp2repl.agent.loadSource({json.dumps(path)}, {json.dumps(source)})"
