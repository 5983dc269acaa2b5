"""What one step produced, gathered from Jupyter messages into the shape agents read.

The same :class:`StepResult` comes out of a kernel on this machine (ZMQ), a kernel behind a
gateway (websocket) and a one-shot in-process run, so the command line prints all three alike.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: The kernel's live tool-call display (display/calltrace.py): steps report calls as data instead.
TRACE_PREFIX = "mcp2repl-calls-"
#: Error names of a step that was stopped rather than one that threw (exit code 3).
STOPPED = frozenset({"InterruptError", "TimeoutError"})


@dataclass
class StepError:
    """Why a step failed: the JS error's name and message, and its stack in the user's positions."""

    name: str
    message: str
    stack: str


@dataclass
class StepResult:
    """One step: its value, what it printed and displayed, its tool calls and artifacts, or its error."""

    value: Any = None  # the result as JSON data when it is JSON, else None
    text: str | None = None  # the result's text/plain (None for undefined)
    stdout: str = ""
    stderr: str = ""
    displays: list[str] = field(default_factory=list)  # each display's text/plain
    calls: list[dict[str, Any]] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    error: StepError | None = None
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def stopped(self) -> bool:
        """Interrupted or timed out (not a program error)."""
        return self.error is not None and self.error.name in STOPPED

    def envelope(self) -> dict[str, Any]:
        """``{ ok, value | error, text, stdout, stderr, displays, calls, artifacts, elapsed_ms }`` for ``--json``."""
        out: dict[str, Any] = {"ok": self.ok}
        if self.error is None:
            out.update(value=self.value, text=self.text)
        else:
            out["error"] = asdict(self.error)
        out.update(
            stdout=self.stdout,
            stderr=self.stderr,
            displays=self.displays,
            calls=self.calls,
            artifacts=self.artifacts,
            elapsed_ms=round(self.elapsed_ms, 1),
        )
        return out


class Collector:
    """Folds a step's IOPub messages and reply into a :class:`StepResult`."""

    def __init__(self) -> None:
        self.result = StepResult()
        self._displays: list[tuple[str | None, str]] = []

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
            text = (content.get("data") or {}).get("text/plain", "")
            if msg_type == "update_display_data":
                self._displays = [(i, text if i == display_id else t) for i, t in self._displays]
            else:
                self._displays.append((display_id, text))
        elif msg_type == "clear_output":
            self._displays.clear()
            r.stdout = ""
        elif msg_type == "error":
            self._error(content)

    def _error(self, content: dict[str, Any]) -> None:
        tb = content.get("traceback") or []
        self.result.error = StepError(content.get("ename", "Error"), content.get("evalue", ""), "\n".join(tb))

    def reply(self, content: dict[str, Any], metadata: dict[str, Any]) -> None:
        own = metadata.get("mcp2repl") or {}
        r = self.result
        r.calls = own.get("calls") or []
        r.artifacts = own.get("artifacts") or []
        if content.get("status") == "error" and r.error is None:
            self._error(content)
        if r.error is None:
            r.value = own.get("value")

    def finish(self, elapsed_ms: float) -> StepResult:
        self.result.displays = [t for _, t in self._displays]
        self.result.elapsed_ms = elapsed_ms
        return self.result


def timed_out(result: StepResult, limit: float) -> StepResult:
    """A step interrupted for its time limit reads as a TimeoutError (the user did not press stop)."""
    if result.error is not None and result.error.name == "InterruptError":
        message = f"the step ran past its time limit of {limit:g} s and was interrupted (state is kept)"
        _, _, rest = result.error.stack.partition("\n")
        result.error = StepError("TimeoutError", message, f"TimeoutError: {message}" + (f"\n{rest}" if rest else ""))
    return result
