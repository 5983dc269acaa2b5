"""End-to-end tests of the built-in demo server, driven by the official MCP client.

The server is started for real (``python -m mcp_kernel.demo.server``) over stdio, and
once over each HTTP transport, because what matters to users is what arrives on the
wire: schemas, structured content, images, progress notifications and errors. The
data set is deterministic, so results are compared exactly ("golden" values).
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ImageContent, TextContent

from mcp_kernel.demo import data as demo_data
from mcp_kernel.demo import logic as demo_logic
from mcp_kernel.demo import server as demo_server

REPO_ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """The kernel runs the SDK on asyncio; module scope lets the server session be shared."""
    return "asyncio"


@pytest.fixture(scope="module")
async def demo() -> AsyncIterator[ClientSession]:
    """One demo server for the whole module: its tools are read-only, and each start costs ~1 s."""
    async with demo_session() as session:
        yield session


# --------------------------------------------------------------------------------------
# Helpers (kept in this file on purpose: no conftest.py in this tree).
# --------------------------------------------------------------------------------------


@asynccontextmanager
async def demo_session(*extra_args: str) -> AsyncIterator[ClientSession]:
    """Start ``python -m mcp_kernel.demo.server`` over stdio and yield an initialised session."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_kernel.demo.server", *extra_args], cwd=str(REPO_ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def demo_http_server(transport: str) -> AsyncIterator[str]:
    """Run the demo server on a free loopback port; yield its base URL once it accepts connections."""
    port = _free_port()
    command = [sys.executable, "-m", "mcp_kernel.demo.server", "--transport", transport, "--port", str(port)]
    with tempfile.TemporaryFile() as log:
        proc = await anyio.open_process(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            await _wait_until_listening(proc, port, log)
            yield f"http://127.0.0.1:{port}"
        finally:
            await _stop(proc)


async def _wait_until_listening(proc: anyio.abc.Process, port: int, log: IO[bytes]) -> None:
    """Poll the port until it accepts a connection; fail early (with the log) if the server died."""
    deadline = time.monotonic() + 120  # generous: a Python server took 9 s to listen at load 22
    while True:
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            if proc.returncode is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"server not listening on {port} (exit {proc.returncode}): {log.read().decode()}")
            await anyio.sleep(0.05)
        else:
            await stream.aclose()
            return


async def _stop(proc: anyio.abc.Process) -> None:
    """Terminate, then kill if it does not exit promptly."""
    if proc.returncode is None:
        proc.terminate()
        try:
            with anyio.fail_after(5):
                await proc.wait()
        except TimeoutError:
            proc.kill()
            await proc.wait()


def text_of(result: CallToolResult) -> str:
    """The single text block of a result."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def structured(result: CallToolResult) -> dict[str, Any]:
    """Structured content, checked against the text block that mirrors it for older clients."""
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert json.loads(text_of(result)) == result.structured_content
    return result.structured_content


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (which must come first)."""
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


# --------------------------------------------------------------------------------------
# In-process checks of the data set and helpers (fast, no server).
# --------------------------------------------------------------------------------------


def test_demo_data_is_consistent() -> None:
    """Ids are unique, references resolve, genres are known and sales cover every month."""
    book_ids = [book["id"] for book in demo_data.BOOKS]
    author_ids = {author["id"] for author in demo_data.AUTHORS}
    assert len(book_ids) == len(set(book_ids)) == 40
    assert len(author_ids) == 10
    assert {book["author_id"] for book in demo_data.BOOKS} == author_ids
    assert sorted({genre for book in demo_data.BOOKS for genre in book["genres"]}) == list(demo_data.GENRES)
    assert set(demo_data.SALES) == set(book_ids)
    for book in demo_data.BOOKS:
        sales = demo_data.SALES[book["id"]]
        assert set(sales) == set(demo_data.SALES_YEARS)
        for year, months in sales.items():
            assert len(months) == 12
            assert all(units >= 0 for units in months)
            if year < book["year"]:
                assert sum(months) == 0, f"{book['id']} sold before it was published"


def test_cover_png_is_deterministic() -> None:
    """Same id, same bytes; different ids, different covers; always a 64x96 PNG."""
    first = demo_logic.cover_png("b01")
    assert first == demo_logic.cover_png("b01")
    assert first != demo_logic.cover_png("b02")
    assert png_size(first) == (64, 96)


# --------------------------------------------------------------------------------------
# Over stdio with the official client.
# --------------------------------------------------------------------------------------


async def test_initialize_and_list_tools(demo: ClientSession) -> None:
    """Every tool is listed with a description and a JSON Schema that carries enums, defaults and bounds."""
    assert demo.server_info is not None and demo.server_info.name == "mcp2repl-demo"
    assert demo.instructions is not None and "Inkwell Lane" in demo.instructions
    tools = {tool.name: tool for tool in (await demo.list_tools()).tools}

    assert sorted(tools) == [
        "book_stats_json",
        "get_author",
        "get_book",
        "list_genres",
        "render_cover",
        "sales_report",
        "search_books",
        "slow_inventory_check",
    ]
    for tool in tools.values():
        assert tool.description, tool.name
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    search = tools["search_books"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["limit"] == {
        "default": 10,
        "description": "Maximum number of results.",
        "maximum": 40,
        "minimum": 1,
        "title": "Limit",
        "type": "integer",
    }
    genre_enum = search["properties"]["genre"]["anyOf"][0]["enum"]
    assert genre_enum == list(demo_data.GENRES)
    report = tools["sales_report"].input_schema["properties"]
    assert report["group_by"]["enum"] == ["genre", "author", "month", "book"]
    assert report["group_by"]["default"] == "genre"
    assert report["year"]["anyOf"][0]["enum"] == [2023, 2024]
    slow = tools["slow_inventory_check"].input_schema["properties"]
    assert (slow["seconds"]["default"], slow["steps"]["default"]) == (2.0, 5)
    with_output = {name for name, tool in tools.items() if tool.output_schema is not None}
    assert with_output == {
        "get_author",
        "get_book",
        "list_genres",
        "sales_report",
        "search_books",
        "slow_inventory_check",
    }
    assert tools["get_book"].output_schema is not None
    assert tools["get_book"].output_schema["properties"]["units_sold"]["type"] == "object"


async def test_search_books(demo: ClientSession) -> None:
    """Ranking, genre filter, empty query and limit, with exact structured results."""
    lantern = structured(await demo.call_tool("search_books", {"query": "lantern"}))
    moon = structured(await demo.call_tool("search_books", {"query": "Moon"}))
    poetry = structured(await demo.call_tool("search_books", {"query": "", "genre": "poetry", "limit": 2}))
    none = structured(await demo.call_tool("search_books", {"query": "zeppelin"}))
    bad_genre = await demo.call_tool("search_books", {"query": "x", "genre": "horror"})

    assert lantern == {
        "query": "lantern",
        "genre": None,
        "total_matches": 1,
        "results": [
            {
                "id": "b01",
                "title": "The Lantern Cartographer",
                "author": "Mira Okonkwo-Hale",
                "year": 2012,
                "genres": ["fantasy"],
                "rating": 4.6,
                "price": 14.99,
                "stock": 12,
                "score": 4.0,
            }
        ],
    }
    # Title match (weight 3 + summary 1) outranks a summary-only match with a better rating.
    assert [(hit["id"], hit["score"]) for hit in moon["results"]] == [("b39", 4.0), ("b15", 1.0)]
    assert poetry["total_matches"] == 4
    assert [hit["id"] for hit in poetry["results"]] == ["b10", "b12"]
    assert none == {"query": "zeppelin", "genre": None, "total_matches": 0, "results": []}
    assert bad_genre.is_error
    assert "genre" in text_of(bad_genre)


async def test_get_book_and_unknown_id(demo: ClientSession) -> None:
    """The full record, and a tool error that tells the model what ids look like."""
    book = structured(await demo.call_tool("get_book", {"book_id": "B01"}))
    missing = await demo.call_tool("get_book", {"book_id": "b99"})

    assert book == {
        "id": "b01",
        "title": "The Lantern Cartographer",
        "author_id": "a01",
        "author": "Mira Okonkwo-Hale",
        "year": 2012,
        "genres": ["fantasy"],
        "rating": 4.6,
        "price": 14.99,
        "stock": 12,
        "pages": 412,
        "summary": "A mapmaker discovers that her lantern light redraws the streets of a drowned city.",
        "units_sold": {"2023": 139, "2024": 143},
    }
    assert missing.is_error
    assert missing.structured_content is None
    assert text_of(missing) == (
        "Error executing tool get_book: Unknown book id 'b99'. Ids run from 'b01' to 'b40'; use search_books to find one."
    )


async def test_get_author(demo: ClientSession) -> None:
    """Lookup by id, full name and partial name; ambiguous and unknown names are tool errors."""
    by_part = structured(await demo.call_tool("get_author", {"name_or_id": "rao"}))
    by_id = structured(await demo.call_tool("get_author", {"name_or_id": "a07"}))
    by_name = structured(await demo.call_tool("get_author", {"name_or_id": "Devika Rao"}))
    ambiguous = await demo.call_tool("get_author", {"name_or_id": "ar"})
    unknown = await demo.call_tool("get_author", {"name_or_id": "Tolkien"})

    assert by_part == by_id == by_name
    assert by_part == {
        "id": "a07",
        "name": "Devika Rao",
        "born": 1981,
        "country": "India",
        "bio": "Chef and food historian whose cookbooks read like travelogues and whose travelogues come with recipes.",
        "genres": ["cookery", "history", "travel"],
        "average_rating": 4.33,
        "books": [
            {"id": "b25", "title": "One Pot, Six Cities", "year": 2013, "rating": 4.4},
            {"id": "b26", "title": "The Spice Ledger", "year": 2016, "rating": 4.2},
            {"id": "b27", "title": "Monsoon Kitchen", "year": 2019, "rating": 4.7},
            {"id": "b28", "title": "Street Food Atlas", "year": 2023, "rating": 4.0},
        ],
    }
    assert ambiguous.is_error
    assert text_of(ambiguous) == ("Error executing tool get_author: 'ar' is ambiguous; it matches Elspeth Quarry, Pip Marchbanks.")
    assert unknown.is_error
    assert text_of(unknown).startswith("Error executing tool get_author: No author matches 'Tolkien'. Known authors:")


async def test_list_genres(demo: ClientSession) -> None:
    """Counts per genre, most books first; a two-genre book counts in both."""
    genres = structured(await demo.call_tool("list_genres", {}))

    assert genres == {
        "genres": [
            {"genre": "mystery", "books": 9, "average_rating": 4.16},
            {"genre": "fantasy", "books": 8, "average_rating": 4.5},
            {"genre": "sci-fi", "books": 7, "average_rating": 4.26},
            {"genre": "history", "books": 6, "average_rating": 4.25},
            {"genre": "children", "books": 5, "average_rating": 4.58},
            {"genre": "humor", "books": 5, "average_rating": 4.28},
            {"genre": "travel", "books": 5, "average_rating": 4.06},
            {"genre": "cookery", "books": 4, "average_rating": 4.33},
            {"genre": "poetry", "books": 4, "average_rating": 4.15},
            {"genre": "romance", "books": 3, "average_rating": 4.1},
        ],
        "total_books": 40,
    }


async def test_sales_report(demo: ClientSession) -> None:
    """Totals, top groups and ordering for every grouping; composition-friendly numbers."""
    by_genre = structured(await demo.call_tool("sales_report", {}))
    by_author = structured(await demo.call_tool("sales_report", {"year": 2024, "group_by": "author"}))
    by_month = structured(await demo.call_tool("sales_report", {"group_by": "month"}))
    by_book = structured(await demo.call_tool("sales_report", {"year": 2023, "group_by": "book"}))
    bad_year = await demo.call_tool("sales_report", {"year": 1999})

    assert (by_genre["year"], by_genre["group_by"], by_genre["currency"]) == (None, "genre", "EUR")
    assert (by_genre["total_units"], by_genre["total_revenue"]) == (11978, 180174.65)
    assert by_genre["rows"][:2] == [
        {"key": "history", "label": "history", "units": 1736, "revenue": 40966.0, "share": 22.7},
        {"key": "fantasy", "label": "fantasy", "units": 2955, "revenue": 40069.52, "share": 22.2},
    ]
    assert len(by_genre["rows"]) == 10
    assert sum(row["units"] for row in by_genre["rows"]) > by_genre["total_units"]  # multi-genre books

    assert (by_author["total_units"], by_author["total_revenue"]) == (6184, 94040.69)
    assert by_author["rows"][0] == {
        "key": "a07",
        "label": "Devika Rao",
        "units": 719,
        "revenue": 18066.0,
        "share": 19.2,
    }
    assert sum(row["units"] for row in by_author["rows"]) == by_author["total_units"]

    assert [row["key"] for row in by_month["rows"]] == [f"{y}-{m:02d}" for y in (2023, 2024) for m in range(1, 13)]
    assert by_month["rows"][0]["label"] == "January 2023"
    assert sum(row["units"] for row in by_month["rows"]) == by_month["total_units"] == 11978
    assert round(sum(row["revenue"] for row in by_month["rows"]), 2) == by_month["total_revenue"]

    assert len(by_book["rows"]) == 40
    assert by_book["total_units"] == 5794
    revenues = [row["revenue"] for row in by_book["rows"]]
    assert revenues == sorted(revenues, reverse=True)
    assert bad_year.is_error


async def test_book_stats_json_is_text_only(demo: ClientSession) -> None:
    """JSON arrives as text with no structured content, for clients to unwrap themselves."""
    catalogue = await demo.call_tool("book_stats_json", {})
    one = await demo.call_tool("book_stats_json", {"book_id": "b12"})
    missing = await demo.call_tool("book_stats_json", {"book_id": "nope"})

    for result in (catalogue, one):
        assert not result.is_error
        assert result.structured_content is None
    assert json.loads(text_of(catalogue)) == {
        "shop": "The Inkwell Lane Bookshop",
        "books": 40,
        "authors": 10,
        "genres": 10,
        "average_rating": 4.26,
        "average_price": 14.73,
        "copies_in_stock": 359,
        "out_of_stock": ["b04", "b16", "b27", "b40"],
        "books_by_decade": {"2000s": 6, "2010s": 23, "2020s": 11},
        "units_sold": {"2023": 5794, "2024": 6184},
    }
    assert json.loads(text_of(one)) == {
        "id": "b12",
        "title": "Small Weather",
        "units_by_year": {"2023": 254, "2024": 245},
        "revenue_by_year": {"2023": 3048.0, "2024": 2940.0},
        "best_month": {"month": "2023-04", "units": 52},
        "revenue_rank": 10,
        "in_stock": True,
    }
    assert missing.is_error


async def test_render_cover(demo: ClientSession) -> None:
    """An image/png block with the 64x96 PNG the in-process renderer makes."""
    result = await demo.call_tool("render_cover", {"book_id": "b01"})
    missing = await demo.call_tool("render_cover", {"book_id": "b00"})

    assert not result.is_error
    assert result.structured_content is None
    assert len(result.content) == 1
    image = result.content[0]
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    data = base64.b64decode(image.data)
    assert data.startswith(PNG_SIGNATURE)
    assert png_size(data) == (64, 96)
    assert data == demo_logic.cover_png("b01")
    assert missing.is_error


async def test_slow_inventory_check_reports_progress(demo: ClientSession) -> None:
    """One progress notification per step (progress, total, message), then the report."""
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    started = time.monotonic()
    result = await demo.call_tool("slow_inventory_check", {"seconds": 0.5, "steps": 5}, progress_callback=on_progress)
    elapsed = time.monotonic() - started

    report = structured(result)
    assert updates == [
        (1.0, 5.0, "Checked shelf 1/5 (8 books)"),
        (2.0, 5.0, "Checked shelf 2/5 (16 books)"),
        (3.0, 5.0, "Checked shelf 3/5 (24 books)"),
        (4.0, 5.0, "Checked shelf 4/5 (32 books)"),
        (5.0, 5.0, "Checked shelf 5/5 (40 books)"),
    ]
    assert 0.5 <= elapsed < 5
    assert 0.5 <= report.pop("elapsed_seconds") < 5
    assert report == {
        "steps": 5,
        "books_checked": 40,
        "total_copies_in_stock": 359,
        "out_of_stock": [
            {"id": "b04", "title": "The Ninth Bell of Varrow", "stock": 0},
            {"id": "b16", "title": "Last Signal from Halcyon", "stock": 0},
            {"id": "b27", "title": "Monsoon Kitchen", "stock": 0},
            {"id": "b40", "title": "Hiccup the Dragon Goes to School", "stock": 0},
        ],
        "low_stock": [
            {"id": "b07", "title": "Nine Keys, One Door", "stock": 2},
            {"id": "b14", "title": "The Copper Tide Protocol", "stock": 3},
            {"id": "b20", "title": "Empires of Paper", "stock": 2},
            {"id": "b23", "title": "Poison at the Pantomime", "stock": 1},
            {"id": "b31", "title": "Riverkin", "stock": 3},
            {"id": "b33", "title": "Ash and Linden", "stock": 3},
        ],
    }


async def test_resources_and_prompt(demo: ClientSession) -> None:
    """The static resource, the book template, and the recommend prompt."""
    resources = (await demo.list_resources()).resources
    templates = (await demo.list_resource_templates()).resource_templates
    summary = (await demo.read_resource("demo://catalog/summary")).contents
    book = (await demo.read_resource("demo://books/b03")).contents
    with pytest.raises(MCPError) as missing:
        await demo.read_resource("demo://books/b77")
    prompts = (await demo.list_prompts()).prompts
    prompt = await demo.get_prompt("recommend", {"genre": "poetry", "mood": "wistful"})

    assert [(str(r.uri), r.mime_type) for r in resources] == [("demo://catalog/summary", "text/markdown")]
    assert [(t.uri_template, t.mime_type) for t in templates] == [("demo://books/{book_id}", "application/json")]
    assert len(summary) == 1
    text = getattr(summary[0], "text", "")
    assert text.startswith("# The Inkwell Lane Bookshop\n\n40 books by 10 authors.\n")
    assert "- Moss the Brave Little Kettle by Mira Okonkwo-Hale (4.8)" in text
    assert json.loads(getattr(book[0], "text", "")) == demo_data.BOOKS[2]
    assert missing.value.error.code == INVALID_PARAMS
    assert "b77" in missing.value.error.message

    assert [(p.name, [(a.name, a.required) for a in p.arguments or []]) for p in prompts] == [
        ("recommend", [("genre", True), ("mood", False)])
    ]
    assert len(prompt.messages) == 1
    message = prompt.messages[0]
    assert message.role == "user"
    assert isinstance(message.content, TextContent)
    assert message.content.text.startswith("I'm in a wistful mood and would like a poetry book from The Inkwell Lane Bookshop.")
    assert "- b10: Orchard Hours by Sunniva Ashcombe (2014, rating 4.5)" in message.content.text


async def test_first_tool_call_is_fast() -> None:
    """Guard against a slow first ``tools/call`` (lazy initialisation in the server)."""
    async with demo_session() as session:
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            result = await session.call_tool("book_stats_json", {})
            timings.append(time.perf_counter() - started)
            assert not result.is_error
    # Generous bounds for loaded CI machines; locally the first call takes ~3 ms.
    assert timings[0] < 2.0, timings
    assert max(timings[1:]) < 2.0, timings


async def test_warm_up_runs_in_process() -> None:
    """The start-up warm-up succeeds on its own (it would otherwise abort server start)."""
    await demo_server.warm_up()


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_http_transports(transport: str) -> None:
    """``--transport streamable-http`` serves at /mcp and ``--transport sse`` at /sse."""
    async with demo_http_server(transport) as base_url:
        client = streamable_http_client(f"{base_url}/mcp") if transport == "streamable-http" else sse_client(f"{base_url}/sse")
        async with client as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            assert len((await session.list_tools()).tools) == 8
            result = structured(await session.call_tool("search_books", {"query": "lantern"}))
            assert [hit["id"] for hit in result["results"]] == ["b01"]
            missing = await session.call_tool("get_book", {"book_id": "b99"})
            assert missing.is_error


def test_main_rejects_unknown_transport() -> None:
    """``--transport`` is validated before anything starts."""
    with pytest.raises(SystemExit):
        demo_server.main(["--transport", "carrier-pigeon"])
