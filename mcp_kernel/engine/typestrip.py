"""Turn a TypeScript cell into JavaScript by blanking out its types.

V8 runs JavaScript only, and a notebook needs every error position to be the user's own, so a
cell is not compiled but *erased*, as Node's ``--experimental-strip-types`` and npm
``ts-blank-space`` do: each character of type-only syntax becomes a space (line breaks stay),
so the output has the same length in code points, every line break where it was, and every
remaining token at its original line and column. rewrite.py and V8 then see JavaScript the
user could have typed, and no position needs mapping back.

The parse is tree-sitter-typescript's and the walk copies ts-blank-space's decisions (the tests
compare outputs byte for byte), including the few places where it writes ``;`` or moves a
parenthesis instead of a space so that automatic semicolon insertion keeps the TypeScript
meaning. A query first marks where TypeScript-only syntax starts; the walk only enters subtrees
with a mark, so plain JavaScript costs a parse and a query and comes back unchanged.
Where tree-sitter reads a line break differently from TypeScript (``x as T`` followed by a line
starting with ``(``), or prefers ``<`` comparisons to type arguments (``f<T>(x) + a + b``),
typestrip_support.py fixes the text up and the cell is parsed a second time.

Syntax that would need generated code (``enum``, value ``namespace``, parameter properties,
decorators, ``import x = require()``, ``export =``, ``<T>x``) raises :class:`TypeScriptError`
naming the plain-JavaScript alternative. Text that JavaScript and TypeScript read differently is
read as TypeScript does: ``f < T > (x)`` is a call with a type argument, ```a < b > `x` ``` a
tagged template. A cell that tree-sitter-typescript cannot parse but that is valid JavaScript
(``using``, ``export { type }``) comes back unchanged; other unparsable regions are left as they
are, for V8 to report.
"""

from __future__ import annotations

import re
from functools import lru_cache

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser, Query

from mcp_kernel.engine import treewalk
from mcp_kernel.engine.typestrip_errors import TypeScriptError
from mcp_kernel.engine.typestrip_support import language, render, statement_ends
from mcp_kernel.engine.typestrip_walk import Walk, run

__all__ = ["TypeScriptError", "strip_types"]

# Where TypeScript-only syntax can be: the walk enters a node only if one of these starts in it.
_MARKS = """
[(type_annotation) (opting_type_annotation) (omitting_type_annotation) (adding_type_annotation)
 (asserts_annotation) (type_predicate_annotation) (type_arguments) (type_parameters)
 (as_expression) (satisfies_expression) (non_null_expression) (type_assertion)
 (interface_declaration) (type_alias_declaration) (ambient_declaration) (function_signature)
 (abstract_class_declaration) (abstract_method_signature) (method_signature) (index_signature)
 (accessibility_modifier) (override_modifier) (implements_clause) (optional_parameter)
 (enum_declaration) (internal_module) (module) (import_alias) (import_require_clause) (decorator)] @ts
(public_field_definition ["declare" "abstract" "readonly" "?" "!"] @ts)
(variable_declarator "!" @ts)
(method_definition "?" @ts)
(required_parameter "readonly" @ts)
(required_parameter pattern: (this) @ts)
(import_statement "type" @ts)
(export_statement "type" @ts)
(import_specifier "type" @ts)
(export_specifier "type" @ts)
(export_statement "=" @ts)
(binary_expression operator: "<") @ts
"""
#: A token each of the patterns above contains (treewalk.captures skips subtrees without one);
#: ``:`` (type annotations) counts outside data literals only.
_MARK_TOKENS = re.compile(
    rb"[<!?@(]|=>|\b(?:as|satisfies|interface|type|declare|abstract|enum|namespace|module|global|implements|public|private"
    rb"|protected|readonly|override|import|export|class|function|this|asserts|is|infer|keyof)\b"
)
_COLON = re.compile(rb":")


@lru_cache(maxsize=1)
def _marks_query() -> Query:
    return Query(language(), _MARKS)


@lru_cache(maxsize=1)
def _javascript() -> Language:
    return Language(tree_sitter_javascript.language())


def strip_types(source: str) -> str:
    """Return ``source`` with its TypeScript-only syntax replaced by spaces.

    The result has the same length and the same line breaks; plain JavaScript comes back
    unchanged. Raises :class:`TypeScriptError` for syntax that erasing cannot express.
    """
    raw = source.encode("utf-8")
    root = treewalk.parse(Parser(language()), raw).root_node
    captures = _marks(root, raw)
    if not captures:
        return source
    ends = statement_ends(raw, root, captures)
    text = raw
    if ends.blanks or ends.erased or ends.breaks:  # parse again, with those statements ended as TypeScript ends them
        text = ends.patch(raw)
        root = treewalk.parse(Parser(language()), text).root_node
        captures = _marks(root, text)
        ends.puts += ends.break_puts(root)
    if root.has_error and not treewalk.parse(Parser(_javascript()), raw).root_node.has_error:
        return source  # JavaScript that this TypeScript grammar cannot read (e.g. `using`)
    walk = Walk(text, raw, sorted([n.start_byte for n in captures] + list(ends.erased)), ends.erased)
    run(walk.statements(root.named_children, function_body=True))
    return render(source, raw, ends.blanks + walk.blanks, ends.puts + walk.puts)


def _marks(root: Node, raw: bytes) -> list[Node]:
    if _MARK_TOKENS.search(raw) is None and _COLON.search(raw) is None:
        return []  # every pattern needs one of those tokens: no query to compile, nor to run (``1+1``)
    return treewalk.captures(_marks_query(), root, raw, _MARK_TOKENS, _COLON).get("ts", [])
