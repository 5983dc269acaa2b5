"""The built-in demo MCP server: a small, fictional bookshop.

This is what a new user meets first when no MCP configuration exists, so it is
built to show off what the kernel can do with a real server:

* tools with typed, documented, enum/default-carrying parameters (good JSON Schemas),
* structured results (``structuredContent`` + ``outputSchema``) next to a tool
  that returns JSON *as text* only, an image tool, a slow tool with progress
  notifications, and a tool error for unknown ids,
* one static resource, one resource template and one prompt.

Everything is deterministic (data lives in :mod:`mcp_kernel.demo_data`; no network,
no randomness); only ``slow_inventory_check`` reports wall-clock timing.

Run it with ``python -m mcp_kernel.demo_server`` (stdio), or
``python -m mcp_kernel.demo_server --transport streamable-http --port 8000``
(served at ``/mcp``), or ``--transport sse`` (served at ``/sse``).
"""

from __future__ import annotations

import argparse
import colorsys
import json
import re
import struct
import time
import zlib
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal, get_args

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import ListToolsResult, ToolAnnotations
from mcp_types.methods import SERVER_RESULTS, serialize_server_result
from pydantic import BaseModel, Field

from mcp_kernel import demo_data as data
from mcp_kernel.demo_data import AuthorRecord, BookRecord

# --------------------------------------------------------------------------------------
# Types shared by the tool signatures (they become the JSON Schemas clients see).
# --------------------------------------------------------------------------------------

Genre = Literal["children", "cookery", "fantasy", "history", "humor", "mystery", "poetry", "romance", "sci-fi", "travel"]
"""Every genre in the catalogue; a ``Literal`` so the input schema carries an ``enum``."""

SalesYear = Literal[2023, 2024]
GroupBy = Literal["genre", "author", "month", "book"]

BookId = Annotated[
    str,
    Field(description="Book id such as 'b07' (ids run from b01 to b40; search_books returns them)."),
]

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
"""Every demo tool only reads the built-in data; advertising that helps clients and models."""


class BookSummary(BaseModel):
    """One search hit: enough to decide which book to open with get_book."""

    id: str = Field(description="Book id, usable with get_book / render_cover.")
    title: str
    author: str = Field(description="Author's full name.")
    year: int = Field(description="Year of first publication.")
    genres: list[str]
    rating: float = Field(description="Average reader rating, 1.0 to 5.0.")
    price: float = Field(description="List price in EUR.")
    stock: int = Field(description="Copies on the shelf right now.")
    score: float = Field(description="Relevance score for the query (higher is better; 0 for an empty query).")


class SearchResults(BaseModel):
    """Ranked search hits plus the total number of matches before the limit was applied."""

    query: str
    genre: str | None
    total_matches: int
    results: list[BookSummary]


class Book(BaseModel):
    """The full catalogue record of one book, with its sales per year."""

    id: str
    title: str
    author_id: str
    author: str
    year: int
    genres: list[str]
    rating: float
    price: float = Field(description="List price in EUR.")
    stock: int
    pages: int
    summary: str
    units_sold: dict[str, int] = Field(description="Units sold per calendar year, keyed by year ('2023', '2024').")


class BookBrief(BaseModel):
    """A book as listed on an author's page."""

    id: str
    title: str
    year: int
    rating: float


class Author(BaseModel):
    """An author with their bio and their books in the catalogue."""

    id: str
    name: str
    born: int
    country: str
    bio: str
    genres: list[str] = Field(description="Genres of the author's books, sorted.")
    average_rating: float
    books: list[BookBrief]


class GenreCount(BaseModel):
    """How many books one genre has, and how well they are rated."""

    genre: str
    books: int
    average_rating: float


class GenreList(BaseModel):
    """Per-genre counts; a book with two genres counts once in each."""

    genres: list[GenreCount]
    total_books: int


class SalesRow(BaseModel):
    """One group of a sales report."""

    key: str = Field(description="Group id: a genre, an author id, 'YYYY-MM', or a book id.")
    label: str = Field(description="Human-readable group name: genre, author name, 'March 2024', or title.")
    units: int
    revenue: float = Field(description="Revenue in EUR (units x list price).")
    share: float = Field(description="Percentage of the report's total revenue.")


class SalesReport(BaseModel):
    """Aggregated sales; rows by revenue (highest first), or chronological for months."""

    year: int | None = Field(description="The year reported on, or null for all years.")
    group_by: str
    currency: str
    rows: list[SalesRow]
    total_units: int
    total_revenue: float
    note: str


class StockItem(BaseModel):
    """A book flagged by the inventory check."""

    id: str
    title: str
    stock: int


