"""Papermill parameters for mcp2repl notebooks: ``papermill in.ipynb out.ipynb -p limit 5``.

Papermill has no JavaScript translator and no entry point for translators, but it imports every
``papermill.engine`` entry point when it starts. This module is one: importing it registers the
translator for the ``mcp2repl`` kernel and the ``javascript`` language, and the engine it
exposes is papermill's own nbclient engine, unchanged.

A parameter must arrive as the value it was: a name that cannot be a JavaScript variable is refused
before anything runs (as a click usage error, so papermill's command line says ``Error: …`` and
exits 2 instead of running a notebook whose first injected line is a SyntaxError), and integers
JavaScript numbers cannot hold exactly become BigInt literals.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import click
import regex
from papermill.engines import NBClientEngine
from papermill.exceptions import PapermillException
from papermill.models import Parameter
from papermill.translators import Translator, papermill_translators

#: Words a JavaScript variable can never be named (ECMA-262 ReservedWord, with the literals).
RESERVED = frozenset(
    "await break case catch class const continue debugger default delete do else enum export extends false finally for "
    "function if import in instanceof new null return super switch this throw true try typeof var void while with yield".split()
)
#: Reserved in strict-mode code (modules, classes, Deno's kernel): refused so that the injected
#: cell is valid JavaScript wherever the notebook runs, not only in mcp2repl's sloppy cells.
STRICT_RESERVED = frozenset("implements interface let package private protected public static".split())
#: Names that are not reserved but cannot hold a parameter: the value would be silently lost.
UNBINDABLE = {
    "arguments": "cannot be declared in strict-mode JavaScript, and a cell would not see it",
    "eval": "cannot be declared in strict-mode JavaScript",
    "undefined": "is a read-only global in JavaScript, so the value would be lost",
    "NaN": "is a read-only global in JavaScript, so the value would be lost",
    "Infinity": "is a read-only global in JavaScript, so the value would be lost",
    "__proto__": "is the global object's prototype, not a variable, so the value would be lost",
}
#: IdentifierName (ECMA-262 12.7): ID_Start, $ or _, then ID_Continue, $, ZWNJ or ZWJ.
_IDENTIFIER = regex.compile(r"[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*")
#: Beyond ±(2**53 - 1) a JavaScript number no longer holds every integer: 2**53 + 1 would become 2**53.
MAX_SAFE_INTEGER = 2**53 - 1
#: Characters JSON leaves raw that a JavaScript source should not hold raw: U+2028/2029 end a line
#: for V8's positions (and for engines before ES2019, a string literal), lone surrogates cannot be
#: written as UTF-8 at all.
_UNSAFE_IN_SOURCE = re.compile("[\u2028\u2029\ud800-\udfff]")


class ParameterError(click.UsageError, PapermillException):
    """A parameter that cannot become a JavaScript variable.

    A click usage error because papermill's command line calls the translator inside its click
    command: click then prints papermill's usage and ``Error: <message>`` and exits 2. Through the
    Python API it is a PapermillException with the same message.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, click.get_current_context(silent=True))


def refusal(name: object) -> str | None:
    """Why ``name`` cannot be a parameter of a JavaScript notebook, or None when it can."""
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        return f"{name!r} is not a JavaScript identifier (letters, digits, _ and $, not starting with a digit)"
    if name in RESERVED:
        return f"{name!r} is a reserved word in JavaScript"
    if name in STRICT_RESERVED:
        return f"{name!r} is a reserved word in strict-mode JavaScript"
    if name in UNBINDABLE:
        return f"{name!r} {UNBINDABLE[name]}"
    return None


def _rename(name: object) -> str | None:
    """A name that would be accepted, by the kernel's rule for tool names (invalid characters become
    ``_``, a leading digit gets ``_``, a refused word a trailing ``_``); None when nothing is left."""
    text = re.sub(r"[^\w$\u200c\u200d]", "_", str(name))
    if not text:
        return None
    if text[0].isdigit():
        text = "_" + text
    while refusal(text) and _IDENTIFIER.fullmatch(text):
        text += "_"
    return text if refusal(text) is None else None


