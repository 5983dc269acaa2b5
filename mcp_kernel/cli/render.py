"""How a step's result reaches the shell: human text by default, one JSON envelope with ``--json``.

Human output puts the value first (what an agent reads most), then what the program printed and
displayed, then one line per artifact saying how to read it back, and notes (failed calls, what a
view cut) on stderr; errors go to stderr as the JS name, message and stack in the program's own
line numbers. The exit status says which case it was.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from ..client.envelope import read_with
from ..client.result import DEFAULT_OUTPUT_LIMIT, StepResult, envelope_json

OK, THREW, USAGE, STOPPED = 0, 1, 2, 3


def status(result: StepResult) -> int:
    if result.ok:
        return OK
    return STOPPED if result.stopped else THREW


def human(result: StepResult, out: TextIO | None = None, err: TextIO | None = None, quiet: bool = False) -> int:
    """The same rules as the envelope for a person: the value once, each artifact once (a line that
    says how to read it, unless the value or a display says so already), notes on stderr, no timings."""
    out, err = out or sys.stdout, err or sys.stderr
    shown: list[str] = []
    if result.ok and result.text is not None:
        shown.append(result.text)
    elif result.ok and result.is_json and result.answered_by is None:
        shown.append(json.dumps(result.value, ensure_ascii=False))
    for text in shown:
        _line(out, text)
    if result.stdout:
        _line(out, result.stdout)
    if result.stderr:
        _line(err, result.stderr)
    for text in result.displays:
        _line(out, text)
        shown.append(text)
    for handle in result.artifacts:
        if not any(f"artifact {handle.get('name')} " in text for text in shown):
            _line(out, artifact_line(handle))
    for note in [] if quiet else result.notes:
        if not any(note in text for text in shown):
            _line(err, f"[mcp2repl] {note}")
    if result.error is not None:
        e = result.error
        _line(err, e.stack if e.stack.startswith(f"{e.name}: ") else f"{e.name}: {e.message}\n{e.stack}".rstrip())
    out.flush()
    return status(result)


def envelope(result: StepResult, out: TextIO | None = None, limit: int | None = None, trace: bool = False) -> int:
    """The --json envelope (client/envelope.py), bounded by ``limit`` (the step's output limit); ``trace``: with calls and timings."""
    out = out or sys.stdout
    out.write(envelope_json(result, limit or DEFAULT_OUTPUT_LIMIT, trace) + "\n")
    out.flush()
    return status(result)


def artifact_line(handle: dict[str, Any]) -> str:
    size = handle.get("bytes")
    shown = f"{size:,} B" if isinstance(size, int) else "?"
    return f"artifact {handle.get('name')} ({shown}, {handle.get('format')}) at {handle.get('path') or ''}: {read_with(handle)}"


def usage(message: str, as_json: bool, name: str = "UsageError", out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Bad input (or a session that cannot take the step): said once, on one stream: a line on
    stderr for people, the envelope alone on stdout for --json readers (``name``: the error's).
    ``out``/``err``: where a step served by the session's kernel (cli/served.py) collects them."""
    if as_json:
        print(json.dumps({"ok": False, "error": {"name": name, "message": message, "stack": ""}}, separators=(",", ":")), file=out or sys.stdout)
    else:
        print(f"mcp2repl: error: {message}", file=err or sys.stderr)
    return USAGE


def notice(text: str, quiet: bool, err: TextIO | None = None) -> None:
    if not quiet:
        for line in text.splitlines():
            print(f"[mcp2repl] {line}", file=err or sys.stderr)


def _line(stream: TextIO, text: str) -> None:
    stream.write(text if text.endswith("\n") else text + "\n")
