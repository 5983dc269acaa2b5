"""A quick yes for tool arguments that a flat input schema plainly accepts.

Most tools take a flat object of typed fields (``{message: string}``), and most calls pass what
they ask. Checking those with jsonschema on every call costs ~8 µs alone and ~25 µs inside a
loop of tool calls, a measurable share of a call's own overhead. For such a schema this check
answers "valid" after a few ``isinstance`` tests; it never says "invalid": whenever it is not
sure (a keyword it does not know, an integer given as ``2.0``, a missing or unknown key), the
full jsonschema validation runs and words the error. So it can only be too careful, never too
lenient.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: keywords that say nothing about which values are valid
INERT = frozenset({"description", "title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema"})

#: a JSON Schema type -> is this Python value plainly of it (JSON has no bool among numbers)
TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}

_ANY: Callable[[Any], bool] = lambda v: True  # noqa: E731 - a property with no type


def plain_check(schema: Any) -> Callable[[dict[str, Any]], bool] | None:
    """A function telling whether arguments are plainly valid for ``schema``; None if the schema is not flat."""
    if not isinstance(schema, dict) or set(schema) - {"type", "properties", "required", "additionalProperties"} - INERT:
        return None
    if schema.get("type", "object") != "object" or schema.get("additionalProperties") not in (None, False):
        return None
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(props, dict) or not isinstance(required, list):
        return None
    kinds: dict[str, Callable[[Any], bool]] = {}
    for name, sub in props.items():
        if not isinstance(sub, dict) or set(sub) - {"type"} - INERT:
            return None
        kind = sub.get("type")
        if kind is not None and (not isinstance(kind, str) or kind not in TYPES):
            return None  # a list of types, or none JSON Schema knows
        kinds[name] = TYPES[kind] if kind is not None else _ANY
    # unknown keys are refused by the catalog when the schema lists properties (typos); else allowed
    closed = bool(kinds)

    def check(args: dict[str, Any]) -> bool:
        for name in required:
            if name not in args:
                return False
        for name, value in args.items():
            kind = kinds.get(name)
            if kind is None:
                if closed:
                    return False
            elif not kind(value):
                return False
        return True

    return check
