"""The built-in demo MCP server: a small, fictional bookshop.

This is what a new user meets first when no MCP configuration exists, so it is
built to show off what the kernel can do with a real server:

* tools with typed, documented, enum/default-carrying parameters (good JSON Schemas),
* structured results (``structuredContent`` + ``outputSchema``) next to a tool
  that returns JSON *as text* only, an image tool, a slow tool with progress
  notifications, and a tool error for unknown ids,
* one static resource, one resource template and one prompt.

Everything is deterministic (data lives in :mod:`mcp_kernel.demo.data`; no network,
no randomness); only ``slow_inventory_check`` reports wall-clock timing.

Run it with ``python -m mcp_kernel.demo.server`` (stdio), or
``python -m mcp_kernel.demo.server --transport streamable-http --port 8000``
(served at ``/mcp``), or ``--transport sse`` (served at ``/sse``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import ListToolsResult
from mcp_types.methods import SERVER_RESULTS, serialize_server_result
from pydantic import Field

from mcp_kernel.demo import data, logic, models

# --------------------------------------------------------------------------------------
# The server.
# --------------------------------------------------------------------------------------

server = MCPServer(
    "mcp2repl-demo",
    title="mcp2repl demo bookshop",
    version="1.0.0",
    instructions=(
        f"A fictional bookshop, {data.SHOP_NAME}: {len(data.BOOKS)} books by {len(data.AUTHORS)} authors, "
        "with monthly sales for 2023-2024 (prices and revenue in EUR). Start with search_books or "
        "list_genres, open a book with get_book, and aggregate with sales_report."
    ),
    log_level="WARNING",
)


@server.tool(title="Search books", annotations=models.READ_ONLY)
async def search_books(
    query: Annotated[
        str,
        Field(description="Words to look for in titles, authors, genres and summaries; '' lists everything."),
    ],
    genre: Annotated[models.Genre | None, Field(description="Only return books with this genre.")] = None,
    limit: Annotated[int, Field(ge=1, le=40, description="Maximum number of results.")] = 10,
) -> models.SearchResults:
    """Search the catalogue and return the best matches first.

    Ranking: title words weigh most, then author and genre, then the summary;
    ties go to the better-rated book. An empty query returns all books (of the
    genre, if given) ordered by rating.
    """
    tokens = logic.words_of(query)
    hits: list[tuple[float, data.BookRecord]] = []
    for book in data.BOOKS:
        if genre is not None and genre not in book["genres"]:
            continue
        score = logic.match_score(book, tokens)
        if score > 0 or not tokens:
            hits.append((score, book))
    hits.sort(key=lambda hit: (-hit[0], -hit[1]["rating"], hit[1]["id"]))
    results = [models.BookSummary(**logic.listing(book), score=round(score, 2)) for score, book in hits[:limit]]
    return models.SearchResults(query=query, genre=genre, total_matches=len(hits), results=results)


@server.tool(title="Get a book", annotations=models.READ_ONLY)
async def get_book(book_id: models.BookId) -> models.Book:
    """Return the full record of one book, including units sold per year.

    An unknown id is a tool error whose message says what ids look like.
    """
    book = logic.find_book(book_id)
    return models.Book(
        **logic.listing(book),
        author_id=book["author_id"],
        pages=book["pages"],
        summary=book["summary"],
        units_sold={str(year): logic.units_sold(book["id"], year) for year in data.SALES_YEARS},
    )


@server.tool(title="Get an author", annotations=models.READ_ONLY)
async def get_author(
    name_or_id: Annotated[
        str,
        Field(description="models.Author id ('a01'..'a10'), full name, or an unambiguous part of the name ('Rao')."),
    ],
) -> models.Author:
    """Return an author's bio and their books (oldest first)."""
    wanted = name_or_id.strip().lower()
    matches = [a for a in data.AUTHORS if wanted in (a["id"], a["name"].lower())]
    if not matches and wanted:
        matches = [a for a in data.AUTHORS if wanted in a["name"].lower()]
    if not matches:
        known = ", ".join(a["name"] for a in data.AUTHORS)
        raise ToolError(f"No author matches {name_or_id!r}. Known authors: {known}.")
    if len(matches) > 1:
        names = ", ".join(a["name"] for a in matches)
        raise ToolError(f"{name_or_id!r} is ambiguous; it matches {names}.")
    author = matches[0]
    books = sorted((b for b in data.BOOKS if b["author_id"] == author["id"]), key=lambda b: (b["year"], b["id"]))
    return models.Author(
        id=author["id"],
        name=author["name"],
        born=author["born"],
        country=author["country"],
        bio=author["bio"],
        genres=sorted({genre for book in books for genre in book["genres"]}),
        average_rating=round(sum(b["rating"] for b in books) / len(books), 2),
        books=[models.BookBrief(id=b["id"], title=b["title"], year=b["year"], rating=b["rating"]) for b in books],
    )


