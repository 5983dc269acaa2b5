"""Example arguments and calls for MCP tools: valid against the input schema, short and plausible.

Required fields only, each from ``const``, ``default``, ``examples``, ``enum``, ``format``,
``pattern`` (a sample built from Python's own regex parser) and numeric bounds, so the example
an agent copies from ``api.library`` runs as it is.
"""

from __future__ import annotations

import json
import math
import string
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from .schema import OBJECT_KEYS as _OBJECT_KEYS
from .schema import PATTERN_SECONDS
from .schema import bounds as _bounds
from .schema import count as _count
from .schema import get as _get
from .schema import key as _key
from .schema import merge as _merge
from .schema import number as _num
from .schema import resolve_ref as _resolve

_FORMATS = {
    **dict.fromkeys(("uri", "url", "iri", "uri-reference", "iri-reference"), "https://example.com"),
    **dict.fromkeys(("email", "idn-email"), "user@example.com"),
    **dict.fromkeys(("hostname", "idn-hostname"), "example.com"),
    **{"date": "2024-01-01", "date-time": "2024-01-01T00:00:00Z", "time": "12:00:00Z", "duration": "P1D"},
    **{"ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "uuid": "123e4567-e89b-12d3-a456-426614174000"},
}


def _pattern_sample(pattern: str) -> str | None:
    """A short string matching a regular expression, built from Python's regex parse tree."""
    try:
        from re import _parser  # type: ignore[attr-defined]

        tree = _parser.parse(pattern)
    except Exception:  # noqa: BLE001 - not a Python-compatible regex, or the private parser moved
        return None

    def in_class(c: str, items: list) -> bool:
        for op, arg in items:
            kind, cat = str(op), str(arg)
            if (kind == "LITERAL" and ord(c) == arg) or (kind == "RANGE" and arg[0] <= ord(c) <= arg[1]):
                return True
            if kind == "CATEGORY":
                test = c.isdigit() if "DIGIT" in cat else (c.isalnum() or c == "_") if "WORD" in cat else c.isspace()
                if test != ("NOT" in cat):
                    return True
        return False

    def gen(items: Any) -> str:
        out = []
        for op, arg in items:
            kind = str(op)
            if kind == "LITERAL":
                out.append(chr(arg))
            elif kind in ("ANY", "NOT_LITERAL"):
                out.append("b" if arg == ord("a") else "a")
            elif kind == "IN":
                negate = str(arg[0][0]) == "NEGATE" if arg else False
                out.append(next((c for c in "a0A_-" + string.printable if in_class(c, arg) != negate), "a"))
            elif kind.endswith("REPEAT"):
                out.append(gen(arg[2]) * arg[0])
            elif kind in ("SUBPATTERN", "BRANCH"):
                out.append(gen(arg[-1] if kind == "SUBPATTERN" else arg[1][0]))
        return "".join(out)

    sample = gen(tree)
    return sample if _search(pattern, sample) else None


def _search(pattern: str, text: str) -> bool | None:
    """Whether the regex matches somewhere in ``text``; None when it cannot be compiled or takes too long
    (schemas come from servers: a pattern like ``^(a+)+$`` must not stall discovery)."""
    import regex  # on the first pattern only: ~3 MB of an idle kernel's memory

    try:
        return regex.search(pattern, text, timeout=PATTERN_SECONDS) is not None
    except (regex.error, TypeError, TimeoutError):
        return None


def _string_example(s: Mapping, name: str, index: int) -> str:
    lo, hi, pattern = _count(s, "minLength", 0) or 0, _count(s, "maxLength"), s.get("pattern")
    lowered = name.lower()
    hint = "https://example.com" if "url" in lowered or "uri" in lowered else "user@example.com" if "email" in lowered else None
    candidates = [_FORMATS.get(str(s.get("format"))), hint, f"example{index + 1}" if index else "example"]
    pattern = pattern if isinstance(pattern, str) and _search(pattern, "") is not None else None
    if pattern is not None:
        candidates += ["a", "abc", "1", "a1", "example.com", _pattern_sample(pattern)]
    for candidate in filter(None, candidates):
        for text in (candidate, (candidate + "x" * lo)[: max(lo, len(candidate))][:hi]):  # as is, or padded / cut to length
            if len(text) >= lo and (hi is None or len(text) <= hi) and (pattern is None or _search(pattern, text)):
                return text
    return "x" * lo


def _number_example(s: Mapping, integer: bool, index: int) -> int | float:
    lo, hi, xlo, xhi = _bounds(s)
    step = _num(s.get("multipleOf"))
    step = step if step and step > 0 else None
    unit = Decimal(str(step or 1))
    start = Decimal(str(lo if lo is not None else xlo if xlo is not None else 1))
    first = math.ceil(start / unit) + index
    for k in (*range(first, first + 50), *range(first - 1, first - 50, -1)):  # multiples of the step, near the lower bound
        v = float(k * unit)
        v = int(v) if v.is_integer() else v
        ok = (lo is None or v >= lo) and (hi is None or v <= hi) and (xlo is None or v > xlo) and (xhi is None or v < xhi)
        if ok and (step is None or (v / step).is_integer()):
            return v
    low, high = next((b for b in (lo, xlo) if b is not None), 0), next((b for b in (hi, xhi) if b is not None), 2)
    return (low + high) / 2


def _example(s: Any, root: Any, name: str = "", index: int = 0, depth: int = 0) -> Any:
    if not isinstance(s, Mapping) or depth > 16:
        return None if s is False or depth > 16 else "example"
    if isinstance(s.get("$ref"), str):
        target = (_resolve(s["$ref"], root) or ("", {}))[1]
        rest = {k: v for k, v in s.items() if k != "$ref"}
        return _example(_merge(target, rest) if isinstance(target, Mapping) else rest, root, name, index, depth + 1)
    if "const" in s:
        return s["const"]
    for key in ("default", "examples"):
        if key in s and not index and (key == "default" or (isinstance(s[key], list) and s[key])):
            return s[key] if key == "default" else s[key][0]
    if isinstance(s.get("enum"), list) and s["enum"]:
        return s["enum"][index % len(s["enum"])]
    own = {k: v for k, v in s.items() if k not in ("allOf", "anyOf", "oneOf")}
    for part in _get(s, "allOf", list):
        if isinstance(part, Mapping):
            target = (_resolve(part["$ref"], root) or ("", {}))[1] if isinstance(part.get("$ref"), str) else part
            own = _merge(own, target)
    branches = [b for k in ("anyOf", "oneOf") for b in _get(s, k, list) if isinstance(b, Mapping)]
    if branches or s.get("allOf"):  # the first branch that is not null
        chosen = next((b for b in branches if b.get("type") != "null" and b.get("const", 0) is not None), branches[0] if branches else {})
        return _example(_merge(own, chosen), root, name, index, depth + 1)
    types = s.get("type", [])
    types = types if isinstance(types, list) else [types]
    ty = next((t for t in types if t != "null"), types[0] if types else None)
    if ty is None:
        inferred = {
            "object": (*_OBJECT_KEYS, "required"),
            "array": ("items", "prefixItems"),
            "number": ("minimum", "maximum", "multipleOf"),
        }
        ty = next((t for t, keys in inferred.items() if any(k in s for k in keys)), "string")
    if ty in ("number", "integer"):
        return _number_example(s, ty == "integer", index)
    if ty in ("boolean", "null"):
        return index % 2 == 0 if ty == "boolean" else None
    if ty == "array":
        prefix = s.get("prefixItems", s.get("items") if isinstance(s.get("items"), list) else None)
        if isinstance(prefix, list):
            return [_example(p, root, name, 0, depth + 1) for p in prefix[: _count(s, "minItems", len(prefix))]]
        count = max(_count(s, "minItems", 0) or 0, 1 if depth < 6 else 0)  # deep down (recursion), as few as allowed
        count = min(count, _count(s, "maxItems", count) or 0)
        return [_example(s.get("items", True), root, name, i, depth + 1) for i in range(count)]
    if ty == "object":
        props = _get(s, "properties")
        names = [k for k in _get(s, "required", list) if isinstance(k, str)]
        names += [k for k in props if k not in names][: max((_count(s, "minProperties", 0) or 0) - len(names), 0)]
        patterns = _get(s, "patternProperties")
        fallback = {k: next((v for p, v in patterns.items() if _search(p, k)), s.get("additionalProperties", True)) for k in names}
        return {k: _example(props.get(k, fallback[k]), root, k, index, depth + 1) for k in names}
    return _string_example(s, name, index)


def example_args(schema: Mapping, *, root: Mapping | None = None) -> dict:
    """Arguments valid against ``schema``: the required fields, from const, default, examples, enum,
    format, pattern and bounds (``$ref`` resolves against ``root``, default: the schema)."""
    value = _example(schema, root if root is not None else schema)
    return value if isinstance(value, dict) else {}


def _js(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(str(k))}: {_js(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_js(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def example_call(call_path: str, tool: Mapping) -> str:
    """``await mcp.server.tool({ key: "value" })`` with the arguments of :func:`example_args`."""
    args = example_args(tool.get("inputSchema") or {})
    return f"await {call_path}({_js(args) if args else ''})"
