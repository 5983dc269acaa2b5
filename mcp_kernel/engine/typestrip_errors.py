"""The TypeScript that type stripping refuses, and what to write in plain JavaScript instead.

Erasing types works because TypeScript's types never change what a program does. A few older
TypeScript features do generate code (or, for decorators, need syntax V8 does not run); for
those :func:`refuse` raises :class:`TypeScriptError` with the JavaScript to write instead.
"""

from __future__ import annotations

from typing import NoReturn

from tree_sitter import Node

#: construct -> (why it cannot be erased, what to write instead)
_ADVICE: dict[str, tuple[str, str]] = {
    "enum": (
        "an enum creates an object at runtime",
        "a frozen object: `const Color = Object.freeze({ Red: 0, Green: 1 })` (and `type Color = number` if you want the type)",
    ),
    "const enum": (
        "a const enum is inlined by the TypeScript compiler",
        "a frozen object: `const Color = Object.freeze({ Red: 0, Green: 1 })`",
    ),
    "namespace": (
        "a namespace with values creates an object at runtime (only type-only and `declare` namespaces can be erased)",
        "a plain object: `const N = { x: 1, f() {} }`",
    ),
    "module": (
        "`module Name { … }` is an old spelling of a namespace, which creates an object at runtime",
        "a plain object: `const Name = { … }` (or `declare namespace Name { … }` for types only)",
    ),
    "parameter property": (
        "a constructor parameter with `public`/`private`/`protected`/`readonly`/`override` also assigns a field",
        "a field and an assignment: `x: number; constructor(x: number) { this.x = x }`",
    ),
    "decorator": (
        "V8 does not run decorators (neither TypeScript's experimental ones nor the standard proposal)",
        "a plain call: `const C = dec(class { … })`, or `C.prototype.m = dec(C.prototype.m)` for a method",
    ),
    "import = require": (
        "`import x = require(…)` is CommonJS interop that needs generated code",
        "`const x = require(…)`, or an ES `import x from …`",
    ),
    "import alias": (
        "`import A = N.B` creates a variable at runtime",
        "`const A = N.B`",
    ),
    "export =": (
        "`export = x` is CommonJS interop that needs generated code",
        "`export default x`",
    ),
    "type assertion": (
        "the old `<T>expr` assertion syntax cannot be erased in place",
        "`expr as T`",
    ),
    "as": (
        "erasing `as T` here would change how the surrounding operators group",
        "parentheses around the assertion: `(a + b as T) / 2` or `(a + b) as T`",
    ),
    "satisfies": (
        "erasing `satisfies T` here would change how the surrounding operators group",
        "parentheses around the expression: `(a + b satisfies T) / 2`",
    ),
}


class TypeScriptError(Exception):
    """TypeScript syntax that has runtime meaning, so erasing its types cannot run it.

    ``line`` and ``column`` are 1-based, the column counted in code points; ``construct`` names
    the syntax (``"enum"``, ``"decorator"``, …); ``message`` says why and what to write instead.
    """

    def __init__(self, construct: str, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.construct = construct
        self.line = line
        self.column = column
        self.message = message


def refuse(raw: bytes, node: Node, construct: str) -> NoReturn:
    """Raise :class:`TypeScriptError` for ``node`` (in the UTF-8 source ``raw``)."""
    row, byte_col = node.start_point
    line_start = node.start_byte - byte_col
    column = len(raw[line_start : node.start_byte].decode("utf-8", "replace")) + 1
    why, instead = _ADVICE[construct]
    message = (
        f"TypeScript `{construct}` (line {row + 1}, column {column}) cannot run by erasing types: {why}. In JavaScript, use {instead}."
    )
    raise TypeScriptError(construct, row + 1, column, message)
