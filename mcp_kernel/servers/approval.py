"""Which tool calls need a person's approval, and why: a pure function of the tool and its server's entry.

MCP's annotation defaults decide first: a tool not marked ``readOnlyHint: true`` may write, and
for such a tool ``destructiveHint`` defaults to true. A destructive tool needs approval when its
server's confirmation is on (``confirm_destructive``, per server or for the whole config). The
config's per-server lists win over the annotations, since a server's own hints are its author's
claim, not the user's decision: ``allow_destructive`` (never ask) and ``confirm`` (always ask;
listed in both, ``confirm`` wins, the safer reading).

``writes`` is what ``api.plan`` records instead of sending: every call that may write (not
read-only, or listed in ``confirm``), whether or not this session would ask for it. A plan is a
dry run of the writes; one that let writes through because confirmation is off would not be one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Approval:
    """The gate's verdict on one tool: ask first (``needed``), may it write (``writes``), and why, in one line."""

    needed: bool
    writes: bool
    why: str


def approval(tool: Any, spec: Any, confirm_default: bool = False) -> Approval:
    """The verdict for ``tool`` (an MCP Tool: ``name``, ``annotations``) of the server ``spec``
    (``confirm``, ``allow_destructive``, ``confirm_destructive``; ``None``: the config's ``confirm_default``)."""
    name = tool.name
    hints = tool.annotations
    if name in spec.confirm:
        return Approval(True, True, 'asks before every call: listed in the server\'s "confirm"')
    read_only = hints is not None and hints.read_only_hint is True
    if name in spec.allow_destructive:
        return Approval(False, not read_only, 'runs without asking: listed in the server\'s "allow_destructive"')
    if read_only:
        return Approval(False, False, "runs without asking: read-only (readOnlyHint)")
    if hints is not None and hints.destructive_hint is False:
        return Approval(False, True, "runs without asking: it may write but not destroy (destructiveHint: false)")
    said = "destructiveHint" if hints is not None and hints.destructive_hint is True else "not marked read-only, so destructive by MCP's default"
    confirm = spec.confirm_destructive if spec.confirm_destructive is not None else confirm_default
    if confirm:
        return Approval(True, True, f"asks before every call: it may change or delete data ({said}) and this server's confirmation is on")
    return Approval(False, True, f'runs without asking: it may change or delete data ({said}) but "confirm_destructive" is off')


def approval_keys(
    entry: Mapping[str, Any], problem: type[Exception], strings: Callable[[object, str], list[str]], got: Callable[[object], str]
) -> dict[str, Any]:
    """The approval fields of a server entry (``confirm_destructive``, ``allow_destructive``, ``confirm``),
    checked (spec.py's helpers: ``strings``, ``got``); a bad value raises ``problem(field, message)``."""
    confirm = entry.get("confirm_destructive")
    if confirm is not None and not isinstance(confirm, bool):
        raise problem("confirm_destructive", f"must be true or false, got {got(confirm)}")
    return {
        "confirm_destructive": confirm,
        "allow_destructive": tuple(strings(entry.get("allow_destructive"), "allow_destructive")),
        "confirm": tuple(strings(entry.get("confirm"), "confirm")),
    }
