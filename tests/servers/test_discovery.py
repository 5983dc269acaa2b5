"""Tool discovery: ranking (with typos, plurals, prefixes), paging, listings, full definitions,
and search quality as precision@1 over natural queries.

The catalog is the four schema fixtures (tests/fixtures/schemas) as servers everything,
filesystem, demo and features: 49 tools with real-world names, descriptions and parameters.
"""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types
import pytest

from mcp_kernel.servers import catalog
from mcp_kernel.servers.discovery import ToolIndex, describe, library, list_tools, nothing_to_search, summary
from mcp_kernel.servers.search import QueryTooLong

SCHEMAS = Path(__file__).resolve().parent.parent / "fixtures" / "schemas"
FIXTURES = {"everything": "everything_tools", "filesystem": "filesystem_tools", "demo": "demo_tools", "features": "features"}


def _tool(d: dict) -> mcp_types.Tool:
    # features.json has `outputSchema: true` (valid JSON Schema, but not a valid MCP Tool): drop it.
    return mcp_types.Tool.model_validate({k: v for k, v in d.items() if k != "outputSchema" or isinstance(v, dict)})


def _catalog(servers: dict[str, list[mcp_types.Tool]]) -> catalog.Catalog:
    cat = catalog.Catalog()
    cat.rebuild(list(servers.items()))
    return cat


@pytest.fixture(scope="module")
def cat() -> catalog.Catalog:
    return _catalog({s: [_tool(d) for d in json.loads((SCHEMAS / f"{f}.json").read_text())] for s, f in FIXTURES.items()})


@pytest.fixture(scope="module")
def index(cat) -> ToolIndex:
    return ToolIndex(cat.entries)


def top(index: ToolIndex, query: str, **kw) -> tuple[str, str] | None:
    results = index.search(query, **kw)["results"]
    return (results[0]["server"], results[0]["name"]) if results else None


def names(index: ToolIndex, query: str, **kw) -> list[str]:
    return [r["name"] for r in index.search(query, **kw)["results"]]


# ---- summaries ------------------------------------------------------------------------------


def test_summary_is_first_sentence_on_one_line():
    assert summary("Search the catalogue and return the best matches first.\n\n    Ranking: title words") == (
        "Search the catalogue and return the best matches first."
    )
    assert summary("Line one\ncontinues here. Second sentence.") == "Line one continues here."
    long = summary("word " * 100)
    assert len(long) == 160 and long.endswith("…")
    assert summary(None) == ""


# ---- ranking --------------------------------------------------------------------------------


def test_result_fields(index):
    out = index.search("sum two numbers", limit=2)
    assert set(out) == {"query", "total", "hasMore", "nextOffset", "results"}
    first = out["results"][0]
    assert first["name"] == "get-sum" and first["server"] == "everything"
    assert first["call"] == "await mcp.everything.get_sum({ a: 1, b: 1 })"
    assert first["summary"] == "Returns the sum of two numbers"
    assert first["score"] > out["results"][1]["score"] > 0


def test_typos_and_plurals(index):
    out = index.search("serch boks")
    assert (out["results"][0]["server"], out["results"][0]["name"]) == ("demo", "search_books")
    assert out["note"] == "Matched similar words: serch → search, boks → book."
    assert top(index, "directry tree") == ("filesystem", "directory_tree")  # distance 1
    assert top(index, "subscripton updaets") == ("everything", "toggle-subscriber-updates")  # transposition
    assert set(names(index, "genre", limit=100)) == set(names(index, "genres", limit=100))  # same stem, same tools
    assert top(index, "genres") == ("demo", "list_genres")
    assert top(index, "genr") == ("demo", "list_genres")  # a prefix
    assert names(index, "logg") == ["toggle-simulated-logging"]  # a partial word is not a typo of "long" or "logo"


def test_exact_name_first(index):
    # read_file is deprecated and outscored by read_text_file, but asking for it by name wins
    assert names(index, "read a file")[0] == "read_text_file"
    for query in ("read_file", "READ_FILE", "filesystem.read_file", "read file"):
        assert names(index, query)[0] == "read_file", query
    assert names(index, "get_sum")[0] == "get-sum"  # the JS-safe name
    assert names(index, "dotted_and_dashed_name")[0] == "dotted.and-dashed name"


