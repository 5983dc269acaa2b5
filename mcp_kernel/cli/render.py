"""How a step's result reaches the shell: human text by default, one JSON envelope with ``--json``.

Human output puts the value first (what an agent reads most), then what the program printed and
displayed, then one line per artifact saying how to read it back; errors go to stderr as the JS
name, message and stack in the program's own line numbers. The exit status says which case it was.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from ..client.result import StepResult

OK, THREW, USAGE, STOPPED = 0, 1, 2, 3


def status(result: StepResult) -> int:
    if result.ok:
        return OK
    return STOPPED if result.stopped else THREW


def human(result: StepResult, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    if result.ok and result.text is not None:
        _line(out, result.text)
    if result.stdout:
        _line(out, result.stdout)
    if result.stderr:
        _line(err, result.stderr)
    for text in result.displays:
        _line(out, text)
    for handle in result.artifacts:
        _line(out, artifact_line(handle))
    if result.error is not None:
        e = result.error
        _line(err, e.stack if e.stack.startswith(f"{e.name}: ") else f"{e.name}: {e.message}\n{e.stack}".rstrip())
    out.flush()
    return status(result)


def envelope(result: StepResult, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    out.write(json.dumps(result.envelope(), ensure_ascii=False, default=str) + "\n")
    out.flush()
    return status(result)


def artifact_line(handle: dict[str, Any]) -> str:
    where = handle.get("relPath") or handle.get("path") or ""
    size = handle.get("bytes")
    shown = f"{size:,} B" if isinstance(size, int) else "?"
    return f"artifact {handle.get('name')} ({shown}, {handle.get('format')}) at {where}: {handle.get('readWith')}"


def usage(message: str, as_json: bool) -> int:
    """Bad input: one line on stderr (and an envelope on stdout for --json readers)."""
    print(f"mcp2repl: error: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": False, "error": {"name": "UsageError", "message": message, "stack": ""}}))
    return USAGE


def notice(text: str, quiet: bool) -> None:
    if not quiet:
        for line in text.splitlines():
            print(f"[mcp2repl] {line}", file=sys.stderr)


def _line(stream: TextIO, text: str) -> None:
    stream.write(text if text.endswith("\n") else text + "\n")
