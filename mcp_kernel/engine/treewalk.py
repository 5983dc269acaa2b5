"""Parsing and querying tree-sitter trees in linear time, off the event loop, and stoppably.

Cells can be megabytes (a pasted data literal, a bundled library) or absurdly deep (generated
code), and preparing one runs in a worker thread (prepare.py; a tiny one on the loop) while the kernel keeps answering.
Three facts of py-tree-sitter 0.26 shape this module:

* ``Parser.parse(bytes)`` holds the GIL for the whole parse (a 5 MB file: over a second of a
  frozen event loop). Parsing from a read callback with a progress callback runs Python code
  every few hundred parser steps, so the loop thread gets the GIL within its switch interval,
  and the progress callback is where a stopped preparation ends the parse.
* ``QueryCursor.captures`` is superlinear on wide and on deep trees (each node costs work
  proportional to its invisible ancestors: a 1 MB array literal took 2 s, 80 KB of ``a<b>c<b>c…``
  70 s). :func:`captures` runs the query only on small subtrees, where that factor is bounded, and
  walks the big nodes above them itself, skipping every subtree that holds none of the tokens the
  query's patterns need (a data literal has no ``(`` for a function or loop), so that the answer
  is the query's own, in linear time.
* Recursion over a tree overflows Python's stack on deep input (20,000 nested blocks); every
  walk here keeps its own stack.
* The read callback's every answer is leaked (the binding takes a buffer of it and never drops
  its own reference): a megabyte cell lost a megabyte per parse, and every cell parses more than
  once. So while parsing, the callback answers with views it keeps anyway: one buffer per thread,
  one view of it per power-of-two length (an answer may be shorter than the rest; tree-sitter asks
  again). ``Node.text`` reads through the same callback later and needs bytes: it gets them, and
  its answers are not leaked.

:func:`checkpoint` raises :class:`Stopped` once the preparation it runs in was stopped (interrupt,
time limit): long Python loops call it, so a stopped preparation frees its thread soon.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from tree_sitter import Node, Parser, Query, QueryCursor, Tree

#: Subtrees up to this many nodes are handed to tree-sitter's query whole (its cost per node grows
#: with the subtree's depth and width, so a bound on the size bounds it); bigger ones are walked here.
SMALL: Final = 500
#: Trees up to this many nodes are queried whole: below it the query's superlinear term is small.
WHOLE: Final = 20000
#: Bytes handed to tree-sitter per read (it asks again for the rest).
_CHUNK: Final = 1 << 16


class Stopped(Exception):
    """The preparation this work belongs to was stopped (interrupt or time limit): drop it."""


_stop: ContextVar[threading.Event | None] = ContextVar("mcp2repl_prepare_stop", default=None)


@contextmanager
def stoppable(event: threading.Event) -> Iterator[None]:
    """Run the block as preparation that ``event`` stops (see :func:`checkpoint`)."""
    token = _stop.set(event)
    try:
        yield
    finally:
        _stop.reset(token)


def checkpoint() -> None:
    """Raise :class:`Stopped` if the running preparation was stopped."""
    event = _stop.get()
    if event is not None and event.is_set():
        raise Stopped


class _Chunks(threading.local):
    """A thread's read buffer and its views by length (see the module doc: leaked, but only once)."""

    def __init__(self) -> None:
        self.buffer = bytearray(_CHUNK)
        whole = memoryview(self.buffer)
        self.views = {1 << k: whole[: 1 << k] for k in range(_CHUNK.bit_length())}


_chunks = _Chunks()


def parse(parser: Parser, raw: bytes) -> Tree:
    """``parser.parse(raw)``, but letting other threads run meanwhile and ending when stopped."""
    event = _stop.get()
    chunks = _chunks
    source, size = memoryview(raw), len(raw)
    parsing = True

    def read(offset: int, _point: object) -> memoryview | bytes | None:
        if not parsing:  # Node.text asks the tree's source too, and must be given bytes
            return bytes(source[offset : offset + _CHUNK])
        n = min(_CHUNK, size - offset)
        if n <= 0:
            return None
        n = 1 << (n.bit_length() - 1)  # the largest length a kept view has
        chunks.buffer[:n] = source[offset : offset + n]
        return chunks.views[n]

    def progress(_offset: int, _has_error: bool) -> bool:
        return event is not None and event.is_set()  # True cancels the parse

    try:
        return parser.parse(read, progress_callback=progress)
    except ValueError:  # "Parsing failed": only a cancelled parse fails
        checkpoint()
        raise
    finally:
        parsing = False


def has_any(positions: list[int], start: int, end: int) -> bool:
    """Is one of the sorted ``positions`` in ``[start, end)``?"""
    i = bisect_left(positions, start)
    return i < len(positions) and positions[i] < end


def captures(query: Query, root: Node, raw: bytes, needed: re.Pattern[bytes], in_data: re.Pattern[bytes] | None = None) -> dict[str, list[Node]]:
    """``QueryCursor(query).captures(root)`` of the tree of ``raw``, in linear time (see the module doc).

    Every match contains a token ``needed`` finds (false positives cost time, a miss would lose a
    match): a subtree without one is skipped. ``in_data`` finds more such tokens that count only
    outside array and object literals (``:``, which a TypeScript type annotation needs, but which in
    a data literal only separates keys from values: an annotation there sits in a function, a
    method or a class, which brings a token ``needed`` finds).
    """
    if root.descendant_count <= WHOLE:
        return QueryCursor(query).captures(root)
    return _pruned(query, root, _positions(needed, raw), _positions(in_data, raw) if in_data is not None else [])


def _positions(pattern: re.Pattern[bytes], raw: bytes) -> list[int]:
    checkpoint()
    return [m.start() for m in pattern.finditer(raw)]


def _pruned(query: Query, root: Node, needed: list[int], extra: list[int]) -> dict[str, list[Node]]:
    found: dict[str, list[Node]] = {}

    def add(more: dict[str, list[Node]]) -> None:
        for name, nodes in more.items():
            found.setdefault(name, []).extend(nodes)

    stack: list[tuple[Node, bool]] = [(root, False)]
    visited = 0
    while stack:
        node, data = stack.pop()
        visited += 1
        if not visited % 512:
            checkpoint()
        if node.descendant_count <= SMALL:
            add(QueryCursor(query).captures(node))
            continue
        top = QueryCursor(query)
        top.set_max_start_depth(0)  # the matches rooted at this node only
        add(top.captures(node))
        inside = node.type in _DATA or (data and node.type in _DATA_PARTS)
        cursor = node.walk()
        kids: list[tuple[Node, bool]] = []
        if cursor.goto_first_child():
            while True:
                child = cursor.node
                if child is not None:
                    start, end = child.start_byte, child.end_byte
                    if has_any(needed, start, end) or (not inside and has_any(extra, start, end)):
                        kids.append((child, inside))
                if not cursor.goto_next_sibling():
                    break
        stack.extend(reversed(kids))
    for nodes in found.values():
        nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return found


_DATA: Final = frozenset(("array", "object"))
_DATA_PARTS: Final = frozenset(("pair", "spread_element"))


def first_error(root: Node) -> Node | None:
    """The first ERROR or MISSING node in document order (the innermost node with an error if
    tree-sitter marked one without either), found without recursion."""
    node = root
    while True:
        if node.type == "ERROR" or node.is_missing:
            return node
        if not node.has_error:
            return None
        child = next((c for c in node.children if c.has_error or c.is_missing or c.type == "ERROR"), None)
        if child is None:
            return node
        node = child
