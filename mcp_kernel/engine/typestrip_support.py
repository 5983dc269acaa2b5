"""Helpers of type stripping (typestrip.py).

* :func:`statement_ends`: where TypeScript ends a statement at a line break but
  tree-sitter-typescript reads on. TypeScript never continues a type with ``(``, nor with ``[``
  or a template literal on the next line; tree-sitter reads ``x as T`` + ``(y)`` on the next
  line as a call, ``T`` + ``[k]`` as an indexed type and ``T`` + `` `s` `` as part of the
  type. Erasing the type then would silently glue two statements, so the cell is parsed a
  second time with these statements already ended, as ts-blank-space ends them.
* :func:`render`: applies byte ranges to the source with code-point offsets, so that every
  erased character is one space whatever its UTF-8 length.
* small tree and text questions the walk asks (operator grouping, value namespaces).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter_typescript
from tree_sitter import Language, Node, Parser

_TRIVIA = re.compile(rb"(?:\s|//[^\n]*|/\*.*?\*/)*", re.S)
_BLANK = re.compile("[^\n\r\u2028\u2029]")  # V8's four line terminators stay, so line numbers do
_LINE_BREAK = re.compile("[\n\r\u2028\u2029]")
_BLANK_BYTES = re.compile(rb"[^\r\n]")
_ASSERTIONS = ("as_expression", "satisfies_expression")
# Words after which a type goes on (`keyof` + line break + `T` is one type).
_TYPE_PREFIXES = frozenset(b"keyof extends readonly is infer unique asserts typeof in as satisfies new type".split())
_WORD = re.compile(rb"[\w$\x80-\xff]+$")
_LINE_STARTS_WITH_BRACKET = re.compile(rb"\n[ \t\r\f\v]*[(\[`]")
_TYPE_OWNERS = frozenset(("as_expression", "satisfies_expression", "type_annotation", "type_alias_declaration"))
_STATEMENT_LISTS = frozenset(("program", "statement_block", "class_body", "switch_body"))
# Tokens that matter when looking for the `>` closing `<` type arguments.
_ANGLE_SCAN = re.compile(rb"""=>|[<>()\[\]{};]|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`|//[^\n]*|/\*.*?\*/""", re.S)

_NOT_IN_TYPES = re.compile(rb"&&|\|\||==|!=|\?\?")
_PRECEDENCE = {"**": 15, "*": 14, "/": 14, "%": 14, "+": 13, "-": 13, "<<": 12, ">>": 12, ">>>": 12}
_PRECEDENCE |= dict.fromkeys(("<", "<=", ">", ">=", "instanceof", "in"), 11)
_PRECEDENCE |= dict.fromkeys(("==", "!=", "===", "!=="), 10) | {"&": 9, "^": 8, "|": 7, "&&": 6, "||": 5, "??": 4}
_NEXT_OPERATOR = re.compile(
    rb"(?:\s|//[^\n]*|/\*.*?\*/)*(\*\*|\?\?|&&|\|\||>>>|>>|<<|<=|>=|===|!==|==|!=|instanceof\b|in\b|[-*/%+<>&^|])(?!=)", re.S
)


@lru_cache(maxsize=1)
def language() -> Language:
    return Language(tree_sitter_typescript.language_typescript())


Puts = list[tuple[int, int, str]]  # (byte offset, code points after it, character)


@dataclass
class Ends:
    """Statement ends to make visible before the second parse (all byte offsets)."""

    blanks: list[tuple[int, int]] = field(default_factory=list)
    puts: Puts = field(default_factory=list)
    erased: dict[int, int] = field(default_factory=dict)  # type-only statement start -> its end
    breaks: list[int] = field(default_factory=list)  # line breaks that end a type tree-sitter could not read

    def patch(self, raw: bytes) -> bytes:
        """``raw`` with the blanks applied and each erased statement made a lone ``;``.

        A line break in ``breaks`` becomes ``;`` too: only the parse sees it, never the output.
        """
        text = bytearray(raw)
        for start, end in self.blanks + list(self.erased.items()):
            text[start:end] = _BLANK_BYTES.sub(b" ", raw[start:end])
        for at in [p[0] for p in self.puts] + list(self.erased) + self.breaks:
            text[at] = 0x3B
        return bytes(text)

    def break_puts(self, root: Node) -> Puts:
        """A ``;`` after the expression of ``x as T`` that a break ends, so JavaScript ends it too."""
        puts: Puts = []
        for at in self.breaks:
            node = root.descendant_for_byte_range(at, at + 1)
            while node is not None and node.end_byte == at + 1 and node.type != "expression_statement":
                node = node.parent
            if node is None or node.type != "expression_statement":
                continue
            while node.child_count and node.type not in _ASSERTIONS:
                node = next((c for c in reversed(node.children) if c.end_byte <= at and c.type != ";"), None)
                if node is None or node.end_byte != at:
                    break
            if node is not None and node.type in _ASSERTIONS:
                puts.append((node.children[0].end_byte, 0, ";"))
        return puts


def statement_ends(raw: bytes, root: Node, captures: list[Node]) -> Ends:
    """Find the statements TypeScript ends where tree-sitter does not (see the module doc)."""
    ends = Ends()
    cuts: dict[tuple[int, int], int] = {}  # as/satisfies (start, end) -> where TypeScript ends its type
    for line_start in _LINE_STARTS_WITH_BRACKET.finditer(raw):
        at = line_start.end() - 1
        token = root.descendant_for_byte_range(at, at + 1)
        before = _previous_leaf(token) if token is not None and token.start_byte == at else None
        if before is None or not _ends_type(raw, before):
            continue
        owner = token.parent
        while owner is not None and owner.type not in _TYPE_OWNERS:
            owner = owner.parent
        if owner is None and _type_in_error(before):  # `T extends U ? A : B` + `${<T,>() => 1}`: no tree
            ends.breaks.append(line_start.start())
        if owner is None or before.end_byte <= _type_start(owner):
            continue
        ambient = owner
        while ambient is not None and ambient.type not in _STATEMENT_LISTS:
            if ambient.type == "ambient_declaration":  # `declare let x: T`: erased as a whole
                owner = ambient
            ambient = ambient.parent
        if owner.type in _ASSERTIONS:
            key = (owner.start_byte, owner.end_byte)
            cuts[key] = min(cuts.get(key, owner.end_byte), before.end_byte)
        elif owner.type == "type_annotation":
            ends.blanks.append((owner.start_byte, before.end_byte))
        else:
            parent = owner.parent
            start = parent.start_byte if parent is not None and parent.type == "export_statement" else owner.start_byte
            ends.erased[start] = min(ends.erased.get(start, owner.end_byte), before.end_byte)
    for node in captures:
        if node.type in _ASSERTIONS and node.child_count >= 3:
            _assertion_end(raw, node, cuts.get((node.start_byte, node.end_byte)), ends)
        elif node.type == "type_arguments" and node.parent is not None and node.parent.type == "instantiation_expression":
            gap = _TRIVIA.match(raw, node.end_byte)
            if gap is not None and raw[gap.end() : gap.end() + 1] == b"`":  # tag<T>`…`, which tree-sitter cannot parse
                ends.blanks.append((node.start_byte, node.end_byte))
        elif node.type == "binary_expression":
            less = node.child_by_field_name("operator")
            end = _type_arguments_end(raw, less.start_byte) if less is not None else None
            if less is not None and end is not None:
                ends.blanks.append((less.start_byte, end))
    return ends


