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
    from ..client.registry import SessionError  # zmq only: cheap next to what either path needs

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
            result = sessions.step(o, code, loaded)
            if result is None:
                render.notice(f"session {o.session!r} is ready", o.quiet)
                return render.OK
        else:
            from . import oneshot

            result = oneshot.run(o, code, loaded)
    except SessionError as exc:
        return render.usage(str(exc), o.json)
    if o.json:
        return render.envelope(result)
    if o.library is not None and result.ok and isinstance(result.value, list):
        print("\n\n".join(str(doc) for doc in result.value) if result.value else f"no tool matches {o.library!r}")
        return render.OK
    return render.human(result)


def _library_code(o: Options) -> str:
    return f"await api.library({json.dumps(o.library)}, {{ limit: {o.limit} }})"


def _gateway_once(o: Options, code: str | None, loaded: list[tuple[str, str]]) -> int:
    import os

    from ..client.gateway import GatewayKernel
    from .options import load_cell

    assert o.gateway is not None
    kernel = GatewayKernel.start(o.gateway, os.environ.get("MCP2REPL_GATEWAY_TOKEN", ""))
    try:
        result = None
        for path, text in loaded:
            result = kernel.execute(load_cell(path, text), o.timeout)
            if not result.ok:
                break
        if code is not None and (result is None or result.ok):
            result = kernel.execute(code, o.timeout)
    finally:
        kernel.close()
        kernel.stop()
    assert result is not None
    return render.envelope(result) if o.json else render.human(result)


def _sessions(argv: list[str]) -> int:
    rest = [a for a in argv if a != "--json"]
    if rest:
        return render.usage(f"'mcp2repl sessions' takes only --json, not {' '.join(rest)}", "--json" in argv)
    from .sessions import print_listing

    return print_listing("--json" in argv)
