"""A Session in this process, seen as a step client sees a kernel: its output folded into a StepResult.

The one-shot command (``mcp2repl -e``) and ``mcp2repl serve`` run a Session in their own process,
with no kernel in between; both fold what it prints and returns into the :class:`StepResult` a
kernel's IOPub stream and reply give step clients, so every face prints steps alike. Typed by
protocols, not by the Session's classes: this part imports nothing of the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .envelope import artifact_handle
from .result import Collector, StepError

#: Called with each output message as a kernel would publish it (msg_type, content).
Listener = Callable[[str, dict[str, Any]], None]


class Collected:
    """A Session Output that folds output into a step result, as a kernel's IOPub stream would be.

    ``listener`` also sees every message, live (serve reads the call display for progress).
    """

    def __init__(self, collector: Collector, listener: Listener | None = None) -> None:
        self.collector = collector
        self.listener = listener

    def _publish(self, msg_type: str, content: dict[str, Any]) -> None:
        self.collector.iopub(msg_type, content)
        if self.listener is not None:
            self.listener(msg_type, content)

    def stream(self, name: str, text: str) -> None:
        self._publish("stream", {"name": name, "text": text})

    def display(self, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        kind = "update_display_data" if update and display_id else "display_data"
        self._publish(kind, {"data": data, "transient": {"display_id": display_id} if display_id else {}})

    def clear_output(self, wait: bool) -> None:
        self._publish("clear_output", {"wait": wait})


class _Error(Protocol):
    name: str
    message: str
    traceback: list[str]


class _Result(Protocol):
    """What ``Session.execute`` returns (mcp_kernel.output.Result)."""

    data: dict[str, Any] | None
    error: Any
    calls: list[dict[str, Any]]
    value: Any
    artifacts: list[dict[str, Any]]
    is_json: bool
    notes: list[str]
    shown: str | None


def fold(collector: Collector, result: _Result) -> None:
    """Add one executed cell's outcome to the step result (a kernel's execute_result and reply)."""
    r = collector.result
    if r.traced:
        r.calls += result.calls
    r.artifacts += [artifact_handle(h) for h in result.artifacts]
    r.notes += result.notes
    if result.error is not None:
        e: _Error = result.error
        r.error = StepError(e.name, e.message, "\n".join(e.traceback), e.extra.get("code", ""))
    else:
        r.text = result.data.get("text/plain") if result.data else None
        collector.answer(result.value, result.shown, result.is_json)  # the last cell's is the step's