class InventoryReport(BaseModel):
    """What slow_inventory_check found on the shelves."""

    steps: int
    books_checked: int
    total_copies_in_stock: int
    out_of_stock: list[StockItem]
    low_stock: list[StockItem] = Field(description="Books with 1 to 3 copies left.")
    elapsed_seconds: float = Field(description="Wall-clock time the check took (the only non-deterministic field).")


# --------------------------------------------------------------------------------------
# Lookups and pure helpers over demo_data.
# --------------------------------------------------------------------------------------

_BOOKS: dict[str, BookRecord] = {book["id"]: book for book in data.BOOKS}
_AUTHORS: dict[str, AuthorRecord] = {author["id"]: author for author in data.AUTHORS}
_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_WORD = re.compile(r"[a-z0-9]+")

assert set(get_args(Genre)) == set(data.GENRES), "Genre literal is out of sync with demo_data.GENRES"
assert set(get_args(SalesYear)) == set(data.SALES_YEARS), "SalesYear literal is out of sync with demo_data"


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _book(book_id: str) -> BookRecord:
    """Look a book up, turning a miss into an error message a model can act on."""
    book = _BOOKS.get(book_id.strip().lower())
    if book is None:
        raise ToolError(f"Unknown book id {book_id!r}. Ids run from 'b01' to 'b{len(_BOOKS):02d}'; use search_books to find one.")
    return book


def _author_name(book: BookRecord) -> str:
    return _AUTHORS[book["author_id"]]["name"]


def _score(book: BookRecord, tokens: Sequence[str]) -> float:
    """Weighted word-prefix matching: title 3, author 2, genre 2, summary 1.

    An exact word match earns the full weight, a prefix match half of it, so
    'lant' still finds 'The Lantern Cartographer' but ranks below 'lantern'.
    """
    fields = (
        (3.0, _words(book["title"])),
        (2.0, _words(_author_name(book))),
        (2.0, [word for genre in book["genres"] for word in _words(genre)]),
        (1.0, _words(book["summary"])),
    )
    score = 0.0
    for token in tokens:
        for weight, words in fields:
            if token in words:
                score += weight
            elif any(word.startswith(token) for word in words):
                score += weight / 2
    return score


def _units(book_id: str, year: int | None = None) -> int:
    years = data.SALES_YEARS if year is None else (year,)
    return sum(sum(data.SALES[book_id][y]) for y in years)


def _cents(price: float) -> int:
    """Prices are kept in cents while aggregating so that totals are exact."""
    return round(price * 100)


def _sales_groups(year: int | None, group_by: GroupBy) -> dict[str, tuple[str, int, int]]:
    """Aggregate the sales table into ``{key: (label, units, revenue_cents)}``."""
    groups: dict[str, tuple[str, int, int]] = {}

    def add(key: str, label: str, units: int, cents: int) -> None:
        _, old_units, old_cents = groups.get(key, (label, 0, 0))
        groups[key] = (label, old_units + units, old_cents + cents)

    years = data.SALES_YEARS if year is None else (year,)
    for book in data.BOOKS:
        price = _cents(book["price"])
        for y in years:
            monthly = data.SALES[book["id"]][y]
            if group_by == "month":
                for month, units in enumerate(monthly, start=1):
                    add(f"{y}-{month:02d}", f"{_MONTH_NAMES[month - 1]} {y}", units, units * price)
                continue
            units = sum(monthly)
            if group_by == "genre":
                for genre in book["genres"]:
                    add(genre, genre, units, units * price)
            elif group_by == "author":
                add(book["author_id"], _author_name(book), units, units * price)
            else:
                add(book["id"], book["title"], units, units * price)
    return groups


