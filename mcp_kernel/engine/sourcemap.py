"""Where the user wrote what V8 reports: a per-line column map from a rewritten cell back to its source.

The rewrite (rewrite.py) only inserts and replaces text within lines, so line numbers survive and
each line needs just its column breakpoints. A map outlives its cell (engine/cellmaps.py), so once
built it keeps only the lines the rewrite changed: the rest map to themselves.
"""

from __future__ import annotations

import bisect
import re


class SourceMap:
    """Maps (line, UTF-16 column) in generated code back to the cell's own (line, column).

    Per line, sorted breakpoints ``(generated_col, original_col, inserted)``: inside an
    unchanged run the offset is constant, inside inserted text everything maps to where the
    insertion was made. Built from the rewrite's pieces when first asked for.
    """

    def __init__(self, source: str, pieces: list[tuple[str, int, bool]] | None = None, shown: str | None = None) -> None:
        # what tracebacks quote: the user's own text (TypeScript before stripping), same lines
        self.lines = (source if shown is None else shown).split("\n")
        self._source = source
        self._shown = shown
        self._pieces = pieces
        self._segments: dict[int, list[tuple[int, int, bool]]] | None = None if pieces else {}

    @classmethod
    def with_prefix(cls, source: str, prefix_len: int, shown: str | None = None) -> SourceMap:
        """The map of ``prefix + source`` where only the prefix was added (syntax probes)."""
        smap = cls(source, shown=shown)
        smap._segments = {1: [(0, 0, True), (prefix_len, 0, False)]}
        return smap

    @property
    def segments(self) -> dict[int, list[tuple[int, int, bool]]]:
        if self._segments is None:
            self._segments = _build_segments(self._source, self._pieces or [])
        return self._segments

    def original(self, line: int, column: int) -> tuple[int, int]:
        """1-based line and UTF-16 column in, 1-based line and code-point column out."""
        segs = self.segments.get(line)
        if not segs:
            return line, column
        i = bisect.bisect_right([s[0] for s in segs], column - 1) - 1
        if i < 0:
            return line, column
        gen, orig, inserted = segs[i]
        if inserted:
            return line, orig + 1
        return line, orig + (column - 1 - gen) + 1

    def changed_lines(self) -> dict[int, list[tuple[int, int, bool]]]:
        """The segments of lines the rewrite changed (the rest map to themselves): what stacks.js needs,
        and all this map keeps from now on (a cell's text in pieces would double what it holds)."""
        self._segments = changed = {line: segs for line, segs in self.segments.items() if segs != [(0, 0, False)]}
        self._pieces = None
        if self._shown is None or self._shown == self._source:
            self._source, self._shown = "", None  # only shown_text needs them now, for TypeScript: ``lines`` is the text
        return changed

    def source_line(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def shown_text(self, snippet: str) -> str | None:
        """What the user wrote where the cell's JavaScript reads ``snippet`` (a function's source, as
        V8 gives it), when they wrote something else (TypeScript); None if the snippet is not here."""
        shown = self._shown
        if shown is None or shown == self._source or len(shown) != len(self._source):
            return None
        at = self._source.rfind(snippet)
        return shown[at : at + len(snippet)] if at >= 0 and snippet else None


def _build_segments(source: str, pieces: list[tuple[str, int, bool]]) -> dict[int, list[tuple[int, int, bool]]]:
    segments: dict[int, list[tuple[int, int, bool]]] = {}
    line_starts = [0, *(m.end() for m in re.finditer("\n", source))]

    def column(offset: int) -> int:
        return offset - line_starts[bisect.bisect_right(line_starts, offset) - 1]

    line, gcol = 1, 0
    for text, origin, inserted in pieces:
        if inserted:
            segments.setdefault(line, []).append((gcol, column(origin), True))
            gcol += _utf16_len(text)
            continue
        offset = origin  # an unchanged run of original text, possibly spanning lines
        for k, part in enumerate(text.split("\n")):
            if k:
                line, gcol = line + 1, 0
                offset += 1
            segments.setdefault(line, []).append((gcol, column(offset), False))
            gcol += _utf16_len(part)
            offset += len(part)
    return segments


def _utf16_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2
