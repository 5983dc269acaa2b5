"""Turn one notebook cell into JavaScript that a bare V8 context can run as an async step.

Bare V8 has no REPL mode: a plain script cannot use top-level ``await``, cannot re-run
``const x = …`` and has no notion of "the value of the last expression". So every cell is
wrapped in an ``async function`` and rewritten with a real parser (tree-sitter):

* top-level ``const``/``let``/``var`` become assignments to globals, ``class C`` becomes
  ``C = class C``, and top-level functions are published to ``globalThis`` at the start of the
  body (keeping their hoisting), so later cells see them and re-running a cell works;
* the last top-level expression statement (or a trailing if/try/loop's completion value) becomes
  the cell's ``return`` value, boxed like every top-level ``return X`` (``__mk$v``, bridge.js): an
  async function's result is resolved through its ``then``, which a cell may put on Object.prototype;
* every loop body and every function body starts with an interrupt check that reads a shared
  flag Python can set from any thread, so runaway code stops wherever it spins.

Edits never add or remove newlines, so line numbers survive unchanged; a per-line column map
(:class:`SourceMap`) turns V8 positions back into the user's own columns.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser, Query

from . import treewalk
from .sourcemap import SourceMap
from .treewalk import first_error

__all__ = ["CHECK", "CellSyntaxError", "Rewritten", "SourceMap", "first_error", "parser", "rewrite", "strip_checks"]

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
#: What every function and loop contains: a parameter list's or a loop head's ``(``, or an arrow.
_FN_OR_LOOP_TOKENS = re.compile(rb"\(|=>")
RETURN_OPEN = ";return __mk$v(("  # the cell's value, in a box with no prototype (bridge.js)
BOX_OPEN = "__mk$v(("
BOX_CLOSE = "))"
_RETURN_TOKEN = re.compile(rb"return")


@lru_cache(maxsize=1)
def _language() -> Language:
    return Language(tree_sitter_javascript.language())


@lru_cache(maxsize=1)
def _query() -> Query:
    return Query(_language(), _QUERY_SOURCE)


@lru_cache(maxsize=1)
def _returns() -> Query:
    return Query(_language(), "(return_statement) @ret")


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


@dataclass
class Rewritten:
    """The JavaScript to evaluate for one cell, plus what the kernel needs to know about it."""

    code: str
    source_map: SourceMap
    declared: list[str]
    lasting: bool = True  # may code of the cell's run after it ended?


class _Edits:
    """Insertions and replacements keyed by byte offsets into the original source (tree-sitter's),
    turned into character offsets once, in one pass, when applied."""

    def __init__(self, source: str, raw: bytes) -> None:
        self.source = source
        self.items: list[tuple[int, int, int, str]] = []  # (start byte, end byte, order, text)
        self.raw = raw

    def insert(self, byte_offset: int, text: str, order: int = 0) -> None:
        self.items.append((byte_offset, byte_offset, order, text))

    def replace(self, start_byte: int, end_byte: int, text: str) -> None:
        self.items.append((start_byte, end_byte, 0, text))

    def _in_chars(self) -> list[tuple[int, int, int, str]]:
        if len(self.source) == len(self.raw):  # ASCII: bytes are characters
            return self.items
        offsets = sorted({b for start, end, _, _ in self.items for b in (start, end)})
        chars: dict[int, int] = {}
        pos = count = 0
        for b in offsets:
            count += len(self.raw[pos:b].decode("utf-8"))
            chars[b] = count
            pos = b
        return [(chars[start], chars[end], order, text) for start, end, order, text in self.items]

    def apply(self, prefix: str, shown: str | None = None) -> tuple[str, SourceMap]:
        """Build the generated text and its column map; ``prefix`` goes before line 1."""
        src = self.source
        # (text, original offset, inserted?) — inserted text maps to where it was inserted
        pieces: list[tuple[str, int, bool]] = [(prefix, 0, True)]
        pos = 0
        for start, end, _order, text in sorted(self._in_chars(), key=lambda e: (e[0], e[2])):
            if start > pos:
                pieces.append((src[pos:start], pos, False))
            pieces.append((text, start, True))
            pos = max(pos, end)
        pieces.append((src[pos:], pos, False))
        return "".join(p[0] for p in pieces), SourceMap(src, pieces, shown)


def _declared_names(pattern: Node, out: list[str]) -> None:
    """Collect the identifiers bound by a declarator name (identifier or destructuring), in order."""
    stack = [pattern]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in ("identifier", "shorthand_property_identifier_pattern"):
            out.append(node.text.decode())
        elif kind in ("pair_pattern", "assignment_pattern"):
            part = node.child_by_field_name("value" if kind == "pair_pattern" else "left")
            if part is not None:
                stack.append(part)
        else:
            stack.extend(reversed(node.named_children))


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
    tree = treewalk.parse(parser(), raw)
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

    valued = False
    if statements and statements[-1].type == "expression_statement":
        last = statements[-1]
        expr = last.named_children[0] if last.named_children else None
        if expr is not None:
            edits.insert(expr.start_byte, RETURN_OPEN, order=2)
            edits.insert(expr.end_byte, BOX_CLOSE, order=-1)
    elif statements and statements[-1].type in _COMPOUND:
        for expr in _completion_values(statements[-1]):
            valued = True
            # no `;` first (it may be an if's whole branch); inside a loop body's `{check` and its `}`
            edits.insert(expr.start_byte, f"{VALUE}=(", order=4)
            edits.insert(expr.end_byte, ")", order=-3)
        if valued:
            edits.insert(statements[-1].end_byte, f";return {BOX_OPEN}{VALUE}{BOX_CLOSE};", order=1)
    _box_top_level_returns(root, edits)

    # code of the cell's may run once it ended (functions, methods, classes): its map must stay (cellmaps)
    lasting = _inject_checks(root, edits) or b"class" in raw

    hoist = f"let {VALUE};" if valued else ""
    hoist += "".join(f"if(!({json.dumps(n)} in globalThis))globalThis[{json.dumps(n)}]=undefined;" for n in hoisted_vars)
    hoist += "".join(f"globalThis[{json.dumps(n)}]={n};" for n in functions)
    declared.extend(functions)
    prefix = f"__mcp2repl.run({json.dumps(cell_name)},async function(){{{CHECK}{hoist}"
    body, smap = edits.apply(prefix, shown)
    # the map rides along as the wrapper's last argument: stacks.js maps positions while they are made
    changed = json.dumps({line: [[g, o, int(i)] for g, o, i in segs] for line, segs in smap.changed_lines().items()}, separators=(",", ":"))
    code = f"{body}\n}},{changed})\n//# sourceURL={cell_name}"
    return Rewritten(code=code, source_map=smap, declared=declared, lasting=lasting)


#: The value of a cell ending in one of these (``if (x) { 1 } else { 2 }``) is its completion value,
#: as in Node's REPL: the last expression statement it ran, kept in VALUE.
_COMPOUND = frozenset(("if_statement", "try_statement", "switch_statement", "statement_block", "labeled_statement", *_LOOPS))
_BRANCHES = _COMPOUND | {"else_clause", "catch_clause", "switch_body", "switch_case", "switch_default"}
VALUE = "__mk$c"


def _completion_values(stmt: Node) -> list[Node]:
    """The expressions of the expression statements whose value can be ``stmt``'s completion value: in
    its blocks, branches, catch clauses, cases and loop bodies (not in functions, nor in ``finally``,
    whose completion JavaScript does not keep)."""
    found: list[Node] = []
    stack = [stmt]
    while stack:
        node = stack.pop()
        if node.type == "expression_statement":
            if node.named_children:
                found.append(node.named_children[0])
        elif node.type in _LOOPS:  # the body only: a loop's head has expression statements of its own
            body = node.child_by_field_name("body")
            if body is not None:
                stack.append(body)
        elif node.type in _BRANCHES:
            stack.extend(reversed(node.named_children))
    return found


def _box_top_level_returns(root: Node, edits: _Edits) -> None:
    """Box the value of each ``return X`` of the cell itself (not of a function in it)."""
    for node in treewalk.captures(_returns(), root, edits.raw, _RETURN_TOKEN).get("ret", []):
        value = next((c for c in node.named_children if c.type != "comment"), None)
        up = node.parent
        while up is not None and up.type not in _FUNCTIONS and up.type != "class_body":
            up = up.parent
        if value is not None and up is None:
            edits.insert(value.start_byte, BOX_OPEN, order=2)
            edits.insert(value.end_byte, BOX_CLOSE, order=-1)


def _inject_checks(root: Node, edits: _Edits) -> bool:
    """Put interrupt checks in every loop and function; does the cell define any function?"""
    captures = treewalk.captures(_query(), root, edits.raw, _FN_OR_LOOP_TOKENS)
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
    return bool(captures.get("fn"))


def strip_checks(js_source: str) -> str:
    """Remove injected interrupt checks from function source shown to users."""
    return js_source.replace("{" + CHECK, "{").replace(CHECK, "").replace(CHECK_OPEN, "").replace(CHECK_CLOSE, "")