def _type_in_error(leaf: Node) -> bool:
    """Is ``leaf`` the end of a type inside a stretch tree-sitter could not parse?"""
    typed = False
    node = leaf.parent
    while node is not None and node.type != "ERROR":
        typed = typed or node.type.endswith("_type") or node.type == "type_identifier"
        node = node.parent
    return typed and node is not None


def _type_start(owner: Node) -> int:
    """Where the type part of an assertion, annotation or type alias starts."""
    if owner.type == "type_annotation":
        return owner.start_byte
    keyword = "=" if owner.type == "type_alias_declaration" else owner.children[1].type
    return next((c.end_byte for c in owner.children if c.type == keyword), owner.end_byte)


def _assertion_end(raw: bytes, node: Node, cut: int | None, ends: Ends) -> None:
    """``x as T`` followed by a line break and ``(``, ``[`` or a template ends its statement."""
    end = cut or node.end_byte
    gap = _TRIVIA.match(raw, end)
    assert gap is not None
    if cut is not None or (raw[gap.end() : gap.end() + 1] in (b"(", b"[", b"`") and b"\n" in gap.group()):
        expr_end = node.children[0].end_byte
        ends.blanks.append((expr_end, end))
        ends.puts.append((expr_end, 0, ";"))


def _type_arguments_end(raw: bytes, less: int) -> int | None:
    """Where ``<…>`` at ``less`` ends if TypeScript reads it as type arguments, not as ``<``.

    tree-sitter-typescript sometimes prefers comparisons for ``f<T>(x) + a + b``; TypeScript
    takes ``<…>`` as type arguments when they parse as types and ``(``, a template, or a line
    break (not followed by ``+ - < >``) comes next (``canFollowTypeArgumentsInExpression``).
    """
    depth = 0
    for match in _ANGLE_SCAN.finditer(raw, less, min(len(raw), less + 4096)):
        token = match.group()
        if token in (b"<", b"(", b"[", b"{"):
            depth += 1
        elif token in (b">", b")", b"]", b"}"):
            depth -= 1
            if depth == 0 and token == b">":
                break
            if depth <= 0:
                return None
        elif token == b";" and depth == 1:
            return None
    else:
        return None
    end = match.end()
    gap = _TRIVIA.match(raw, end)
    assert gap is not None
    after = raw[gap.end() : gap.end() + 1]
    if after in (b"(", b"`") or (b"\n" in gap.group() and after not in (b"+", b"-", b"<", b">")):
        return end if _are_type_arguments(raw[less:end]) else None
    return None


