"""Ranking over a catalog of well-known servers, as users configure them: what comes first, and why.

The catalog is mcp-server-time, server-sequential-thinking and server-memory (tests/fixtures/schemas/
reference_tools.json: their ``tools/list`` definitions), plus server-filesystem and server-everything
(the schema fixtures of test_discovery.py): 38 tools whose descriptions range from five words to
sequentialthinking's sixty lines. Results are ordered by their score, a word that matches only
through a typo correction never counts as covered, and corrections are tried only for words that
match nothing as written.
"""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types
import pytest

from mcp_kernel.servers import catalog
from mcp_kernel.servers.discovery import ToolIndex

SCHEMAS = Path(__file__).resolve().parent.parent / "fixtures" / "schemas"


def reference_catalog() -> catalog.Catalog:
    servers = json.loads((SCHEMAS / "reference_tools.json").read_text())
    servers["filesystem"] = json.loads((SCHEMAS / "filesystem_tools.json").read_text())
    servers["everything"] = json.loads((SCHEMAS / "everything_tools.json").read_text())
    cat = catalog.Catalog()
    cat.rebuild([(s, [mcp_types.Tool.model_validate(t) for t in tools]) for s, tools in servers.items()])
    return cat


@pytest.fixture(scope="module")
def index() -> ToolIndex:
    return ToolIndex(reference_catalog().entries)


def ranking(index: ToolIndex, query: str, n: int = 100) -> list[str]:
    return [f"{r['server']}.{r['name']}" for r in index.search(query, limit=n)["results"]]


def test_the_reported_query(index: ToolIndex) -> None:
    # "zone" is part of "timezone" (both time tools say it): no typo correction to "won", "one" or
    # "done", and the tool that says "current" in a long text comes after both time tools
    out = index.search("current time zone", limit=3)
    assert [(r["server"], r["name"]) for r in out["results"]] == [
        ("time", "get_current_time"),
        ("time", "convert_time"),
        ("sequential-thinking", "sequentialthinking"),
    ]
    assert "note" not in out


# Every result, in order: exact words, words inside compounds, typos, several words, a question.
FULL = [
    (
        "current time zone",
        [
            "time.get_current_time",
            "time.convert_time",
            "sequential-thinking.sequentialthinking",
            "filesystem.get_file_info",
            "everything.gzip-file-as-resource",
            "filesystem.search_files",
        ],
    ),
    ("time zone", ["time.convert_time", "time.get_current_time", "filesystem.get_file_info"]),
    ("convert time", ["time.convert_time", "time.get_current_time", "filesystem.get_file_info"]),
    ("timezone", ["time.get_current_time", "time.convert_time"]),
    ("zone", ["time.get_current_time", "time.convert_time"]),
    ("what time is it in tokyo", ["time.convert_time", "time.get_current_time", "filesystem.get_file_info"]),
    ("convert tiem", ["time.convert_time", "time.get_current_time", "filesystem.get_file_info", "filesystem.search_files"]),
    ("delete relations", ["memory.delete_relations", "memory.delete_entities", "memory.create_relations", "memory.delete_observations"]),
    (
        "add observations",
        [
            "memory.add_observations",
            "memory.delete_observations",
            "memory.create_entities",
            "memory.search_nodes",
            "sequential-thinking.sequentialthinking",
        ],
    ),
    ("sequential thinking", ["sequential-thinking.sequentialthinking"]),
    ("think step by step", ["sequential-thinking.sequentialthinking", "everything.trigger-long-running-operation"]),
    ("serch nodes", ["memory.search_nodes", "memory.open_nodes", "filesystem.search_files", "filesystem.edit_file"]),
]
# The first results of longer lists.
FIRST = [
    ("knowledge graph", ["memory.read_graph", "memory.delete_relations"]),
    ("read grpah", ["memory.read_graph", "filesystem.read_multiple_files", "filesystem.read_text_file"]),
    ("get_current_time", ["time.get_current_time"]),  # a tool's name: that tool first
]
QUERIES = FULL + FIRST


@pytest.mark.parametrize(("query", "expected"), FULL)
def test_full_rankings(index: ToolIndex, query: str, expected: list[str]) -> None:
    assert ranking(index, query) == expected


@pytest.mark.parametrize(("query", "first"), FIRST)
def test_first_results(index: ToolIndex, query: str, first: list[str]) -> None:
    assert ranking(index, query, len(first)) == first


@pytest.mark.parametrize("query", [q for q, _ in QUERIES] + ["file", "list directory", "sum two numbers"])
def test_results_come_in_score_order(index: ToolIndex, query: str) -> None:
    scores = [r["score"] for r in index.search(query, limit=100)["results"]]
    assert scores == sorted(scores, reverse=True), query


def test_typo_matches_do_not_count_as_covering_a_word() -> None:
    # "zone" matches nothing as written; its correction "done" covers nothing, so the tool that has
    # "time" in its name beats the one that says "current" once in a long description
    tools = [
        mcp_types.Tool(name="convert_time", description="Convert time between places.", inputSchema={}),
        mcp_types.Tool(name="sequentialthinking", description="Your current step of thinking, until done with problems.", inputSchema={}),
    ]
    cat = catalog.Catalog()
    cat.rebuild([("s", tools)])
    out = ToolIndex(cat.entries).search("current time zone")
    assert [r["name"] for r in out["results"]] == ["convert_time", "sequentialthinking"]
    assert out["note"] == "Matched similar words: zone → done."


def test_corrections_only_for_words_that_match_nothing(index: ToolIndex) -> None:
    assert "note" not in index.search("time zone")  # part of "timezone": no correction
    assert index.search("convert tiem")["note"] == "Matched similar words: tiem → time."
    assert index.search("tiem")["note"] == "Matched similar words: tiem → time."


def test_a_correction_is_only_a_likely_typo_of_a_catalog_word(index: ToolIndex) -> None:
    """Issue 23, item 11: "touching → though" and "pods → nodes" were offered as corrections.

    A long query word does not stretch the edit budget of a short catalog word, and a word of three
    letters (the stem "pod") is never corrected; when nothing is left, the note says so plainly."""
    tools = [
        mcp_types.Tool(name="git_log", description="Show the commit logs, though only of the current branch.", inputSchema={}),
        mcp_types.Tool(name="git_diff", description="Show changes between commits.", inputSchema={}),
    ]
    cat = catalog.Catalog()
    cat.rebuild([("git", tools)])
    out = ToolIndex(cat.entries).search("git log commits touching a file")
    assert out["results"][0]["name"] == "git_log"
    assert out["note"] == "No tool mentions: touching, file."
    out = index.search("kubernetes pods")
    assert (out["results"], out["note"]) == (
        [],
        'No tool matches "kubernetes pods" (searched 39 tools on 5 servers: time, sequential-thinking, memory, filesystem, '
        "everything). Try fewer or different words, or api.listTools().",
    )
    # typos that are typos still are corrected
    assert index.search("raed file")["note"] == "Matched similar words: raed → read."
    assert index.search("serch fiels")["note"] == "Matched similar words: serch → search, fiels → files."
    assert index.search("directry tree")["note"] == "Matched similar words: directry → directory."
