"""Which calls need approval (servers/approval.py): MCP's annotation defaults, then the config's lists."""

from __future__ import annotations

import pytest
from mcp_types import Tool, ToolAnnotations

from mcp_kernel.servers.approval import approval
from mcp_kernel.servers.spec import parse_spec

SCHEMA = {"type": "object"}


def tool(name: str, **hints: bool) -> Tool:
    return Tool(name=name, inputSchema=SCHEMA, annotations=ToolAnnotations(**hints) if hints else None)


@pytest.mark.parametrize(
    ("hints", "needed", "writes", "why"),
    [
        ({}, True, True, "asks before every call: it may change or delete data (not marked read-only, so destructive by MCP's default) and this server's confirmation is on"),
        ({"read_only_hint": False}, True, True, "asks before every call: it may change or delete data (not marked read-only, so destructive by MCP's default) and this server's confirmation is on"),
        ({"destructive_hint": True}, True, True, "asks before every call: it may change or delete data (destructiveHint) and this server's confirmation is on"),
        ({"destructive_hint": False}, False, True, "runs without asking: it may write but not destroy (destructiveHint: false)"),
        ({"read_only_hint": True}, False, False, "runs without asking: read-only (readOnlyHint)"),
        ({"read_only_hint": True, "destructive_hint": True}, False, False, "runs without asking: read-only (readOnlyHint)"),  # the hint means nothing for reads
    ],
)  # fmt: skip
def test_annotations_decide_by_mcp_defaults(hints: dict[str, bool], needed: bool, writes: bool, why: str) -> None:
    spec = parse_spec("s", {"command": "x", "confirm_destructive": True})
    verdict = approval(tool("t", **hints), spec)
    assert (verdict.needed, verdict.writes, verdict.why) == (needed, writes, why)


def test_confirmation_off_asks_nothing_but_writes_are_still_writes() -> None:
    spec = parse_spec("s", {"command": "x"})
    verdict = approval(tool("t"), spec)
    assert (verdict.needed, verdict.writes) == (False, True)
    assert verdict.why == "runs without asking: it may change or delete data (not marked read-only, so destructive by MCP's default) but \"confirm_destructive\" is off"
    assert approval(tool("t"), spec, confirm_default=True).needed  # the config's top level, when the server does not say
    assert not approval(tool("t"), parse_spec("s", {"command": "x", "confirm_destructive": False}), confirm_default=True).needed


def test_the_config_lists_win_over_annotations() -> None:
    spec = parse_spec("s", {"command": "x", "confirm_destructive": True, "allow_destructive": ["wipe", "both"], "confirm": ["peek", "both"]})
    assert spec.confirm == ("peek", "both")
    allowed = approval(tool("wipe", destructive_hint=True), spec)
    assert (allowed.needed, allowed.writes, allowed.why) == (False, True, 'runs without asking: listed in the server\'s "allow_destructive"')
    confirmed = approval(tool("peek", read_only_hint=True), spec)  # a server's "read-only" is its author's claim
    assert (confirmed.needed, confirmed.why) == (True, 'asks before every call: listed in the server\'s "confirm"')
    assert approval(tool("both"), spec).needed  # in both lists: the safer reading
    assert approval(tool("peek", read_only_hint=True), parse_spec("s", {"command": "x", "confirm": ["peek"]})).needed  # confirmation off: still asks


def test_bad_lists_are_one_clear_problem() -> None:
    assert parse_spec("s", {"command": "x", "confirm": "wipe"}).error == 'server "s": "confirm" must be a list of strings, got "wipe"'
    assert parse_spec("s", {"command": "x", "confirm_destructive": "yes"}).error == 'server "s": "confirm_destructive" must be true or false, got "yes"'
