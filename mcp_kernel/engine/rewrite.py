"""Turn one notebook cell into JavaScript that a bare V8 context can run as an async step.

Bare V8 has no REPL mode: a plain script cannot use top-level ``await``, cannot re-run
``const x = …`` and has no notion of "the value of the last expression". So every cell is
wrapped in an ``async function`` and rewritten with a real parser (tree-sitter):

* top-level ``const``/``let``/``var`` become assignments to globals, ``class C`` becomes
  ``C = class C``, and top-level functions are published to ``globalThis`` at the start of the
  body (keeping their hoisting), so later cells see them and re-running a cell works;
* the last top-level expression statement becomes the cell's ``return`` value;
* every loop body and every function body starts with an interrupt check that reads a shared
  flag Python can set from any thread, so runaway code stops wherever it spins.

Edits never add or remove newlines, so line numbers survive unchanged; a per-line column map
(:class:`SourceMap`) turns V8 positions back into the user's own columns.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser, Query, QueryCursor

#: Statement injected at loop back-edges and function entries. ``__mk$f`` is a script-level
#: ``const`` Uint8Array over a SharedArrayBuffer (see bridge.js); ``__mk$i`` throws.
CHECK = "__mk$f[0]&&__mk$i();"
#: The same check around an arrow's expression body (``() => x`` becomes ``() => (check, x)``), so
#: that ``const f = () => queueMicrotask(f)`` can be stopped too; the comment marks the closing paren.
CHECK_OPEN = "(__mk$f[0]&&__mk$i(),"
CHECK_CLOSE = "/*__mk$*/)"

_LOOPS = ("for_statement", "for_in_statement", "while_statement", "do_statement")
_FUNCTIONS = (
    "function_declaration",
    "function_expression",
    "generator_function_declaration",
    "generator_function",
    "arrow_function",
    "method_definition",
)
_QUERY_SOURCE = "[" + " ".join(f"({t})" for t in _FUNCTIONS) + "] @fn [" + " ".join(f"({t})" for t in _LOOPS) + "] @loop"


@lru_cache(maxsize=1)
def _language() -> Language:
    return Language(tree_sitter_javascript.language())


@lru_cache(maxsize=1)
def _query() -> Query:
    return Query(_language(), _QUERY_SOURCE)


def parser() -> Parser:
    """A tree-sitter parser for JavaScript; cheap, but not thread-safe, so make one per use."""
    return Parser(_language())


class CellSyntaxError(Exception):
    """A cell that cannot be rewritten; the message is shown to the user as a SyntaxError."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class SourceMap:
    """Maps (line, UTF-16 column) in generated code back to the cell's own (line, column).

    Per line, sorted breakpoints ``(generated_col, original_col, inserted)``: inside an
    unchanged run the offset is constant, inside inserted text everything maps to where the
    insertion was made. Built lazily from the rewrite's pieces, since only errors need it.
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
        """The segments of lines the rewrite changed (the rest map to themselves): what stacks.js needs."""
        return {line: segs for line, segs in self.segments.items() if segs != [(0, 0, False)]}

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
    line_starts = [0] + [i + 1 for i, ch in enumerate(source) if ch == "\n"]

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


@dataclass
class Rewritten:
    """The JavaScript to evaluate for one cell, plus what the kernel needs to know about it."""

    code: str
    source_map: SourceMap
    declared: list[str]


def _utf16_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


class _Edits:
    """Insertions and replacements keyed by character offsets into the original source."""

    def __init__(self, source: str, raw: bytes) -> None:
        self.source = source
        self.items: list[tuple[int, int, int, str]] = []  # (start, end, order, text)
        self._ascii = len(source) == len(raw)
        self._char_of: list[int] | None = None
        self._raw = raw

    def char(self, byte_offset: int) -> int:
        if self._ascii:
            return byte_offset
        if self._char_of is None:
            table = [0] * (len(self._raw) + 1)
            pos = 0
            for ci, ch in enumerate(self.source):
                n = len(ch.encode("utf-8"))
                for k in range(n):
                    table[pos + k] = ci
                pos += n
            table[pos] = len(self.source)
            self._char_of = table
        return self._char_of[byte_offset]

    def insert(self, byte_offset: int, text: str, order: int = 0) -> None:
        at = self.char(byte_offset)
        self.items.append((at, at, order, text))

    def replace(self, start_byte: int, end_byte: int, text: str) -> None:
        self.items.append((self.char(start_byte), self.char(end_byte), 0, text))

    def apply(self, prefix: str, shown: str | None = None) -> tuple[str, SourceMap]:
        """Build the generated text and its column map; ``prefix`` goes before line 1."""
        src = self.source
        # (text, original offset, inserted?) — inserted text maps to where it was inserted
        pieces: list[tuple[str, int, bool]] = [(prefix, 0, True)]
        pos = 0
        for start, end, _order, text in sorted(self.items, key=lambda e: (e[0], e[2])):
            if start > pos:
                pieces.append((src[pos:start], pos, False))
            pieces.append((text, start, True))
            pos = max(pos, end)
        pieces.append((src[pos:], pos, False))
        return "".join(p[0] for p in pieces), SourceMap(src, pieces, shown)


def _declared_names(pattern: Node, out: list[str]) -> None:
    """Collect the identifiers bound by a declarator name (identifier or destructuring)."""
    kind = pattern.type
    if kind in ("identifier", "shorthand_property_identifier_pattern"):
        out.append(pattern.text.decode())
    elif kind == "pair_pattern":
        value = pattern.child_by_field_name("value")
        if value is not None:
            _declared_names(value, out)
    elif kind == "assignment_pattern":
        left = pattern.child_by_field_name("left")
        if left is not None:
            _declared_names(left, out)
    else:
        for child in pattern.named_children:
            _declared_names(child, out)


def first_error(node: Node) -> Node | None:
    if node.type == "ERROR" or node.is_missing:
        return node
    if not node.has_error:
        return None
    for child in node.children:
        found = first_error(child)
        if found is not None:
            return found
    return node


def _rewrite_declaration(node: Node, edits: _Edits, declared: list[str], hoisted: list[str]) -> None:
    keyword = node.children[0]
    kind = keyword.type  # "const" | "let" | "var"
    declarators = [c for c in node.named_children if c.type == "variable_declarator"]
    exprs = 0
    for d in declarators:
        name = d.child_by_field_name("name")
        names: list[str] = []
        if name is not None:
            _declared_names(name, names)
        declared.extend(names)
        if d.child_by_field_name("value") is None and name is not None:
            if kind == "var":
                # `var x;` must not reset an existing x, like a script would not.
                hoisted.extend(names)
                edits.insert(name.end_byte, f" = globalThis[{json.dumps(names[0])}]")
            else:
                edits.insert(name.end_byte, " = undefined")
        exprs += 1
    if not declarators:
        return
    # `;(` guards against ASI joining us to the previous line; `(` lets destructuring assign.
    edits.replace(keyword.start_byte, keyword.end_byte, ";(")
    last = declarators[-1]
    has_semicolon = node.children[-1].type == ";"
    edits.insert(last.end_byte, ")" if has_semicolon else ");", order=1)


def rewrite(source: str, cell_name: str, shown: str | None = None) -> Rewritten:
    """Rewrite ``source`` into ``__mcp2repl.run(cell, async function(){…})``.

    ``shown`` is what the user wrote when ``source`` is derived from it with every position kept
    (TypeScript with its types blanked): tracebacks quote its lines. Raises
    :class:`CellSyntaxError` for what the parser already knows is not JavaScript; V8 reports any
    remaining syntax errors when it compiles the result.
    """
    raw = source.encode("utf-8")
    tree = parser().parse(raw)
    root = tree.root_node
    if root.has_error:
        err = first_error(root)
        assert err is not None
        line, col = err.start_point
        raise CellSyntaxError("Unexpected token" if not err.is_missing else f"Missing {err.type}", line + 1, col + 1)

    edits = _Edits(source, raw)
    declared: list[str] = []
    hoisted_vars: list[str] = []
    functions: list[str] = []
    statements = [c for c in root.named_children if c.type not in ("comment", "hash_bang_line")]

    for stmt in statements:
        kind = stmt.type
        if kind in ("import_statement", "export_statement"):
            line, col = stmt.start_point
            raise CellSyntaxError(
                f"'{kind.split('_')[0]}' is not available: cells have no module system (MCP tools and the api object are already global)",
                line + 1,
                col + 1,
            )
        if kind in ("lexical_declaration", "variable_declaration"):
            _rewrite_declaration(stmt, edits, declared, hoisted_vars)
        elif kind in ("function_declaration", "generator_function_declaration"):
            name = stmt.child_by_field_name("name")
            if name is not None:
                functions.append(name.text.decode())
        elif kind == "class_declaration":
            name = stmt.child_by_field_name("name")
            if name is not None:
                n = name.text.decode()
                declared.append(n)
                edits.insert(stmt.start_byte, f";{n}=")
                edits.insert(stmt.end_byte, ";", order=1)

    if statements and statements[-1].type == "expression_statement":
        last = statements[-1]
        expr = last.named_children[0] if last.named_children else None
        if expr is not None:
            edits.insert(expr.start_byte, ";return (", order=2)
            edits.insert(expr.end_byte, ")", order=-1)

    _inject_checks(root, edits)

    hoist = "".join(f"if(!({json.dumps(n)} in globalThis))globalThis[{json.dumps(n)}]=undefined;" for n in hoisted_vars)
    hoist += "".join(f"globalThis[{json.dumps(n)}]={n};" for n in functions)
    declared.extend(functions)
    prefix = f"__mcp2repl.run({json.dumps(cell_name)},async function(){{{CHECK}{hoist}"
    body, smap = edits.apply(prefix, shown)
    # the map rides along as the wrapper's last argument: stacks.js maps positions while they are made
    changed = json.dumps({line: [[g, o, int(i)] for g, o, i in segs] for line, segs in smap.changed_lines().items()}, separators=(",", ":"))
    code = f"{body}\n}},{changed})\n//# sourceURL={cell_name}"
    return Rewritten(code=code, source_map=smap, declared=declared)


def _inject_checks(root: Node, edits: _Edits) -> None:
    captures = QueryCursor(_query()).captures(root)
    for node in captures.get("loop", []):
        body = node.child_by_field_name("body")
        if body is None:
            continue
        if body.type == "statement_block":
            edits.insert(body.start_byte + 1, CHECK)
        else:
            edits.insert(body.start_byte, "{" + CHECK, order=3)
            edits.insert(body.end_byte, "}", order=-2)
    for node in captures.get("fn", []):
        body = node.child_by_field_name("body")
        if body is None:
            continue
        if body.type != "statement_block":  # an arrow's expression body
            edits.insert(body.start_byte, CHECK_OPEN, order=3)
            edits.insert(body.end_byte, CHECK_CLOSE, order=-2)
            continue
        at = body.start_byte + 1
        for stmt in body.named_children:  # keep a "use strict" prologue first
            if stmt.type == "expression_statement" and stmt.named_children and stmt.named_children[0].type == "string":
                at = stmt.end_byte
            elif stmt.type != "comment":
                break
        edits.insert(at, CHECK)


def strip_checks(js_source: str) -> str:
    """Remove injected interrupt checks from function source shown to users."""
    return js_source.replace("{" + CHECK, "{").replace(CHECK, "").replace(CHECK_OPEN, "").replace(CHECK_CLOSE, "")
