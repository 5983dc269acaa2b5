"""Automatic semicolons that tree-sitter-javascript misses, so valid cells can still be rewritten.

JavaScript inserts ``;`` before a token that cannot continue the statement when a line break
precedes it. tree-sitter's scanner decides at the line break, before it sees what follows, and
never inserts one before ``(``, ``[``, a template or ``/``, because those *can* continue an
expression. So ``let t`` + line break + ``(f)()`` (or `` `text` ``), a class field without a
value before a computed one, or ``var t`` before a regular expression, all of which V8 runs,
come back from tree-sitter as errors. Type stripping makes these shapes common:
``let t: string`` becomes ``let t`` followed by blanks.

:func:`insert_semicolons` writes the ``;`` V8 would insert, after the last token before the line
break that follows the parse error, and keeps it only if the parse gets further. The engine calls
it only after V8 compiled the cell, so a repair can never make an invalid cell run; the ``;`` goes
at the end of a line, after the last token, so every position of the user's code stays the same.
"""

from __future__ import annotations

from tree_sitter import Node

from .rewrite import first_error, parser

#: Semicolons one cell may get; each must move the first parse error further on.
MAX_REPAIRS = 8
#: Line breaks after an error tried for one repair (tree-sitter's error may start a line early).
TRIES_PER_ERROR = 3
_BREAKS = ("\n", "\r", "\u2028", "\u2029")


def insert_semicolons(source: str) -> str | None:
    """``source`` with the semicolons tree-sitter missed, or None if that does not make it parse."""
    text = source
    for _ in range(MAX_REPAIRS):
        raw = text.encode("utf-8")
        root = parser().parse(raw).root_node
        if not root.has_error:
            return text if text != source else None
        error = first_error(root)
        if error is None:
            return None
        fixed = _repair(text, raw, root, error)
        if fixed is None:
            return None
        text = fixed
    return None


def _repair(text: str, raw: bytes, root: Node, error: Node) -> str | None:
    """One ``;`` that moves the first error on, or None."""
    line_break = _char_offset(raw, error.start_byte)
    for _ in range(TRIES_PER_ERROR):
        line_break = _next_break(text, line_break)
        if line_break < 0:
            return None
        at = _last_token_end(raw, root, len(text[:line_break].encode("utf-8")))
        if at is not None:
            at_char = _char_offset(raw, at)
            candidate = text[:at_char] + ";" + text[at_char:]
            after = parser().parse(candidate.encode("utf-8")).root_node
            moved = first_error(after) if after.has_error else None
            if moved is None or moved.start_byte > error.end_byte:
                return candidate
        line_break += 1
    return None


def _next_break(text: str, start: int) -> int:
    found = [i for i in (text.find(b, start) for b in _BREAKS) if i >= 0]
    return min(found) if found else -1


def _last_token_end(raw: bytes, root: Node, limit: int) -> int | None:
    """End of the last token (never a comment) that ends at or before byte ``limit``."""
    best: int | None = None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.start_byte >= limit or node.type == "comment":
            continue
        if node.child_count == 0:
            if node.end_byte <= limit and node.end_byte > node.start_byte and (best is None or node.end_byte > best):
                best = node.end_byte
            continue
        stack.extend(node.children)
    return best


def _char_offset(raw: bytes, byte_offset: int) -> int:
    return len(raw[:byte_offset].decode("utf-8", "replace"))