def test_more_matched_terms_rank_first():
    tools = [
        mcp_types.Tool(name="alpha_alpha", description="Alpha alpha alpha.", inputSchema={"type": "object", "properties": {"alpha": {}}}),
        mcp_types.Tool(name="other", description="Mentions alpha once, and beta once, among many other words here.", inputSchema={}),
        mcp_types.Tool(name="beta_only", description="Beta.", inputSchema={}),
    ]
    idx = ToolIndex(_catalog({"s": tools}).entries)
    assert names(idx, "alpha beta") == ["other", "alpha_alpha", "beta_only"]
    assert names(idx, "alpha") == ["alpha_alpha", "other"]


def test_multi_term_ordering(index):
    assert names(index, "list directory", limit=3) == ["list_directory", "list_directory_with_sizes", "list_allowed_directories"]
    assert names(index, "list directory sizes")[0] == "list_directory_with_sizes"


def test_ties_break_by_server_then_name():
    tools = [mcp_types.Tool(name=n, description="Same words.", inputSchema={}) for n in ("b_tool", "a_tool")]
    idx = ToolIndex(_catalog({"zeta": tools, "alpha": list(tools)}).entries)
    out = idx.search("same words")["results"]
    assert [(r["server"], r["name"]) for r in out] == [("alpha", "a_tool"), ("alpha", "b_tool"), ("zeta", "a_tool"), ("zeta", "b_tool")]


def test_paging(index):
    first = index.search("file", limit=5)
    assert first["total"] > 10 and first["hasMore"] is True and first["nextOffset"] == 5 and len(first["results"]) == 5
    pages, offset = [], 0
    while offset is not None:
        page = index.search("file", limit=5, offset=offset)
        pages += [r["name"] for r in page["results"]]
        offset = page["nextOffset"]
    assert pages == names(index, "file", limit=100)
    assert len(pages) == first["total"] == len(set(pages))
    last = index.search("file", limit=5, offset=first["total"] - 2)
    assert len(last["results"]) == 2 and last["hasMore"] is False and last["nextOffset"] is None
    assert len(index.search("file", limit=0)["results"]) == 1  # limit clamped to 1..100
    assert len(index.search("", limit=1000)["results"]) == 49


def test_empty_query_lists_everything_in_catalog_order(index, cat):
    out = index.search("", limit=100)
    assert out["total"] == 49 and out["hasMore"] is False and out["nextOffset"] is None
    assert [(r["server"], r["name"]) for r in out["results"]] == [(e.server, e.name) for e in cat.entries]
    assert {r["score"] for r in out["results"]} == {0}


def test_server_filter(index):
    assert {r["server"] for r in index.search("read", server="filesystem", limit=100)["results"]} == {"filesystem"}
    assert names(index, "file", server="demo") == []
    assert index.search("", server="demo")["total"] == 8
    out = index.search("xyzzy", server="demo")
    assert out["note"] == (
        'No tool matches "xyzzy" (searched 8 tools on server "demo"). Try fewer or different words, or api.listTools().'
    )
    assert (
        index.search("file", server="nope")["note"] == 'Unknown server "nope". Servers with tools: everything, filesystem, demo, features.'
    )


def test_empty_result_note(index):
    out = index.search("xyzzy plugh")
    assert out["results"] == [] and out["total"] == 0 and out["hasMore"] is False and out["nextOffset"] is None
    assert out["note"] == (
        'No tool matches "xyzzy plugh" (searched 49 tools on 4 servers: everything, filesystem, demo, features). '
        "Try fewer or different words, or api.listTools()."
    )
    assert index.search("turn logging on")["note"] == "No tool mentions: turn."


def test_sync_rebuilds_only_when_the_catalog_changes(cat):
    idx = ToolIndex(cat.entries)
    scorer = idx._scorer
    assert idx.sync(cat.entries)._scorer is scorer
    bigger = _catalog({"extra": [mcp_types.Tool(name="launch_rocket", description="Send it up.", inputSchema={})]})
    assert idx.sync(cat.entries + bigger.entries)._scorer is not scorer
    assert top(idx, "rocket") == ("extra", "launch_rocket")


# ---- search quality -------------------------------------------------------------------------

