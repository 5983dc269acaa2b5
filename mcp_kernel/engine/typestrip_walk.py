"""The walk of type stripping (typestrip.py): ts-blank-space's visitor over a tree-sitter tree.

It is kept apart from the entry point because it is the one part that mirrors another project's
code decision by decision (the tests compare outputs byte for byte); everything that decides
*whether* to walk, and what to do with the result, stays in typestrip.py.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Generator, Sequence
from typing import Any

from tree_sitter import Node

from mcp_kernel.engine.treewalk import checkpoint
from mcp_kernel.engine.typestrip_errors import refuse
from mcp_kernel.engine.typestrip_support import changes_grouping, end_with_comma, has_values

__all__ = ["Walk", "run"]

#: A step of the walk that visits nodes: a generator that yields the steps it calls (see :func:`run`)
#: and returns what the method returns, so that no depth of the tree deepens Python's stack.
Steps = Generator["Steps", Any, Any]

# Erased wherever the walk meets them.
_TYPE_ONLY = frozenset(
    "type_annotation opting_type_annotation omitting_type_annotation adding_type_annotation asserts_annotation"
    " type_predicate_annotation type_arguments type_parameters implements_clause".split()
)
_REMOVED_MODIFIERS = frozenset(("accessibility_modifier", "override_modifier", "readonly", "abstract", "declare"))
_MODIFIERS = _REMOVED_MODIFIERS | {"static", "async", "accessor", "decorator"}
_PARAMETER_PROPERTY = frozenset(("accessibility_modifier", "override_modifier", "readonly"))
# Class members that end with their own `;` in TypeScript's tree (tree-sitter makes it a sibling).
_OWN_SEMICOLON = frozenset(("public_field_definition", "method_signature", "abstract_method_signature", "index_signature"))
_SKIPPED = frozenset(("comment", "hash_bang_line"))
_ASSERTIONS = ("as_expression", "satisfies_expression")
_FUNCTIONS = ("function_declaration", "function_expression", "generator_function_declaration", "generator_function", "arrow_function")


class Walk:
    """ts-blank-space's visitor over a tree-sitter tree: collects byte ranges to blank and the
    few characters (``;``, ``(``, ``)``) written instead of a blank.

    ``semi`` is ts-blank-space's ``semicolonNeeded``: whether the JavaScript visited last ends
    without ``;``, so that a statement erased next must start with one. ``stmt_end`` is where the
    innermost statement or class member ends (for ``x as T`` at the end of a statement).
    """

    def __init__(self, raw: bytes, original: bytes, marks: list[int], erased: dict[int, int]) -> None:
        self.raw = raw  # the source as parsed (see statement_ends); same byte offsets as original
        self.original = original
        self.marks = marks
        self.erased = erased  # statements the first parse found type-only (now a lone `;`)
        self.blanks: list[tuple[int, int]] = []
        self.puts: list[tuple[int, int, str]] = []  # (byte offset, code points after it, char)
        self.semi = False
        self.stmt_end = -1

    def blank(self, start: int, end: int, first: str = "") -> None:
        self.blanks.append((start, end))
        if first:
            self.puts.append((start, 0, first))

    def erase(self, node: Node, end: int = 0) -> bool:
        """Blank a whole type-only statement, starting it with ``;`` if ASI needs one."""
        self.blank(node.start_byte, end or node.end_byte, ";" if self.semi else "")
        return False

    def visit(self, node: Node) -> Steps:
        """Visit one node; False when it was erased as a whole."""
        start, end, marks = node.start_byte, node.end_byte, self.marks
        i = bisect_left(marks, start)
        if i < len(marks) and marks[i] < end and node.type != "ERROR":
            handler = _HANDLERS.get(node.type)
            if handler is None:
                yield self.children(node.named_children)
            else:
                done = handler(self, node)
                if not isinstance(done, bool):
                    done = yield done
                if not done:
                    return False
        if end > start:
            self.semi = self.raw[end - 1] != 0x3B
        return True

    def children(self, nodes: Sequence[Node]) -> Steps:
        """Visit the named nodes among ``nodes``, erasing type-only ones."""
        marks = self.marks
        for child in nodes:
            kind = child.type
            if kind in _TYPE_ONLY:
                self.blank(child.start_byte, child.end_byte)
            elif kind == "decorator":
                refuse(self.original, child, "decorator")
            elif kind not in _SKIPPED and child.is_named:
                start, end = child.start_byte, child.end_byte
                i = bisect_left(marks, start)
                if i < len(marks) and marks[i] < end:
                    yield self.visit(child)
                elif end > start:  # nothing to erase inside: what visit() would leave
                    self.semi = self.raw[end - 1] != 0x3B

    def statements(self, nodes: Sequence[Node], function_body: bool) -> Steps:
        saved_semi, saved_end = self.semi, self.stmt_end
        if function_body:
            self.semi = False  # a new function body starts a new list of statements
        for node in nodes:
            if node.is_named and node.type not in _SKIPPED:
                erased = self.erased.get(node.end_byte - 1) if node.type != "empty_statement" else None
                self.stmt_end = node.end_byte if erased is None else len(self.raw[: node.end_byte - 1].rstrip())
                if (yield self.visit(node)) and erased is not None:
                    self.semi = True  # as TypeScript sees it, it ended without `;` (see Ends)
                if erased is not None:
                    self.blank(node.end_byte - 1, erased, ";" if self.semi else "")
        self.stmt_end = saved_end
        if function_body:
            self.semi = saved_semi

    # --- declarations -------------------------------------------------------------------------

    def namespace(self, node: Node, statement: Node | None = None) -> bool:
        name = node.child_by_field_name("name")
        if (node.type == "internal_module" and not has_values(node)) or (name is not None and name.type == "string"):
            return self.erase(statement or node)
        refuse(self.original, node, "namespace" if node.type == "internal_module" else "module")

    def expression_statement(self, node: Node) -> Steps:
        inner = node.named_children[0] if node.named_child_count else None
        if inner is not None and inner.type in ("internal_module", "module"):  # tree-sitter's shape
            return self.namespace(inner, node)
        yield self.children(node.children)
        return True

    def empty_statement(self, node: Node) -> bool:
        if node.start_byte in self.erased:
            return self.erase(node, self.erased[node.start_byte])
        return True

    def import_statement(self, node: Node) -> bool:
        kids = node.children
        if any(k.type == "type" for k in kids):
            return self.erase(node)  # import type …
        for kid in kids:
            if kid.type == "import_require_clause":
                refuse(self.original, node, "import = require")
            if kid.type == "import_clause":
                for named in kid.named_children:
                    if named.type == "named_imports":
                        self.type_specifiers(named.children)
        return True

    def export_statement(self, node: Node) -> Steps:
        kids = node.children
        if any(k.type == "type" for k in kids):
            return self.erase(node)  # export type { … }
        if any(k.type == "=" for k in kids):
            refuse(self.original, node, "export =")
        decl = node.child_by_field_name("declaration")
        if decl is not None and decl.type in ("interface_declaration", "type_alias_declaration", "ambient_declaration"):
            return self.erase(node)
        if decl is not None and decl.type == "function_signature":
            self.blank(node.start_byte, node.end_byte)
            return False
        inner = decl.named_children[0] if decl is not None and decl.type == "expression_statement" else decl
        if inner is not None and inner.type in ("internal_module", "module"):
            return self.namespace(inner, node)
        if decl is not None:
            yield self.visit(decl)
        for kid in kids:
            if kid.type == "export_clause":
                self.type_specifiers(kid.children)
            elif kid.is_named and kid.type not in _SKIPPED and kid is not decl and kid.type != "string":
                yield self.visit(kid)
        return True

    def type_specifiers(self, kids: Sequence[Node]) -> None:
        """Blank ``type A,`` inside ``import { … }`` / ``export { … }``, with its comma."""
        for i, spec in enumerate(kids):
            if spec.type in ("import_specifier", "export_specifier") and spec.children[0].type == "type":
                self.blank(spec.start_byte, end_with_comma(kids, i))

    # --- classes ------------------------------------------------------------------------------

    def klass(self, node: Node) -> Steps:
        kids = node.children
        for i, kid in enumerate(kids):
            kind = kid.type
            if kind == "decorator":
                refuse(self.original, kid, "decorator")
            elif kind == "abstract" and b"\n" not in self.raw[kid.end_byte : kids[i + 1].start_byte]:
                self.blank(kid.start_byte, kid.end_byte)  # with a line break, TS reads `abstract` as a name
            elif kind == "type_parameters":
                self.blank(kid.start_byte, kid.end_byte)
            elif kind == "class_heritage":
                yield self.children(kid.named_children)
            elif kind == "class_body":
                yield self.class_body(kid.children)
        return True

    def class_body(self, kids: list[Node]) -> Steps:
        saved_end = self.stmt_end
        skip_to = 0
        for i, member in enumerate(kids):
            kind = member.type
            if i < skip_to or kind in _SKIPPED or kind in ("{", "}"):
                continue
            if kind == ";":
                self.semi = False
                continue
            end, j = member.end_byte, i + 1
            while j < len(kids) and kids[j].type == "comment":
                j += 1
            if kind in _OWN_SEMICOLON and j < len(kids) and kids[j].type == ";":
                end = kids[j].end_byte
            self.stmt_end = end
            if kind in ("method_signature", "abstract_method_signature", "index_signature"):
                self.blank(member.start_byte, end)  # overloads and signatures: no `;` (as ts-blank-space)
            elif kind == "decorator":
                refuse(self.original, member, "decorator")
            elif kind == "public_field_definition" and any(k.type in ("declare", "abstract") for k in member.children):
                self.erase(member, end)
            else:
                yield self.visit(member)
                continue
            skip_to = j + 1 if end != member.end_byte else 0
        self.stmt_end = saved_end

    def modifiers(self, kids: Sequence[Node], name: Node | None) -> None:
        """Blank ``public``/``readonly``/…; before a computed name the first one becomes ``;``."""
        first = True
        for kid in kids:
            if name is not None and kid.start_byte >= name.start_byte:
                break
            if kid.type == "decorator":
                refuse(self.original, kid, "decorator")
            if kid.type in _REMOVED_MODIFIERS:
                computed = first and name is not None and name.type == "computed_property_name"
                self.blank(kid.start_byte, kid.end_byte, ";" if computed else "")
            first = first and kid.type not in _MODIFIERS

    def field(self, node: Node) -> Steps:
        kids = node.children
        self.modifiers(kids, node.child_by_field_name("name"))
        for kid in kids:
            if kid.type in ("!", "?", "type_annotation"):
                self.blank(kid.start_byte, kid.end_byte)
            elif kid.is_named and kid.type not in _SKIPPED and kid.type not in _MODIFIERS and kid.type not in _REMOVED_MODIFIERS:
                yield self.visit(kid)
        return True

    # --- functions ----------------------------------------------------------------------------

    def type_assertion(self, node: Node) -> Steps:
        expr = node.children[-1]
        if expr.type == "arrow_function" and expr.child_by_field_name("type_parameters") is None:
            return (yield self.function(expr, node.children[0]))  # `<T>(x: T) => x` is a generic arrow
        refuse(self.original, node, "type assertion")

    def function(self, node: Node, generics: Node | None = None) -> Steps:
        name = node.child_by_field_name("name")
        params = node.child_by_field_name("parameters")
        if node.type == "method_definition":
            self.modifiers(node.children, name)
            for kid in node.children:
                if kid.type == "?":
                    self.blank(kid.start_byte, kid.end_byte)
        if name is not None:
            yield self.visit(name)
        generics = generics or node.child_by_field_name("type_parameters")
        if generics is not None and params is not None:
            if b"\n" in self.raw[generics.start_byte + 1 : params.start_byte + 1]:
                # `<` … `>(` across lines: the `(` moves up to where `<` was, so that
                # `return <T>\n(x) => x` and `async <T>\n(x) => x` keep their meaning
                self.blank(generics.start_byte, generics.end_byte, "(")
                self.blank(params.start_byte, params.start_byte + 1)
            else:
                self.blank(generics.start_byte, generics.end_byte)
        if params is not None:
            yield self.parameters(params.children)
        else:
            yield self.children(node.children_by_field_name("parameter"))
        returns = node.child_by_field_name("return_type")
        if returns is not None and params is not None:
            tokens = [k for k in params.children if k.type != "comment"]
            last_end = tokens[-2].end_byte if len(tokens) > 1 else params.end_byte  # before `)`
            if node.type == "arrow_function" and b"\n" in self.raw[last_end : returns.end_byte]:
                # a line break between `)` and `=>` is a syntax error: `)` moves down instead
                self.blank(params.end_byte - 1, returns.end_byte)
                self.puts.append((returns.end_byte, -1, ")"))
            else:
                self.blank(returns.start_byte, returns.end_byte)
        body = node.child_by_field_name("body")
        if body is not None and body.type == "statement_block":
            yield self.statements(body.named_children, function_body=True)
        elif body is not None:
            yield self.visit(body)
        return True

    def parameters(self, kids: list[Node]) -> Steps:
        first = True
        for i, param in enumerate(kids):
            if param.type not in ("required_parameter", "optional_parameter"):
                continue
            pattern = param.child_by_field_name("pattern")
            if first and pattern is not None and pattern.type == "this":
                self.blank(param.start_byte, end_with_comma(kids, i))
                continue
            first = False
            for kid in param.children:
                if kid.type in _PARAMETER_PROPERTY:
                    refuse(self.original, kid, "parameter property")
                if kid.type in ("?", "type_annotation"):
                    self.blank(kid.start_byte, kid.end_byte)
                elif kid.type == "decorator":
                    refuse(self.original, kid, "decorator")
                elif kid.is_named and kid.type not in _SKIPPED:
                    yield self.visit(kid)

    # --- expressions --------------------------------------------------------------------------

    def declarator(self, node: Node) -> Steps:
        for kid in node.children:
            if kid.type == "!":
                self.blank(kid.start_byte, kid.end_byte)
        yield self.children(node.children)
        return True

    def assertion(self, node: Node) -> Steps:
        expr = node.children[0]
        base = expr
        while base.type in _ASSERTIONS:
            base = base.children[0]
        operator = base.child_by_field_name("operator") if base.type == "binary_expression" else None
        if operator is not None and changes_grouping(self.raw, operator.type, node.end_byte):
            refuse(self.original, node, "as" if node.type == "as_expression" else "satisfies")
        yield self.visit(expr)
        end = node.end_byte
        semi = end == self.stmt_end and self.raw[end : end + 1] != b";"
        self.blank(expr.end_byte, end, ";" if semi else "")
        return True

    def non_null(self, node: Node) -> Steps:
        yield self.visit(node.children[0])
        self.blank(node.end_byte - 1, node.end_byte)
        return True

    def switch_case(self, node: Node) -> Steps:
        value = node.child_by_field_name("value")
        if value is not None:
            yield self.visit(value)
        yield self.statements(node.children_by_field_name("body"), function_body=False)
        return True


def run(steps: Steps) -> Any:
    """Run a step of the walk and every step it calls, on a stack of our own (a trampoline)."""
    stack = [steps]
    value: Any = None
    count = 0
    while stack:
        try:
            called = stack[-1].send(value)
        except StopIteration as done:
            stack.pop()
            value = done.value
            continue
        count += 1
        if not count % 1024:
            checkpoint()
        stack.append(called)
        value = None
    return value


def _block(walk: Walk, node: Node) -> Steps:
    yield walk.statements(node.named_children, function_body=False)
    return True


def _erase_exact(walk: Walk, node: Node) -> bool:
    walk.blank(node.start_byte, node.end_byte)
    return False


def _refuse(construct: str) -> Callable[[Walk, Node], bool]:
    def handler(walk: Walk, node: Node) -> bool:
        refuse(walk.original, node, construct)
        return True

    return handler


_HANDLERS: dict[str, Callable[[Walk, Node], Any]] = {
    **dict.fromkeys(("interface_declaration", "type_alias_declaration", "ambient_declaration"), Walk.erase),
    **dict.fromkeys(("internal_module", "module"), Walk.namespace),
    **dict.fromkeys(("class_declaration", "abstract_class_declaration", "class"), Walk.klass),
    **dict.fromkeys((*_FUNCTIONS, "method_definition"), Walk.function),
    **dict.fromkeys(_ASSERTIONS, Walk.assertion),
    **dict.fromkeys(("switch_case", "switch_default"), Walk.switch_case),
    "function_signature": _erase_exact,
    "enum_declaration": lambda w, n: refuse(w.original, n, "const enum" if n.children[0].type == "const" else "enum"),
    "import_alias": _refuse("import alias"),
    "decorator": _refuse("decorator"),
    "type_assertion": Walk.type_assertion,
    "import_statement": Walk.import_statement,
    "export_statement": Walk.export_statement,
    "public_field_definition": Walk.field,
    "variable_declarator": Walk.declarator,
    "non_null_expression": Walk.non_null,
    "expression_statement": Walk.expression_statement,
    "empty_statement": Walk.empty_statement,
    "statement_block": _block,
}