@server.tool(title="List genres", annotations=models.READ_ONLY)
async def list_genres() -> models.GenreList:
    """Count the books in each genre (most books first) with their average rating."""
    counts: list[models.GenreCount] = []
    for genre in data.GENRES:
        ratings = [b["rating"] for b in data.BOOKS if genre in b["genres"]]
        counts.append(models.GenreCount(genre=genre, books=len(ratings), average_rating=round(sum(ratings) / len(ratings), 2)))
    counts.sort(key=lambda c: (-c.books, c.genre))
    return models.GenreList(genres=counts, total_books=len(data.BOOKS))


@server.tool(title="Sales report", annotations=models.READ_ONLY)
async def sales_report(
    year: Annotated[models.SalesYear | None, Field(description="Calendar year to report on; null for 2023 and 2024.")] = None,
    group_by: Annotated[models.GroupBy, Field(description="How to group the sales rows.")] = "genre",
) -> models.SalesReport:
    """Aggregate units and revenue (EUR) from the shop's monthly sales table.

    Rows are sorted by revenue, highest first, except month rows, which are
    chronological. With group_by="genre" a book counts in each of its genres,
    so genre rows add up to more than the total.
    """
    groups = logic.sales_groups(year, group_by)
    total_units = sum(logic.units_sold(book_id, year) for book_id in logic.BOOKS)
    total_cents = sum(logic.units_sold(book_id, year) * logic.cents(book["price"]) for book_id, book in logic.BOOKS.items())
    order = sorted(groups) if group_by == "month" else sorted(groups, key=lambda k: (-groups[k][2], k))
    rows = [
        models.SalesRow(
            key=key,
            label=groups[key][0],
            units=groups[key][1],
            revenue=groups[key][2] / 100,
            share=round(100 * groups[key][2] / total_cents, 1) if total_cents else 0.0,
        )
        for key in order
    ]
    note = (
        "Books with several genres count in each genre, so rows add up to more than the total."
        if group_by == "genre"
        else "Rows add up to the total."
    )
    return models.SalesReport(
        year=year,
        group_by=group_by,
        currency=data.CURRENCY,
        rows=rows,
        total_units=total_units,
        total_revenue=total_cents / 100,
        note=note,
    )


@server.tool(title="models.Book statistics (JSON text)", annotations=models.READ_ONLY, structured_output=False)
async def book_stats_json(
    book_id: Annotated[
        str | None,
        Field(description="A book id for that book's statistics; omit for catalogue-wide statistics."),
    ] = None,
) -> str:
    """Return statistics as a JSON document in a plain text result (no structured content).

    This mimics the many MCP servers that serialise JSON into text, so clients can
    show how they unwrap it.
    """
    stats = logic.catalogue_stats() if book_id is None else logic.book_stats(logic.find_book(book_id))
    return json.dumps(stats, indent=2)


@server.tool(title="Render a cover", annotations=models.READ_ONLY)
async def render_cover(book_id: models.BookId) -> Image:
    """Draw a small (64x96) PNG cover for a book; the same id always gives the same picture."""
    book = logic.find_book(book_id)
    return Image(data=logic.cover_png(book["id"]), format="png")


@server.tool(title="Slow inventory check", annotations=models.READ_ONLY)
async def slow_inventory_check(
    ctx: Context,
    seconds: Annotated[float, Field(ge=0, le=60, description="Total time the check should take.")] = 2.0,
    steps: Annotated[int, Field(ge=1, le=100, description="Number of shelves; one progress report each.")] = 5,
) -> models.InventoryReport:
    """Walk the shelves slowly, reporting progress after each shelf, then list stock problems.

    Useful for trying progress bars, timeouts and interrupts from a notebook.
    """
    started = time.monotonic()
    books = data.BOOKS
    checked = 0
    for step in range(1, steps + 1):
        await anyio.sleep(seconds / steps)
        checked = len(books) * step // steps
        await ctx.report_progress(step, steps, f"Checked shelf {step}/{steps} ({checked} books)")
    return models.InventoryReport(
        steps=steps,
        books_checked=checked,
        total_copies_in_stock=sum(b["stock"] for b in books),
        out_of_stock=[models.StockItem(id=b["id"], title=b["title"], stock=0) for b in books if b["stock"] == 0],
        low_stock=[models.StockItem(id=b["id"], title=b["title"], stock=b["stock"]) for b in books if 0 < b["stock"] <= data.LOW_STOCK_THRESHOLD],
        elapsed_seconds=round(time.monotonic() - started, 2),
    )


