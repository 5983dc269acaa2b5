"""A cell result's value as data, beside its MIME bundle.

Steps run from the shell or from Python want the value itself (``"abc"``, ``42``), not its Node-style
text (``'abc'``). Objects and arrays already carry ``application/json``; a value whose bundle has no
JSON of its own (a primitive, an MCP content item, a fitted view, api.print's answer) carries it
under a private key (display/js/result.js), with notes on what was cut and the display that shows
it already. They are taken out here, so notebooks never see them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

VALUE_MIME = "application/vnd.mcp2repl.value+json"
NOTES_MIME = "application/vnd.mcp2repl.notes+json"
SHOWN_MIME = "application/vnd.mcp2repl.shown"


@dataclass
class Split:
    """A result bundle for notebooks (None: nothing to show) and what step clients read of it."""

    bundle: dict[str, Any] | None = None
    value: Any = None
    is_json: bool = False  # the value is JSON data (``null`` included); else step clients read the text
    notes: list[str] = field(default_factory=list)
    shown: str | None = None  # the display id that already shows the answer (api.print)


def split_value(data: dict[str, Any] | None) -> Split:
    """The bundle without the private keys, and the value as JSON data when it is JSON."""
    if data is None:
        return Split()
    if not any(key in data for key in (VALUE_MIME, NOTES_MIME, SHOWN_MIME)):
        return Split(data, data.get("application/json"), "application/json" in data)
    data = dict(data)
    has_value = VALUE_MIME in data or "application/json" in data
    value = data.pop(VALUE_MIME) if VALUE_MIME in data else data.get("application/json")
    notes = [str(line) for line in data.pop(NOTES_MIME, None) or []]
    shown = data.pop(SHOWN_MIME, None)
    return Split(data or None, value, has_value, notes, shown if isinstance(shown, str) else None)