def _png(width: int, height: int, rows: Iterable[bytes]) -> bytes:
    """Encode 8-bit RGB rows as a PNG with nothing but zlib and struct."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 (None) on every scanline
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def cover_png(book_id: str, width: int = 64, height: int = 96) -> bytes:
    """Draw a tiny, deterministic book cover: hue from the id, a title band and a spine.

    The hue comes from ``crc32`` of the id (Python's ``hash`` is salted per process).
    """
    hue = (zlib.crc32(book_id.encode()) % 360) / 360

    def rgb(lightness: float, saturation: float) -> bytes:
        return bytes(round(255 * c) for c in colorsys.hls_to_rgb(hue, lightness, saturation))

    background, spine, band, ink = rgb(0.45, 0.55), rgb(0.25, 0.55), rgb(0.85, 0.35), rgb(0.2, 0.3)
    number = int(book_id[1:]) if book_id[1:].isdigit() else 0
    rows: list[bytes] = []
    for y in range(height):
        row = bytearray()
        for x in range(width):
            if x < 6:
                pixel = spine
            elif 18 <= y < 42 and 12 <= x < width - 6:
                # Title band, with "text lines" whose lengths depend on the book number.
                line = (y - 22) // 6
                text_row = 22 <= y < 40 and (y - 22) % 6 < 3
                pixel = ink if text_row and 16 <= x < 20 + (number * (line + 3)) % 28 else band
            elif y > height - 14 and (x // 4 + y // 4) % 2 == 0:
                pixel = spine  # a chequered footer
            else:
                pixel = background
            row += pixel
        rows.append(bytes(row))
    return _png(width, height, rows)


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


@server.tool(title="Search books", annotations=_READ_ONLY)
async def search_books(
    query: Annotated[
        str,
        Field(description="Words to look for in titles, authors, genres and summaries; '' lists everything."),
    ],
    genre: Annotated[Genre | None, Field(description="Only return books with this genre.")] = None,
    limit: Annotated[int, Field(ge=1, le=40, description="Maximum number of results.")] = 10,
) -> SearchResults:
    """Search the catalogue and return the best matches first.

    Ranking: title words weigh most, then author and genre, then the summary;
    ties go to the better-rated book. An empty query returns all books (of the
    genre, if given) ordered by rating.
    """
    tokens = _words(query)
    hits: list[tuple[float, BookRecord]] = []
    for book in data.BOOKS:
        if genre is not None and genre not in book["genres"]:
            continue
        score = _score(book, tokens)
        if score > 0 or not tokens:
            hits.append((score, book))
    hits.sort(key=lambda hit: (-hit[0], -hit[1]["rating"], hit[1]["id"]))
    results = [BookSummary(**_listing(book), score=round(score, 2)) for score, book in hits[:limit]]
    return SearchResults(query=query, genre=genre, total_matches=len(hits), results=results)


def _listing(book: BookRecord) -> dict[str, Any]:
    """The fields a search hit and a full record share."""
    return {
        "id": book["id"],
        "title": book["title"],
        "author": _author_name(book),
        "year": book["year"],
        "genres": list(book["genres"]),
        "rating": book["rating"],
        "price": book["price"],
        "stock": book["stock"],
    }


@server.tool(title="Get a book", annotations=_READ_ONLY)
async def get_book(book_id: BookId) -> Book:
    """Return the full record of one book, including units sold per year.

    An unknown id is a tool error whose message says what ids look like.
    """
    book = _book(book_id)
    return Book(
        **_listing(book),
        author_id=book["author_id"],
        pages=book["pages"],
        summary=book["summary"],
        units_sold={str(year): _units(book["id"], year) for year in data.SALES_YEARS},
    )


@server.tool(title="Get an author", annotations=_READ_ONLY)
async def get_author(
    name_or_id: Annotated[
        str,
        Field(description="Author id ('a01'..'a10'), full name, or an unambiguous part of the name ('Rao')."),
    ],
) -> Author:
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
    return Author(
        id=author["id"],
        name=author["name"],
        born=author["born"],
        country=author["country"],
        bio=author["bio"],
        genres=sorted({genre for book in books for genre in book["genres"]}),
        average_rating=round(sum(b["rating"] for b in books) / len(books), 2),
        books=[BookBrief(id=b["id"], title=b["title"], year=b["year"], rating=b["rating"]) for b in books],
    )


@server.tool(title="List genres", annotations=_READ_ONLY)
async def list_genres() -> GenreList:
    """Count the books in each genre (most books first) with their average rating."""
    counts: list[GenreCount] = []
    for genre in data.GENRES:
        ratings = [b["rating"] for b in data.BOOKS if genre in b["genres"]]
        counts.append(GenreCount(genre=genre, books=len(ratings), average_rating=round(sum(ratings) / len(ratings), 2)))
    counts.sort(key=lambda c: (-c.books, c.genre))
    return GenreList(genres=counts, total_books=len(data.BOOKS))


@server.tool(title="Sales report", annotations=_READ_ONLY)
async def sales_report(
    year: Annotated[SalesYear | None, Field(description="Calendar year to report on; null for 2023 and 2024.")] = None,
    group_by: Annotated[GroupBy, Field(description="How to group the sales rows.")] = "genre",
) -> SalesReport:
    """Aggregate units and revenue (EUR) from the shop's monthly sales table.

    Rows are sorted by revenue, highest first, except month rows, which are
    chronological. With group_by="genre" a book counts in each of its genres,
    so genre rows add up to more than the total.
    """
    groups = _sales_groups(year, group_by)
    total_units = sum(_units(book_id, year) for book_id in _BOOKS)
    total_cents = sum(_units(book_id, year) * _cents(book["price"]) for book_id, book in _BOOKS.items())
    order = sorted(groups) if group_by == "month" else sorted(groups, key=lambda k: (-groups[k][2], k))
    rows = [
        SalesRow(
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
    return SalesReport(
        year=year,
        group_by=group_by,
        currency=data.CURRENCY,
        rows=rows,
        total_units=total_units,
        total_revenue=total_cents / 100,
        note=note,
    )


def _book_stats(book: BookRecord) -> dict[str, Any]:
    """Sales statistics of one book, including its revenue rank in the catalogue."""
    revenue = {b["id"]: _units(b["id"]) * _cents(b["price"]) for b in data.BOOKS}
    ranking = sorted(revenue, key=lambda k: (-revenue[k], k))
    months = [
        (f"{year}-{month:02d}", units) for year in data.SALES_YEARS for month, units in enumerate(data.SALES[book["id"]][year], start=1)
    ]
    best_month, best_units = max(months, key=lambda m: m[1])  # max() keeps the earliest of equal months
    return {
        "id": book["id"],
        "title": book["title"],
        "units_by_year": {str(y): _units(book["id"], y) for y in data.SALES_YEARS},
        "revenue_by_year": {str(y): _units(book["id"], y) * _cents(book["price"]) / 100 for y in data.SALES_YEARS},
        "best_month": {"month": best_month, "units": best_units},
        "revenue_rank": ranking.index(book["id"]) + 1,
        "in_stock": book["stock"] > 0,
    }


def _catalogue_stats() -> dict[str, Any]:
    """Catalogue-wide counts, averages and units sold per year."""
    books = data.BOOKS
    decades: dict[str, int] = {}
    for book in sorted(books, key=lambda b: b["year"]):
        decade = f"{book['year'] // 10 * 10}s"
        decades[decade] = decades.get(decade, 0) + 1
    return {
        "shop": data.SHOP_NAME,
        "books": len(books),
        "authors": len(data.AUTHORS),
        "genres": len(data.GENRES),
        "average_rating": round(sum(b["rating"] for b in books) / len(books), 2),
        "average_price": round(sum(b["price"] for b in books) / len(books), 2),
        "copies_in_stock": sum(b["stock"] for b in books),
        "out_of_stock": [b["id"] for b in books if b["stock"] == 0],
        "books_by_decade": decades,
        "units_sold": {str(y): sum(_units(b["id"], y) for b in books) for y in data.SALES_YEARS},
    }


@server.tool(title="Book statistics (JSON text)", annotations=_READ_ONLY, structured_output=False)
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
    stats = _catalogue_stats() if book_id is None else _book_stats(_book(book_id))
    return json.dumps(stats, indent=2)


@server.tool(title="Render a cover", annotations=_READ_ONLY)
async def render_cover(book_id: BookId) -> Image:
    """Draw a small (64x96) PNG cover for a book; the same id always gives the same picture."""
    book = _book(book_id)
    return Image(data=cover_png(book["id"]), format="png")


@server.tool(title="Slow inventory check", annotations=_READ_ONLY)
async def slow_inventory_check(
    ctx: Context,
    seconds: Annotated[float, Field(ge=0, le=60, description="Total time the check should take.")] = 2.0,
    steps: Annotated[int, Field(ge=1, le=100, description="Number of shelves; one progress report each.")] = 5,
) -> InventoryReport:
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
    return InventoryReport(
        steps=steps,
        books_checked=checked,
        total_copies_in_stock=sum(b["stock"] for b in books),
        out_of_stock=[StockItem(id=b["id"], title=b["title"], stock=0) for b in books if b["stock"] == 0],
        low_stock=[StockItem(id=b["id"], title=b["title"], stock=b["stock"]) for b in books if 0 < b["stock"] <= data.LOW_STOCK_THRESHOLD],
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
    lines += [f"- {b['title']} by {_author_name(b)} ({b['rating']})" for b in best]
    return "\n".join(lines) + "\n"


@server.resource(
    "demo://books/{book_id}",
    name="book",
    title="Book record",
    description="One book's catalogue record as JSON, e.g. demo://books/b01.",
    mime_type="application/json",
)
def book_resource(book_id: str) -> str:
    """Expose each book as a resource too, to demonstrate resource templates."""
    book = _BOOKS.get(book_id.lower())
    if book is None:
        raise ResourceNotFoundError(f"Unknown book id {book_id!r}; ids run from 'b01' to 'b{len(_BOOKS):02d}'.")
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
        f"- {b['id']}: {b['title']} by {_author_name(b)} ({b['year']}, rating {b['rating']}) - {b['summary']}" for b in shelf
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
    parser = argparse.ArgumentParser(prog="python -m mcp_kernel.demo_server", description=__doc__.splitlines()[0])
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
