"""Where one execution's output goes, and what it returns: the Session's side of every face.

An :class:`Output` is given per execution (a Jupyter parent message, a terminal, a list); output
that arrives after its cell ended still goes to that cell's Output. Whatever reaches an Output
has the config's secrets masked (:class:`Masked`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from .engine import JSError
from .servers.secrets import Redactor


class Output(Protocol):
    """Where one execution's output goes (a Jupyter parent message, a terminal, a list…)."""

    def stream(self, name: str, text: str) -> None: ...

    def display(self, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None: ...

    def clear_output(self, wait: bool) -> None: ...


class Masked:
    """An Output that masks configured secrets in everything before passing it on."""

    def __init__(self, out: Output, redactor: Redactor) -> None:
        self.out = out
        self.redactor = redactor

    def stream(self, name: str, text: str) -> None:
        self.out.stream(name, self.redactor.text(text))

    def display(self, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        self.out.display(self.redactor.data(data), metadata, display_id, update)

    def clear_output(self, wait: bool) -> None:
        self.out.clear_output(wait)


class Discard:
    """An Output that drops everything (silent executions)."""

    def stream(self, name: str, text: str) -> None:
        pass

    def display(self, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        pass

    def clear_output(self, wait: bool) -> None:
        pass


@dataclass
class Result:
    """One finished execution: a MIME bundle (None for ``undefined``) or an error, and its tool calls."""

    data: dict[str, Any] | None = None
    error: JSError | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    #: the result as JSON data when it is JSON (None otherwise), and the artifacts the cell saved
    value: Any = None
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    #: is ``value`` JSON (``null`` included)? Notes for step clients (what a view cut, failed or
    #: unfinished calls) and the display that already shows the answer (api.print's)
    is_json: bool = False
    notes: list[str] = field(default_factory=list)
    shown: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def masked(self, redact: Redactor) -> Result:
        """The same result with configured secrets masked in its data, value and error."""
        if not redact:
            return self
        if (error := self.error) is not None:
            error.message = redact.text(error.message)
            error.traceback = [redact.text(line) for line in error.traceback]
            error.extra = {k: redact.text(v) for k, v in error.extra.items()}
        notes = [redact.text(line) for line in self.notes]
        return Result(redact.data(self.data), error, self.calls, redact.data(self.value), self.artifacts, self.is_json, notes, self.shown)
