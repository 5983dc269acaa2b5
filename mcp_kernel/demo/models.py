"""The result and argument types of the demo server's tools: pydantic models become the JSON
Schemas (input and output) that clients see, so they are written to read well as TypeScript.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

Genre = Literal["children", "cookery", "fantasy", "history", "humor", "mystery", "poetry", "romance", "sci-fi", "travel"]
"""Every genre in the catalogue; a ``Literal`` so the input schema carries an ``enum``."""

SalesYear = Literal[2023, 2024]
GroupBy = Literal["genre", "author", "month", "book"]

BookId = Annotated[
    str,
    Field(description="Book id such as 'b07' (ids run from b01 to b40; search_books returns them)."),
]

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
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
