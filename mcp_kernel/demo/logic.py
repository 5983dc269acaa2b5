"""Lookups, search scoring, sales sums and cover images over the demo data: pure and deterministic."""

from __future__ import annotations

import colorsys
import re
import struct
import zlib
from collections.abc import Iterable, Sequence
from typing import Any, get_args

from mcp.server.mcpserver.exceptions import ToolError

from mcp_kernel.demo import data
from mcp_kernel.demo.data import AuthorRecord, BookRecord
from mcp_kernel.demo.models import Genre, GroupBy, SalesYear

BOOKS: dict[str, BookRecord] = {book["id"]: book for book in data.BOOKS}
AUTHORS: dict[str, AuthorRecord] = {author["id"]: author for author in data.AUTHORS}
MONTH_NAMES = (
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


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def find_book(book_id: str) -> BookRecord:
    """Look a book up, turning a miss into an error message a model can act on."""
    book = BOOKS.get(book_id.strip().lower())
    if book is None:
        raise ToolError(f"Unknown book id {book_id!r}. Ids run from 'b01' to 'b{len(BOOKS):02d}'; use search_books to find one.")
    return book


def author_name(book: BookRecord) -> str:
    return AUTHORS[book["author_id"]]["name"]


def match_score(book: BookRecord, tokens: Sequence[str]) -> float:
    """Weighted word-prefix matching: title 3, author 2, genre 2, summary 1.

    An exact word match earns the full weight, a prefix match half of it, so
    'lant' still finds 'The Lantern Cartographer' but ranks below 'lantern'.
    """
    fields = (
        (3.0, words_of(book["title"])),
        (2.0, words_of(author_name(book))),
        (2.0, [word for genre in book["genres"] for word in words_of(genre)]),
        (1.0, words_of(book["summary"])),
    )
    score = 0.0
    for token in tokens:
        for weight, words in fields:
            if token in words:
                score += weight
            elif any(word.startswith(token) for word in words):
                score += weight / 2
    return score


def units_sold(book_id: str, year: int | None = None) -> int:
    years = data.SALES_YEARS if year is None else (year,)
    return sum(sum(data.SALES[book_id][y]) for y in years)


def cents(price: float) -> int:
    """Prices are kept in cents while aggregating so that totals are exact."""
    return round(price * 100)


def sales_groups(year: int | None, group_by: GroupBy) -> dict[str, tuple[str, int, int]]:
    """Aggregate the sales table into ``{key: (label, units, revenue_cents)}``."""
    groups: dict[str, tuple[str, int, int]] = {}

    def add(key: str, label: str, units: int, cents: int) -> None:
        _, old_units, old_cents = groups.get(key, (label, 0, 0))
        groups[key] = (label, old_units + units, old_cents + cents)

    years = data.SALES_YEARS if year is None else (year,)
    for book in data.BOOKS:
        price = cents(book["price"])
        for y in years:
            monthly = data.SALES[book["id"]][y]
            if group_by == "month":
                for month, units in enumerate(monthly, start=1):
                    add(f"{y}-{month:02d}", f"{MONTH_NAMES[month - 1]} {y}", units, units * price)
                continue
            units = sum(monthly)
            if group_by == "genre":
                for genre in book["genres"]:
                    add(genre, genre, units, units * price)
            elif group_by == "author":
                add(book["author_id"], author_name(book), units, units * price)
            else:
                add(book["id"], book["title"], units, units * price)
    return groups


def png(width: int, height: int, rows: Iterable[bytes]) -> bytes:
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
    return png(width, height, rows)


def listing(book: BookRecord) -> dict[str, Any]:
    """The fields a search hit and a full record share."""
    return {
        "id": book["id"],
        "title": book["title"],
        "author": author_name(book),
        "year": book["year"],
        "genres": list(book["genres"]),
        "rating": book["rating"],
        "price": book["price"],
        "stock": book["stock"],
    }


def book_stats(book: BookRecord) -> dict[str, Any]:
    """Sales statistics of one book, including its revenue rank in the catalogue."""
    revenue = {b["id"]: units_sold(b["id"]) * cents(b["price"]) for b in data.BOOKS}
    ranking = sorted(revenue, key=lambda k: (-revenue[k], k))
    months = [
        (f"{year}-{month:02d}", units) for year in data.SALES_YEARS for month, units in enumerate(data.SALES[book["id"]][year], start=1)
    ]
    best_month, best_units = max(months, key=lambda m: m[1])  # max() keeps the earliest of equal months
    return {
        "id": book["id"],
        "title": book["title"],
        "units_by_year": {str(y): units_sold(book["id"], y) for y in data.SALES_YEARS},
        "revenue_by_year": {str(y): units_sold(book["id"], y) * cents(book["price"]) / 100 for y in data.SALES_YEARS},
        "best_month": {"month": best_month, "units": best_units},
        "revenue_rank": ranking.index(book["id"]) + 1,
        "in_stock": book["stock"] > 0,
    }


def catalogue_stats() -> dict[str, Any]:
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
        "units_sold": {str(y): sum(units_sold(b["id"], y) for b in books) for y in data.SALES_YEARS},
    }
