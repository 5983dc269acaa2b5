"""The source maps of past cells, kept while code of theirs can still run.

A cell's map turns V8's positions in its rewritten code back into the user's for every stack that
passes through it, also later: a function it defined may throw in cell 900, and V8 formats an
error's stack when it is first read, not when it is made. Keeping every map forever made a session
grow by some 10 KB a cell (its Python map and stacks.js's copy) however little the cell held.

So a plain cell (no function, method or class: nothing of it can run once it ended) keeps its map
only while it is among the last ``recent`` cells, enough for an error it stored to be shown soon
after; a cell that left code behind keeps its map within a budget of cells and characters, the
oldest dropped first. What is dropped here is dropped in V8 as the next cell starts (``forget``
adds the names to its code), so keeping both sides in step costs no round trip.
"""

from __future__ import annotations

import json
from collections import OrderedDict, deque
from collections.abc import Iterator, Mapping

from .sourcemap import SourceMap

#: how many of the latest cells keep their maps whatever they held
RECENT = 32
#: cells that defined code, and the characters of their source, whose maps are kept at most
LASTING_CELLS = 4096
LASTING_CHARS = 16 << 20


class CellMaps(Mapping[str, SourceMap]):
    """Cell name -> its source map, oldest first; ``keep`` adds one and says which were dropped."""

    def __init__(self, recent: int = RECENT, lasting_cells: int = LASTING_CELLS, lasting_chars: int = LASTING_CHARS) -> None:
        self._maps: OrderedDict[str, SourceMap] = OrderedDict()
        self._lasting: OrderedDict[str, int] = OrderedDict()  # name -> characters, oldest first
        self._chars = 0
        self._recent: deque[str] = deque()
        self._limits = (recent, lasting_cells, lasting_chars)

    def __getitem__(self, cell: str) -> SourceMap:
        return self._maps[cell]

    def __iter__(self) -> Iterator[str]:
        return iter(self._maps)

    def __len__(self) -> int:
        return len(self._maps)

    def keep(self, cell: str, smap: SourceMap, lasting: bool) -> list[str]:
        """Add ``cell``'s map (a cell run again under its name replaces its old one); the names dropped."""
        recent, lasting_cells, lasting_chars = self._limits
        self._chars -= self._lasting.pop(cell, 0)
        self._maps.pop(cell, None)
        self._maps[cell] = smap
        if lasting:
            self._lasting[cell] = size = sum(len(line) + 1 for line in smap.lines)
            self._chars += size
        if cell in self._recent:
            self._recent.remove(cell)
        self._recent.append(cell)
        dropped: list[str] = []
        while len(self._recent) > recent:
            old = self._recent.popleft()
            if old not in self._lasting:
                del self._maps[old]
                dropped.append(old)
        while len(self._lasting) > 1 and (len(self._lasting) > lasting_cells or self._chars > lasting_chars):
            old, size = self._lasting.popitem(last=False)
            self._chars -= size
            del self._maps[old]
            if old in self._recent:
                self._recent.remove(old)
            dropped.append(old)
        return dropped


def forget(code: str, cells: list[str]) -> str:
    """``code`` (a rewritten cell) that first drops the stacks.js maps of ``cells``.

    They go in as the wrapper's last argument, on its closing line after every line of the user's
    (no position of theirs moves), and are dropped before the cell's body starts.
    """
    if not cells:
        return code
    head, sep, tail = code.rpartition(")\n//# sourceURL=")
    return f"{head},{json.dumps(cells)}{sep}{tail}"