@server.resource(
    "demo://catalog/summary",
    name="catalog_summary",
    title="Catalogue summary",
    description="A Markdown overview of the shop: genres, authors and the best-rated books.",
    mime_type="text/markdown",
)
def catalog_summary() -> str:
    """Give clients something readable to fetch with resources/read."""
    lines = [f"# {data.SHOP_NAME}", "", f"{len(data.BOOKS)} books by {len(data.AUTHORS)} authors.", ""]
    lines += ["## Genres", ""]
    lines += [f"- {genre}: {sum(genre in b['genres'] for b in data.BOOKS)} books" for genre in data.GENRES]
    lines += ["", "## Authors", ""]
    lines += [f"- {a['name']} ({a['id']}, {a['country']})" for a in data.AUTHORS]
    lines += ["", "## Best rated", ""]
    best = sorted(data.BOOKS, key=lambda b: (-b["rating"], b["id"]))[:5]
    lines += [f"- {b['title']} by {logic.author_name(b)} ({b['rating']})" for b in best]
    return "\n".join(lines) + "\n"


@server.resource(
    "demo://books/{book_id}",
    name="book",
    title="models.Book record",
    description="One book's catalogue record as JSON, e.g. demo://books/b01.",
    mime_type="application/json",
)
def book_resource(book_id: str) -> str:
    """Expose each book as a resource too, to demonstrate resource templates."""
    book = logic.BOOKS.get(book_id.lower())
    if book is None:
        raise ResourceNotFoundError(f"Unknown book id {book_id!r}; ids run from 'b01' to 'b{len(logic.BOOKS):02d}'.")
    return json.dumps(book, indent=2)


@server.prompt(title="Recommend a book")
def recommend(
    genre: Annotated[str, Field(description=f"One of: {', '.join(data.GENRES)}.")],
    mood: Annotated[str, Field(description="How the reader feels, e.g. 'cosy', 'adventurous', 'sad'.")] = "cosy",
) -> str:
    """Ask the model for a recommendation, grounded in the shop's books of that genre."""
    shelf = sorted((b for b in data.BOOKS if genre.lower() in b["genres"]), key=lambda b: (-b["rating"], b["id"]))
    if not shelf:
        raise ValueError(f"Unknown genre {genre!r}; choose one of: {', '.join(data.GENRES)}.")
    listing = "\n".join(
        f"- {b['id']}: {b['title']} by {logic.author_name(b)} ({b['year']}, rating {b['rating']}) - {b['summary']}" for b in shelf
    )
    return (
        f"I'm in a {mood} mood and would like a {genre} book from {data.SHOP_NAME}. "
        f"Here is what is on the shelf:\n{listing}\n\n"
        "Recommend one of these books (give its id), explain in two sentences why it suits my mood, "
        "and name a runner-up."
    )


# --------------------------------------------------------------------------------------
# Warm-up and entry point.
# --------------------------------------------------------------------------------------

_WARM_UP_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("search_books", {"query": "lantern", "genre": "fantasy", "limit": 3}),
    ("get_book", {"book_id": "b01"}),
    ("get_author", {"name_or_id": "a01"}),
    ("list_genres", {}),
    ("sales_report", {"year": 2024, "group_by": "month"}),
    ("book_stats_json", {}),
    ("render_cover", {"book_id": "b01"}),
)
"""Cheap, side-effect-free calls that exercise every tool's call path except the slow one."""


async def warm_up() -> None:
    """Run the first-``tools/call`` work in-process before any client connects.

    What MCPServer 2.3 does lazily on a first call: pydantic argument validation
    and output conversion per tool, and, in ``mcp_types.methods._adapter``, one
    cached ``TypeAdapter`` per ``(method, protocol version)`` used to sieve each
    result into its wire shape. Calling each pure tool once and serialising the
    results for every known protocol version builds all of it up front. The slow
    tool is skipped: it sleeps, and progress needs a live request.
    """
    versions = sorted({version for method, version in SERVER_RESULTS if method == "tools/call"})
    listing = ListToolsResult(tools=await server.list_tools()).model_dump(by_alias=True, mode="json", exclude_none=True)
    for version in versions:
        serialize_server_result("tools/list", version, listing)
    for name, arguments in _WARM_UP_CALLS:
        result = await server.call_tool(name, arguments)
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        for version in versions:
            serialize_server_result("tools/call", version, wire)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse ``--transport/--host/--port``, warm up, and serve until the client goes away."""
    parser = argparse.ArgumentParser(prog="python -m mcp_kernel.demo.server", description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=("stdio", "streamable-http", "sse"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="Interface for the HTTP transports.")
    parser.add_argument("--port", type=int, default=8000, help="Port for the HTTP transports.")
    parser.add_argument("--no-warm-up", action="store_true", help="Skip the start-up warm-up (for measuring it).")
    args = parser.parse_args(argv)
    if not args.no_warm_up:
        anyio.run(warm_up)
    if args.transport == "stdio":
        server.run()
    else:
        server.run(args.transport, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
