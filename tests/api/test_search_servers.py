"""api.searchTools and api.library in a Session whose servers are the well-known ones users configure.

mcp-server-time, server-filesystem and server-everything run for real; server-sequential-thinking and
server-memory are not installed here, so a fixture server lists their recorded tool definitions
(tests/fixtures/schemas/reference_tools.json). tests/servers/test_search_ranking.py has the ranking rules.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EVERYTHING, FIXTURES, SERVERS, SessionHarness

FILESYSTEM = FIXTURES / "node" / "node_modules" / ".bin" / "mcp-server-filesystem"
LISTED = [sys.executable, str(SERVERS / "listed_tools_server.py"), str(FIXTURES / "schemas" / "reference_tools.json")]

pytestmark = pytest.mark.skipif(
    not (EVERYTHING.exists() and FILESYSTEM.exists()), reason="npm test servers not installed (scripts/bootstrap.sh --test)"
)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    cwd = tmp_path_factory.mktemp("search")
    config = {
        "mcpServers": {
            "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
            "sequential-thinking": {"command": LISTED[0], "args": [*LISTED[1:], "sequential-thinking"]},
            "memory": {"command": LISTED[0], "args": [*LISTED[1:], "memory"]},
            "filesystem": {"command": str(FILESYSTEM), "args": [str(cwd)]},
            "everything": {"command": str(EVERYTHING)},
        }
    }
    harness = SessionHarness(Path(cwd), config)
    states = harness.json("(await api.servers({ wait: true })).map(s => [s.name, s.state])")
    assert {name: state for name, state in states} == dict.fromkeys(config["mcpServers"], "ready")
    yield harness
    harness.close()


def test_current_time_zone(session: SessionHarness) -> None:
    out = session.json("await api.searchTools('current time zone', { limit: 3 })")
    assert [(r["server"], r["name"], r["call"]) for r in out["results"]] == [
        ("time", "get_current_time", 'await mcp.time.get_current_time({ timezone: "example" })'),
        (
            "time",
            "convert_time",
            'await mcp.time.convert_time({ source_timezone: "example", time: "example", target_timezone: "example" })',
        ),
        (
            "sequential-thinking",
            "sequentialthinking",
            'await mcp.sequential_thinking.sequentialthinking({ thought: "example", nextThoughtNeeded: true, thoughtNumber: 1, totalThoughts: 1 })',
        ),
    ]
    assert "note" not in out  # no "zone → won": "zone" is part of "timezone"
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0


def test_library_follows_the_same_ranking(session: SessionHarness) -> None:
    result, out = session.run(
        "(await api.library('current time zone', { limit: 2 })).map(d => d.split('\\n').find(l => l.startsWith('async function')))"
    )
    assert result.data["application/json"] == ["async function get_current_time(args: {", "async function convert_time(args: {"]
    assert out.text("stderr") == ""