@lru_cache(maxsize=256)
def _are_type_arguments(text: bytes) -> bool:
    if _NOT_IN_TYPES.search(text):  # tree-sitter reads `b && c` as a type (`b & & c`), TypeScript does not
        return False
    root = Parser(language()).parse(b"type _ = _" + text).root_node
    value = root.children[0].child_by_field_name("value") if root.child_count == 1 else None
    return not root.has_error and value is not None and value.type == "generic_type" and value.end_byte == len(text) + 10


def _previous_leaf(node: Node) -> Node | None:
    """The token before ``node`` (comments skipped)."""
    while True:
        while node.prev_sibling is None:
            parent = node.parent
            if parent is None:
                return None
            node = parent
        node = node.prev_sibling
        while node.child_count:
            node = node.children[-1]
        if node.type != "comment":
            return node


def _ends_type(raw: bytes, token: Node) -> bool:
    """Can a type end with ``token`` (a name, literal or closing bracket, not an operator)?"""
    text = raw[token.start_byte : token.end_byte]
    if not text:
        return False
    word = _WORD.search(text)
    if word is not None:
        return word.group() not in _TYPE_PREFIXES
    return text[-1:] in b")]}'\"`" or (text == b">")


def changes_grouping(raw: bytes, base: str, at: int) -> bool:
    """Would ``a <base> b as T <next operator at `at`> c`` group differently without ``as T``?

    As ts-blank-space's ``assertionChainWouldChangeBinaryGrouping``: ``1 + 1 as T / 2`` is
    ``(1 + 1) / 2`` in TypeScript but ``1 + 1 / 2`` once erased.
    """
    match = _NEXT_OPERATOR.match(raw, at)
    following = match.group(1).decode() if match is not None else ""
    mine, theirs = _PRECEDENCE.get(base), _PRECEDENCE.get(following)
    if mine is None or theirs is None:
        return False
    if "??" in (base, following) and base != following and {base, following} & {"&&", "||"}:
        return True  # `a ?? b && c` is a SyntaxError in JavaScript
    return theirs > mine or (theirs == mine and "**" in (base, following))


def has_values(namespace: Node) -> bool:
    """Whether a ``namespace`` declares anything that exists at runtime (as TypeScript decides)."""
    body = namespace.child_by_field_name("body")
    for stmt in body.named_children if body is not None else ():
        if stmt.type == "export_statement":
            decl = stmt.child_by_field_name("declaration")
            if decl is None or decl.type == "import_alias":
                return True
            stmt = decl
        if stmt.type in ("comment", "interface_declaration", "type_alias_declaration", "import_alias"):
            continue
        if stmt.type != "internal_module" or has_values(stmt):
            return True
    return False


def end_with_comma(kids: Sequence[Node], i: int) -> int:
    """End of ``kids[i]``, or of the comma after it (comments between are skipped)."""
    for kid in kids[i + 1 :]:
        if kid.type != "comment":
            return kid.end_byte if kid.type == "," else kids[i].end_byte
    return kids[i].end_byte


def render(source: str, raw: bytes, blanks: list[tuple[int, int]], puts: Puts) -> str:
    """``source`` with the byte ranges ``blanks`` made spaces (line breaks kept) and ``puts``."""
    merged: list[list[int]] = []
    for start, end in sorted(blanks):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    char = _char_offsets(raw, len(source), [b for r in merged for b in r] + [p[0] for p in puts])
    put_at = sorted((char(b) + delta, ch) for b, delta, ch in puts)
    put_starts = [p for p, _ in put_at]
    out: list[str] = []
    pos = 0
    for start_b, end_b in merged:
        start, end = char(start_b), char(end_b)
        out.append(source[pos:start])
        segment = source[start:end]
        segment = _BLANK.sub(" ", segment) if _LINE_BREAK.search(segment) else " " * len(segment)
        i = bisect_left(put_starts, start)
        if i < len(put_at) and put_starts[i] < end:
            chars = list(segment)
            while i < len(put_at) and put_starts[i] < end:
                if chars[put_starts[i] - start] == " ":  # never over a line break
                    chars[put_starts[i] - start] = put_at[i][1]
                i += 1
            segment = "".join(chars)
        out.append(segment)
        pos = end
    out.append(source[pos:])
    return "".join(out)


def _char_offsets(raw: bytes, n_chars: int, offsets: list[int]) -> Callable[[int], int]:
    """Byte offset -> code-point offset, for the given byte offsets (all on character starts)."""
    if len(raw) == n_chars:
        return int
    table: dict[int, int] = {}
    pos = chars = 0
    for b in sorted(set(offsets)):
        chars += len(raw[pos:b].decode("utf-8"))
        table[b] = chars
        pos = b
    return table.__getitem__
