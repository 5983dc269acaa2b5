"""api.guide: runtime guidance ranked by query."""

from __future__ import annotations

import pytest

from mcp_kernel.api import guide as guide_module
from mcp_kernel.api.guide import guide


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("timeout", "timeouts"),
        ("save artifact", "artifacts"),
        ("catch tool error", "errors"),
        ("run calls in parallel", "concurrency"),
        ("structuredContent raw result", "results"),
        ("read a resource", "resources and prompts"),
        ("sleep", "timers"),
        ("globals across cells", "persistence"),
        ("search tools", "discovery"),
        ("connect a server", "servers"),
        ("print a big value", "printing"),
        ("show html", "display"),
        ("unknown argument", "argument checks"),
        ("stop a stuck cell", "interrupts"),
        ("how do I call a tool", "calling tools"),
        ("progress", "progress"),
        ("live progress bar", "progress"),
        ("server asks for input", "server questions"),
        ("elicitation without stdin", "server questions"),
        ("long running task", "task tools"),
        ("set log level", "roots and log level"),
        ("subscribe to a resource", "resources and prompts"),
        ("approve writes once", "approvals"),
        ("plan and apply", "approvals"),
    ],
)
def test_guide_ranking(query, topic):
    assert guide(query)[0]["topic"] == topic


def test_guide_shape():
    assert len(guide_module.GUIDE) >= 15
    first = guide("", limit=3)
    assert [g["topic"] for g in first] == [t for t, _, _ in guide_module.GUIDE[:3]] and set(first[0]) == {"topic", "text"}
    assert len(guide("tool", limit=2)) == 2
    assert guide("xyzzy") == []
    assert "ToolError" in guide("errors")[0]["text"]


def test_no_match_note_lists_every_topic():
    assert guide("xyzzy") == []
    assert guide_module.no_match_note(" xyzzy ") == (
        'No guidance matches "xyzzy" (searched 25 topics: titles, keywords and texts). Topics: calling tools, argument checks, '
        "results, errors, agent steps, agent commands, reading errors, loading helpers, concurrency, timeouts, interrupts, "
        "printing, artifacts, display, discovery, servers, login, resources and prompts, approvals, server questions, task tools, "
        "roots and log level, persistence, timers, progress. "
        'To find tools, use api.searchTools("xyzzy").'
    )