QUALITY = [
    ("read a file", "filesystem", "read_text_file"),
    ("sum two numbers", "everything", "get-sum"),
    ("book by id", "demo", "get_book"),
    ("serch boks", "demo", "search_books"),
    ("directory tree", "filesystem", "directory_tree"),
    ("write a file", "filesystem", "write_file"),
    ("replace lines in a file", "filesystem", "edit_file"),
    ("create a folder", "filesystem", "create_directory"),
    ("rename a file", "filesystem", "move_file"),
    ("file metadata", "filesystem", "get_file_info"),
    ("find files matching a glob pattern", "filesystem", "search_files"),
    ("list files in a folder", "filesystem", "list_directory"),
    ("which directories can I access", "filesystem", "list_allowed_directories"),
    ("read several files simultaneously", "filesystem", "read_multiple_files"),
    ("image or audio file", "filesystem", "read_media_file"),
    ("last N lines of a file", "filesystem", "read_text_file"),
    ("echo a message back", "everything", "echo"),
    ("environment variables", "everything", "get-env"),
    ("tiny logo picture", "everything", "get-tiny-image"),
    ("compress a file with gzip", "everything", "gzip-file-as-resource"),
    ("long running operation with progress", "everything", "trigger-long-running-operation"),
    ("turn logging on or off", "everything", "toggle-simulated-logging"),
    ("resource links", "everything", "get-resource-links"),
    ("deep research topic", "everything", "simulate-research-query"),
    ("subscription updates", "everything", "toggle-subscriber-updates"),
    ("author bio", "demo", "get_author"),
    ("genres with average rating", "demo", "list_genres"),
    ("monthly sales revenue", "demo", "sales_report"),
    ("book statistics as json", "demo", "book_stats_json"),
    ("draw a book cover", "demo", "render_cover"),
    ("inventory check", "demo", "slow_inventory_check"),
    ("listGenres", "demo", "list_genres"),
    ("enum values", "features", "enums_and_consts"),
    ("recursive schema refs", "features", "refs_and_recursion"),
    ("nullable union", "features", "unions"),
    ("move files between directories", "filesystem", "move_file"),
    ("directry tree", "filesystem", "directory_tree"),
]


def test_search_quality_precision_at_1(index):
    misses = [(q, top(index, q), (s, n)) for q, s, n in QUALITY if top(index, q) != (s, n)]
    n = len(QUALITY)
    p = (n - len(misses)) / n
    print(f"precision@1 = {p:.2f} over {n} queries")
    for query, got, want in misses:
        print(f"  miss: {query!r}: got {got}, want {want}")
    assert n >= 25 and len({s for _, s, _ in QUALITY}) == 4
    assert p >= 0.9


# ---- listings, definitions, docs ------------------------------------------------------------


def test_list_tools(cat):
    rows = list_tools(cat.entries)
    assert len(rows) == 49 and set(rows[0]) == {"name", "server", "call", "safe", "description", "signature"}
    row = next(r for r in rows if r["name"] == "get-sum")
    assert row == {
        "name": "get-sum",
        "server": "everything",
        "call": "mcp.everything.get_sum",
        "safe": "get_sum",
        "description": "Returns the sum of two numbers",
        "signature": "get_sum(args: { a: number; b: number }): Promise<unknown>",
    }
    demo = list_tools(cat.entries, schemas=True, server="demo")
    assert [r["server"] for r in demo] == ["demo"] * 8
    book = next(r for r in demo if r["name"] == "search_books")
    assert book["description"] == "Search the catalogue and return the best matches first."
    assert book["inputSchema"]["properties"]["query"]["type"] == "string" and "outputSchema" in book


