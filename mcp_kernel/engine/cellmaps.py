"""The source maps of past cells, kept while code of theirs can still run.

A cell's map turns V8's positions in its rewritten code back into the user's for every stack that
passes through it, also later: a function it defined may throw in cell 900, and V8 formats an
error's stack when it is first read, not when it is made. Keeping every map forever made a session
grow by some 10 KB a cell (its Python map and stacks.js's copy) however little the cell held.

So a plain cell (no function, method or class: nothing of it can run once it ended) keeps its map
only while it is among the latest cells (``recent`` of them, within ``recent_chars`` of text: a
map quotes its cell's lines, and 32 cells of 4 MB each were 256 MB), enough for an error it
stored to be shown soon after; a cell that left code behind keeps its map within a budget of
cells and characters, the oldest dropped first. The latest cell's map is always kept. What is
dropped here is dropped in V8 as the next cell starts (``forget`` adds the names to its code), so
keeping both sides in step costs no round trip.
"""

from __future__ import annotations

import json
from collections import OrderedDict, deque
from collections.abc import Iterator, Mapping

from .sourcemap import SourceMap

#: how many of the latest cells keep their maps whatever they held, within how many characters of text
RECENT = 32
RECENT_CHARS = 4 << 20
#: cells that defined code, and the characters of their source, whose maps are kept at most
LASTING_CELLS = 4096
LASTING_CHARS = 16 << 20


class CellMaps(Mapping[str, SourceMap]):
    """Cell name -> its source map, oldest first; ``keep`` adds one and says which were dropped."""

    def __init__(
        self, recent: int = RECENT, lasting_cells: int = LASTING_CELLS, lasting_chars: int = LASTING_CHARS, recent_chars: int = RECENT_CHARS
    ) -> None:
        self._maps: OrderedDict[str, SourceMap] = OrderedDict()
        self._sizes: dict[str, int] = {}  # name -> characters of its text
        self._lasting: OrderedDict[str, None] = OrderedDict()  # oldest first
        self._recent: deque[str] = deque()
        self._lasting_chars = self._recent_chars = 0
        self._limits = (recent, lasting_cells, lasting_chars, recent_chars)

    def __getitem__(self, cell: str) -> SourceMap:
        return self._maps[cell]

    def __iter__(self) -> Iterator[str]:
        return iter(self._maps)

    def __len__(self) -> int:
        return len(self._maps)

    def keep(self, cell: str, smap: SourceMap, lasting: bool) -> list[str]:
        """Add ``cell``'s map (a cell run again under its name replaces its old one); the names dropped."""
        recent, lasting_cells, lasting_chars, recent_chars = self._limits
        if cell in self._maps:
            self._drop(cell)
        self._maps[cell] = smap
        self._sizes[cell] = size = sum(len(line) + 1 for line in smap.lines)
        if lasting:
            self._lasting[cell] = None
            self._lasting_chars += size
        self._recent.append(cell)
        self._recent_chars += size
        dropped: list[str] = []
        while len(self._recent) > 1 and (len(self._recent) > recent or self._recent_chars > recent_chars):
            old = self._recent.popleft()
            self._recent_chars -= self._sizes[old]
            if old not in self._lasting:
                self._drop(old)
                dropped.append(old)
        while len(self._lasting) > 1 and (len(self._lasting) > lasting_cells or self._lasting_chars > lasting_chars):
            old = next(iter(self._lasting))
            self._drop(old)
            dropped.append(old)
        return dropped

    def _drop(self, cell: str) -> None:
        """Forget ``cell`` everywhere it is counted."""
        size = self._sizes.pop(cell)
        del self._maps[cell]
        if cell in self._lasting:
            del self._lasting[cell]
            self._lasting_chars -= size
        if cell in self._recent:
            self._recent.remove(cell)
            self._recent_chars -= size


def forget(code: str, cells: list[str]) -> str:
    """``code`` (a rewritten cell) that first drops the stacks.js maps of ``cells``.

    They go in as the wrapper's last argument, on its closing line after every line of the user's
    (no position of theirs moves), and are dropped before the cell's body starts.
    """
    if not cells:
        return code
    head, sep, tail = code.rpartition(")\n//# sourceURL=")
    return f"{head},{json.dumps(cells)}{sep}{tail}"
