"""How deeply a cell nests, and the SyntaxError for a cell nested too deeply to compile.

V8 compiles (and, for a function, lazily compiles) by recursion, on a stack of under 1 MB: in this
build a cell overflows it at about 1,750 nested object literals, 1,930 nested calls, 2,200
parentheses, 2,580 blocks, 2,810 template substitutions or 3,220 arrays, at 800 nested functions,
and at 3,400 to 15,000 levels of ``?:``, ``if`` or unary chains. The overflow surfaced as an
``InternalError`` naming the runtime's own frames (``bridge.js``), or hung the kernel before it.

So a cell may nest :data:`MAX_NESTING` levels of brackets (``( [ { ${``), below every bracket limit
above, and deeper cells get one clear SyntaxError before any work is spent on them; whatever V8
still cannot compile (deep functions or chains within that bound) gets the same kind of error from
:func:`too_deep_for_v8`, never V8's raw ``RangeError``.

:func:`deepest` is a lexical scan (strings, comments, templates and regular expressions skipped),
linear and cheap; it only decides whether the exact count from the syntax tree is needed.
"""

from __future__ import annotations

import re
from typing import Final

from tree_sitter import Node, Parser

from . import errors, treewalk
from .errors import JSError
from .rewrite import SourceMap

#: Levels of brackets a cell may nest.
MAX_NESTING: Final = 1000
#: V8's message when its stack overflows, at compile time here.
V8_OVERFLOW: Final = "Maximum call stack size exceeded"

_TOKEN = re.compile(
    rb"""[()\[\]{}`/]|'(?:[^'\\\n]|\\.)*'?|"(?:[^"\\\n]|\\.)*"?""",
)
_TEMPLATE = re.compile(rb"(?:[^`\\$]|\\.|\$(?!\{))*(`|\$\{|\Z)", re.S)
_REGEX = re.compile(rb"(?:[^/\\\[\n]|\\.|\[(?:[^\]\\\n]|\\.)*\]?)+/?")
_LINE_COMMENT = re.compile(rb"[^\n]*")
_BLOCK_COMMENT = re.compile(rb".*?(?:\*/|\Z)", re.S)
#: After these a ``/`` starts a regular expression, not a division.
_BEFORE_REGEX = frozenset(b"(,=:[!&|?{};+-*%<>~^")
_WORD_BEFORE_REGEX = re.compile(rb"(?:^|[^\w$])(?:return|typeof|instanceof|in|of|new|delete|void|throw|case|do|else|yield|await)\s*$")


def deepest(raw: bytes) -> int:
    """The deepest level of brackets in ``raw`` (UTF-8 JavaScript or TypeScript), from its tokens."""
    depth = most = 0
    substitutions: list[int] = []  # the depth at which each open `${` of a template started
    pos, end, count = 0, len(raw), 0
    while pos < end:
        found = _TOKEN.search(raw, pos)
        if found is None:
            break
        token, pos = found.group(), found.end()
        first = token[0]
        in_template = first == 0x60  # `
        if first in b"([{":
            depth += 1
            most = max(most, depth)
        elif first in b")]":
            depth = max(0, depth - 1)
        elif first == 0x7D:  # }
            if substitutions and substitutions[-1] == depth:  # back in the template's text
                substitutions.pop()
                in_template = True
            depth = max(0, depth - 1)
        elif first == 0x2F:  # /
            pos = _slash(raw, found.start(), pos)
        if in_template:
            text = _TEMPLATE.match(raw, pos)
            assert text is not None
            pos = text.end()
            if text.group(1) == b"${":
                depth += 1
                most = max(most, depth)
                substitutions.append(depth)
        count += 1
        if not count % 4096:
            treewalk.checkpoint()
    return most


def _slash(raw: bytes, at: int, pos: int) -> int:
    """Past a comment or a regular expression starting at ``at``; a division is one character."""
    follows = raw[pos : pos + 1]
    if follows == b"/":
        return _LINE_COMMENT.match(raw, pos).end()  # type: ignore[union-attr]
    if follows == b"*":
        return _BLOCK_COMMENT.match(raw, pos + 1).end()  # type: ignore[union-attr]
    before = raw[max(0, at - 16) : at].rstrip()
    if not before or before[-1] in _BEFORE_REGEX or _WORD_BEFORE_REGEX.search(before):
        body = _REGEX.match(raw, pos)
        return body.end() if body is not None else pos
    return pos


def exact(root: Node) -> tuple[int, tuple[int, int] | None]:
    """The deepest level of brackets in the syntax tree, and the (row, byte column) of the first
    bracket past :data:`MAX_NESTING`; a walk of every token, done only for a cell :func:`deepest`
    found too deep."""
    depth = most = 0
    where: tuple[int, int] | None = None
    cursor = root.walk()
    steps = 0
    while True:
        steps += 1
        if not steps % 4096:
            treewalk.checkpoint()
        if cursor.goto_first_child():
            continue
        kind = cursor.node.type if cursor.node is not None else ""
        if kind in ("(", "[", "{", "${"):
            depth += 1
            if depth > most:
                most = depth
                if depth == MAX_NESTING + 1 and cursor.node is not None:
                    where = cursor.node.start_point
        elif kind in (")", "]", "}"):
            depth = max(0, depth - 1)
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return most, where


def past_limit(raw: bytes, parser: Parser) -> tuple[int, tuple[int, int]] | None:
    """(levels, (row, byte column) of the first bracket past the limit) if ``raw`` nests past
    :data:`MAX_NESTING`, else None: the scan first, the exact count only when the scan says so."""
    if deepest(raw) <= MAX_NESTING:
        return None
    levels, where = exact(treewalk.parse(parser, raw).root_node)
    return (levels, where) if levels > MAX_NESTING and where is not None else None


def too_deep(levels: int) -> str:
    return (
        f"nested too deeply: {levels:,} levels of brackets (limit {MAX_NESTING:,}). "
        "Build deep data at run time (JSON.parse of a string, or a loop) and split deep code into functions"
    )


def too_deep_for_v8(levels: int) -> str:
    return (
        f"nested too deeply: V8 ran out of stack compiling this cell ({levels:,} level{'s' if levels != 1 else ''} of brackets; each nested "
        "function, if/else and ?: takes more of it). Split the code into smaller functions"
    )


def too_deep_error(smap: SourceMap, cell: str) -> JSError:
    """V8 ran out of stack compiling the cell: a SyntaxError saying so, not V8's RangeError in our frames."""
    levels = deepest("\n".join(smap.lines).encode("utf-8"))
    return errors.syntax_error(too_deep_for_v8(levels), cell, 1, 1, None)
