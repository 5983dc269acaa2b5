"""``mcp2repl [options]``: the agent's command, compatible with the original mcp2repl's.

Without ``--session`` a program runs in-process (oneshot.py); with it, it is one step of a
persistent session (sessions.py). Imports stay lazy: a warm session step has a 100 ms budget and
must not pay for V8 or the MCP SDK, and a one-shot run must not pay for ZMQ.
"""

from __future__ import annotations

import json
import sys

from . import render
from .options import Options, UsageError, helpers, parse, program


def main(argv: list[str]) -> int:
    for stream in (sys.stdout, sys.stderr):  # a lone surrogate (half an emoji) is printed escaped, never a traceback
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if argv[:1] == ["sessions"]:
        return _sessions(argv[1:])
    as_json = "--json" in argv
    try:
        o = parse(argv)
        as_json = o.json
        return _dispatch(o)
    except UsageError as exc:
        return render.usage(str(exc), as_json)
    except KeyboardInterrupt:
        print("mcp2repl: interrupted", file=sys.stderr)
        return render.STOPPED


def _dispatch(o: Options) -> int:
    from ..client.trust import SessionError  # not client.registry: a one-shot run never loads ZMQ

    limit = o.max_output_chars
    try:
        if o.stop:
            from . import sessions

            print(sessions.stop(o))
            return render.OK
        code = _library_code(o) if o.library is not None else (program(o) if (o.eval or o.file) else None)
        loaded = helpers(o)
        if o.session or o.gateway:
            from . import sessions

            if not o.session:  # a gateway without a session: a kernel for this one program
                return _gateway_once(o, code, loaded)
            result, limit = sessions.step(o, code, loaded)
            if result is None:
                render.notice(f"session {o.session!r} is ready", o.quiet)
                return render.OK
        else:
            from .. import early

            early.start_v8()  # V8 loads on the other core while oneshot imports the Session
            from . import oneshot

            result = oneshot.run(o, code, loaded)
    except SessionError as exc:
        return render.usage(str(exc), o.json, "SessionError")
    if o.json:
        return render.envelope(result, limit=limit, trace=o.trace)
    if o.library is not None and result.ok and isinstance(result.value, dict):
        # the note where the docs go: why nothing matched, or which words were read as others
        docs, note = result.value.get("docs") or [], result.value.get("note") or ""
        print("\n\n".join([note] * bool(note) + [str(doc) for doc in docs]) if docs or note else f"no tool matches {_shown(o.library)}")
        return render.OK
    return render.human(result, quiet=o.quiet)


def _library_code(o: Options) -> str:
    """The query on a line of its own: an error points at the call's line, which then quotes no query.

    For people the docs come with the note (printed before them); --json keeps the documented
    string[] as its value, the note in its stderr."""
    note = "" if o.json else ", withNote: true"
    return f"await api.library(\n{json.dumps(o.library)},\n{{ limit: {o.limit}{note} }})"


def _shown(query: str, limit: int = 60) -> str:
    """The query as said back: a bounded start of it (api.library refuses queries past 1,000 characters)."""
    return repr(query if len(query) <= limit else query[:limit] + "…")


def _gateway_once(o: Options, code: str | None, loaded: list[tuple[str, str]]) -> int:
    import os

    from ..client.gateway import GatewayKernel
    from ..client.wire import StepOptions
    from .options import load_cell

    assert o.gateway is not None
    kernel = GatewayKernel.start(o.gateway, os.environ.get("MCP2REPL_GATEWAY_TOKEN", ""))
    step = StepOptions(o.timeout, o.max_output_chars, o.trace)
    try:
        result = None
        for path, text in loaded:
            result = kernel.execute(load_cell(path, text), o.timeout, options=step)
            if not result.ok:
                break
        if code is not None and (result is None or result.ok):
            result = kernel.execute(code, o.timeout, options=step)
    finally:
        kernel.close()
        kernel.stop()
    assert result is not None
    return render.envelope(result, limit=o.max_output_chars, trace=o.trace) if o.json else render.human(result, quiet=o.quiet)


def _sessions(argv: list[str]) -> int:
    if argv[:1] == ["export"]:
        from .sessions import export

        return export(argv[1:])
    rest = [a for a in argv if a != "--json"]
    plans = rest[:1] in (["plans"], ["approve"], ["reject"])  # a person deciding an agent's plan (cli/plans.py)
    if rest and not plans:
        return render.usage(f"'mcp2repl sessions' takes only --json, or export / plans / approve / reject, not {' '.join(rest)}", "--json" in argv)
    from ..client.registry import SessionError
    from .sessions import print_listing

    try:
        if plans:
            from .plans import command

            return command(rest, "--json" in argv)
        return print_listing("--json" in argv)
    except SessionError as exc:
        return render.usage(str(exc), "--json" in argv, "SessionError")
    except ValueError as exc:
        return render.usage(str(exc), "--json" in argv)
