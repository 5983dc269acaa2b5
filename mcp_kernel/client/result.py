"""What one step produced, gathered from Jupyter messages into the shape agents read.

The same :class:`StepResult` comes out of a kernel on this machine (ZMQ), a kernel behind a
gateway (websocket) and a one-shot in-process run, so the command line prints all three alike.
Its envelope (``--json``, the step API, serve's structured content) is made and bounded in one
place, envelope.py: an agent reads every byte of it into its context.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

#: The kernel's live tool-call display (display/calltrace.py): steps report calls as data instead.
TRACE_PREFIX = "mcp2repl-calls-"

class _NoData:
    def __repr__(self) -> str:
        return "NO_DATA"


#: A step given no ``data`` (``None`` binds ``null``).
NO_DATA: Any = _NoData()
#: Error names of a step that was stopped rather than one that threw (exit code 3).
STOPPED = frozenset({"InterruptError", "TimeoutError"})
#: The kernel's default --max-output-chars (session.py: SessionOptions), without importing the kernel.
DEFAULT_OUTPUT_LIMIT = 20000
#: Room a result's text/plain has past the limit: the kernel fits the view itself to the limit and
#: writes a footer under it (why it was cut, the artifact with the whole value), which must survive.
TEXT_ROOM = 500
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class StepError:
    """Why a step failed: the JS error's name and message, and its stack in the user's positions."""

    name: str
    message: str
    stack: str
    code: str = ""  # a ToolError's code (declined, confirmation_required, tool_error, …): what a program branches on


@dataclass
class StepResult:
    """One step: its value, what it printed and displayed, its tool calls and artifacts, or its error."""

    value: Any = None  # the result as JSON data when it is JSON (is_json), else None
    text: str | None = None  # the result's text/plain (None for undefined)
    stdout: str = ""
    stderr: str = ""
    displays: list[str] = field(default_factory=list)  # each display's text/plain
    calls: list[dict[str, Any]] = field(default_factory=list)  # only when the step asked for its trace
    artifacts: list[dict[str, Any]] = field(default_factory=list)  # compact handles (envelope.artifact_handle)
    error: StepError | None = None
    elapsed_ms: float = 0.0
    is_json: bool = False  # ``value`` is JSON data (``null`` included): the envelope's ``value``, not ``text``
    notes: list[str] = field(default_factory=list)  # a view's cut, failed or unfinished calls, notices
    #: each display as JSON data when its bundle had JSON (else None: its text is what it is)
    display_data: list[Any] = field(default_factory=list)
    answered_by: int | None = None  # the display that is the answer (api.print's): not repeated in the envelope
    traced: bool = False  # the step asked for its call trace (calls and elapsed_ms belong in the envelope)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def stopped(self) -> bool:
        """Interrupted or timed out (not a program error)."""
        return self.error is not None and self.error.name in STOPPED

    def envelope(self, limit: int = DEFAULT_OUTPUT_LIMIT, trace: bool | None = None) -> dict[str, Any]:
        """The one envelope every face reads (envelope.py): ``{ok, value | text | error}`` and only the
        fields that say something, each bounded by ``limit`` (the session's output limit)."""
        from .envelope import envelope

        return envelope(self, limit, self.traced if trace is None else trace)


def envelope_json(result: StepResult, limit: int = DEFAULT_OUTPUT_LIMIT, trace: bool | None = None) -> str:
    """The envelope as one line of compact JSON that is always valid UTF-8.

    A JS string may hold a lone surrogate (half an emoji, ``'\\ud800'``) that no UTF-8 can
    encode; outside an escape it would stop the write with a traceback. Raw characters are kept
    otherwise (a reader's context is shorter for them), so only surrogates are escaped.
    """
    text = json.dumps(result.envelope(limit, trace), ensure_ascii=False, default=str, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class Collector:
    """Folds a step's IOPub messages and reply into a :class:`StepResult`."""

    def __init__(self) -> None:
        self.result = StepResult()
        self._displays: list[tuple[str | None, str, Any]] = []  # (display id, text, JSON data or None)
        self._shown: str | None = None
        self._code = ""  # the reply's error code: IOPub's error message may come after the reply

    def iopub(self, msg_type: str, content: dict[str, Any]) -> None:
        r = self.result
        if msg_type == "stream":
            if content.get("name") == "stderr":
                r.stderr += content.get("text", "")
            else:
                r.stdout += content.get("text", "")
        elif msg_type == "execute_result":
            data = content.get("data") or {}
            r.text = data.get("text/plain")
        elif msg_type in ("display_data", "update_display_data"):
            display_id = (content.get("transient") or {}).get("display_id")
            if display_id and display_id.startswith(TRACE_PREFIX):
                return
            data = content.get("data") or {}
            shown = (display_id, data.get("text/plain", ""), data.get("application/json"))
            if msg_type == "update_display_data":
                self._displays = [shown if d[0] == display_id else d for d in self._displays]
            else:
                self._displays.append(shown)
        elif msg_type == "clear_output":
            self._displays.clear()
            r.stdout = ""
        elif msg_type == "error":
            self._error(content)

    def _error(self, content: dict[str, Any]) -> None:
        tb = content.get("traceback") or []
        self.result.error = StepError(content.get("ename", "Error"), content.get("evalue", ""), "\n".join(tb))

    def answer(self, value: Any, shown: Any = None, is_json: bool = True) -> None:
        """The step's value (JSON data, unless ``is_json`` is false: then there is none); ``shown`` names the
        display that already shows it (api.print's)."""
        self.result.value, self.result.is_json = (value, True) if is_json else (None, False)
        self._shown = shown if is_json and isinstance(shown, str) else None

    def reply(self, content: dict[str, Any], metadata: dict[str, Any]) -> None:
        from .envelope import artifact_handle

        own = metadata.get("mcp2repl") or {}
        r = self.result
        r.calls = own.get("calls") or []
        r.artifacts = [artifact_handle(h) for h in own.get("artifacts") or [] if isinstance(h, dict)]
        r.notes += [str(line) for line in own.get("notes") or []]
        if content.get("status") == "error" and r.error is None:
            self._error(content)
        if isinstance(own.get("code"), str):
            self._code = own["code"]
        if r.error is None and "value" in own:
            self.answer(own["value"], own.get("shown"))

    def finish(self, elapsed_ms: float) -> StepResult:
        r = self.result
        r.displays = [text for _, text, _ in self._displays]
        r.display_data = [data for _, _, data in self._displays]
        ids = [i for i, _, _ in self._displays]
        r.answered_by = len(ids) - 1 - ids[::-1].index(self._shown) if self._shown in ids and r.error is None else None
        r.elapsed_ms = elapsed_ms
        if r.error is not None and self._code:
            r.error.code = self._code
        return r


#: What the kernel's engine says when a cell's time limit ends it (a step's own limit, applied there).
ENGINE_TIME_LIMIT = "Cell time limit reached"


def timed_out(result: StepResult, limit: float) -> StepResult:
    """A step interrupted for its time limit reads as a TimeoutError (the user did not press stop),
    whether the client interrupted it or the kernel applied the step's limit itself."""
    error = result.error
    if error is not None and (error.name == "InterruptError" or (error.name == "TimeoutError" and error.message == ENGINE_TIME_LIMIT)):
        message = f"the step ran past its time limit of {limit:g} s and was interrupted (state is kept)"
        _, _, rest = result.error.stack.partition("\n")
        result.error = StepError("TimeoutError", message, f"TimeoutError: {message}" + (f"\n{rest}" if rest else ""))
    return result