def test_describe(cat):
    read = describe(cat.get("filesystem", "read_text_file"), None, None)
    assert read["annotations"] == {"readOnly": True, "openWorld": False}
    assert read["qualified"] == "filesystem.read_text_file" and read["call"] == "mcp.filesystem.read_text_file"
    assert read["example"] == 'await mcp.filesystem.read_text_file({ path: "example" })'
    assert read["observedOutput"] is None and read["outputSchema"]["required"] == ["content"]
    assert "async function read_text_file(" in read["doc"] and read["description"].startswith("Read the complete contents")
    assert set(read) == {
        *("name", "server", "qualified", "call", "safe", "title", "description", "inputSchema", "outputSchema"),
        *("annotations", "signature", "example", "doc", "observedOutput"),
    }

    echo = describe(cat.get("everything", "echo"), "{ echoed: string }", "json text")
    assert echo["annotations"] == {"readOnly": True, "destructive": False, "idempotent": True, "openWorld": False}
    assert echo["observedOutput"] == {"shape": "{ echoed: string }", "source": "json text"}
    assert echo["signature"].endswith("Promise<{ echoed: string }>")

    dotted = describe(cat.get("features", "dotted.and-dashed name"), None, None)
    assert dotted["annotations"] == {"destructive": True, "openWorld": False}
    assert dotted["call"] == "mcp.features.dotted_and_dashed_name"
    assert describe(cat.get("features", "arrays_and_tuples"), None, None)["annotations"] == {}
    nested = describe(cat.get("features", "nested_objects"), "ignored", "structuredContent")
    assert nested["outputSchema"]["type"] == "object"


def test_library(index):
    docs, note = library(index, "sum two numbers", limit=2, observed={("everything", "get-sum"): "{ sum: number }"})
    assert len(docs) == 2 and note == ""
    assert "async function get_sum(args: {" in docs[0] and "Promise<{ sum: number }>" in docs[0]
    assert docs[0].endswith("// Example: await mcp.everything.get_sum({ a: 1, b: 1 })")


def test_library_says_what_it_searched(index):
    # the note api.searchTools gives, so that an empty list is never the whole answer
    assert library(index, "xyzzy") == ([], index.search("xyzzy")["note"])
    assert library(index, " xyzzy ")[1] == (
        'No tool matches "xyzzy" (searched 49 tools on 4 servers: everything, filesystem, demo, features). '
        "Try fewer or different words, or api.listTools()."
    )
    docs, note = library(index, "serch boks", limit=1)
    assert "async function search_books(" in docs[0] and note == "Matched similar words: serch → search, boks → book."
    assert library(ToolIndex([]), "anything") == ([], "No tools to search: no MCP server offers any. await api.servers() shows their state.")


# ---- bounded queries (issue 22, item 17) ------------------------------------------------------------


def test_an_overlong_query_is_refused_naming_only_its_start(index):
    query = " ".join(f"word{i}" for i in range(20000))
    with pytest.raises(QueryTooLong) as refused:
        index.search(query)
    assert str(refused.value) == (
        f"the query is {len(query):,} characters and 20,000 words long; give at most 1,000 characters and 32 words "
        "(it began: 'word0 word1 word2 word3 word4 word5 word6 word7 word8 word9…')"
    )
    with pytest.raises(QueryTooLong, match=r"^the query is 1,001 characters and 1 words long"):
        library(index, "x" * 1001)
    assert index.search(" ".join(["file"] * 32))["total"] > 0  # at the limits: searched as usual


@pytest.mark.parametrize("word", ["q" * 1000, "readfilecontentsquickly" * 40, "é" * 999])
def test_long_words_are_not_expanded_as_typos(index, word):
    """A 1,000-letter word once meant hundreds of thousands of deletions for the typo lookup (minutes, gigabytes)."""
    import time

    started = time.monotonic()
    assert index.search(word[:1000])["total"] == 0
    assert time.monotonic() - started < 10  # generous for a loaded machine: it was minutes


def test_an_empty_catalog_says_why_each_server_has_no_tools() -> None:
    from mcp_kernel.servers.manager import ServerRow

    rows = [
        ServerRow("slow", "stdio", "starting", None, None),
        ServerRow("bad", "stdio", "error", None, "exited with status 1:\n  " + "x" * 300),
        ServerRow("empty", "http", "ready", 0, None),
        ServerRow("gh", "http", "needs_login", None, "log in first."),
        ServerRow("off", "stdio", "stopped", None, None),
    ]
    assert nothing_to_search(rows) == (
        "No tools to search: no MCP server offers any. slow is still starting. bad failed: exited with status 1: "
        + "x" * 138 + "…. empty offers no tools. gh needs a login: log in first. off is stopped. await api.servers() shows their state."
    )
    assert nothing_to_search([]) == "No tools to search: no MCP server runs in this session (one the config disables starts with await api.connect(name))."
    assert library(ToolIndex([]).sync([], rows[:1]), "x")[1] == (
        "No tools to search: no MCP server offers any. slow is still starting. await api.servers() shows their state."
    )