class JavaScriptTranslator(Translator):
    """Parameters as top-level ``const`` declarations, which mcp2repl lets a later cell redeclare."""

    @classmethod
    def translate_escaped_str(cls, str_val: Any) -> str:
        """A string literal (also the fallback for values JSON has no type for: their ``str()``)."""
        text = json.dumps(str_val if isinstance(str_val, str) else str(str_val), ensure_ascii=False)
        return _UNSAFE_IN_SOURCE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

    @classmethod
    def translate(cls, val: Any) -> str:
        if isinstance(val, tuple):  # a Python API caller's sequence: an array, like a list
            return cls.translate_list(list(val))
        return str(super().translate(val))

    @classmethod
    def translate_none(cls, val: None) -> str:
        return "null"

    @classmethod
    def translate_bool(cls, val: bool) -> str:
        return "true" if val else "false"

    @classmethod
    def translate_int(cls, val: int) -> str:
        """A number when JavaScript holds it exactly, else a BigInt (``12345678901234567890n``).

        A BigInt does not mix with numbers in arithmetic (``1n + 1`` throws), which is the point: a
        silently rounded id is worse than an error that says so.
        """
        return str(val) if abs(val) <= MAX_SAFE_INTEGER else f"{val}n"

    @classmethod
    def translate_float(cls, val: float) -> str:
        if math.isnan(val):
            return "NaN"
        if math.isinf(val):
            return "Infinity" if val > 0 else "-Infinity"
        return repr(val)  # shortest round-trip digits, which JavaScript reads back to the same double

    @classmethod
    def translate_dict(cls, val: dict[Any, Any]) -> str:
        """An object literal. The key ``__proto__`` is written computed (``["__proto__"]: v``): as a
        plain key it would set the object's prototype instead of making a property."""
        items = []
        for key, value in val.items():
            literal = cls.translate_escaped_str(str(key))
            items.append(f"{'[' + literal + ']' if str(key) == '__proto__' else literal}: {cls.translate(value)}")
        return "{" + ", ".join(items) + "}"

    @classmethod
    def translate_list(cls, val: list[Any]) -> str:
        return "[" + ", ".join(cls.translate(v) for v in val) + "]"

    @classmethod
    def comment(cls, cmt_str: str) -> str:
        return f"// {cmt_str}".strip()

    @classmethod
    def assign(cls, name: str, str_val: str) -> str:
        """``const name = value;``, or a :class:`ParameterError` naming the parameter and the reason."""
        why = refusal(name)
        if why is not None:
            suggestion = _rename(name)
            hint = f"; rename it, e.g. {suggestion}" if suggestion else ""
            raise ParameterError(f"parameter {name!r} cannot be injected into a JavaScript notebook: {why}{hint}")
        return f"const {name} = {str_val};"

    @classmethod
    def inspect(cls, parameters_cell: Any) -> list[Parameter]:
        """The parameters a notebook declares: top-level ``const/let/var name = value`` lines."""
        found = []
        for line in parameters_cell.source.splitlines():
            m = _DECLARATION.match(line)
            if m:
                value = m.group("value").rstrip(";").strip()
                comment = (m.group("help") or "").strip()
                found.append(Parameter(name=m.group("name"), inferred_type_name=_js_type(value), default=value, help=comment))
        return found


_DECLARATION = re.compile(r"^\s*(?:const|let|var)\s+(?P<name>[A-Za-z_$][\w$]*)\s*=\s*(?P<value>.*?)\s*(?://\s*(?P<help>.*))?$")


def _js_type(value: str) -> str:
    if value.startswith(("'", '"', "`")):
        return "string"
    if value in ("true", "false"):
        return "boolean"
    if re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?|NaN|-?Infinity", value):
        return "number"
    if value.startswith("["):
        return "array"
    if value.startswith("{"):
        return "object"
    return "None" if value == "null" else "unknown"


papermill_translators.register("mcp2repl", JavaScriptTranslator)
papermill_translators.register("javascript", JavaScriptTranslator)

#: the entry point's object: papermill's default engine, so selecting it changes nothing
Engine = NBClientEngine
