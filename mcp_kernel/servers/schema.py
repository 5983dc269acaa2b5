"""Reading JSON Schema the way MCP tools write it: local ``$ref``s, bounds, counts and merges.

Shared by the TypeScript renderer (typescript.py) and the example builder (examples.py). Tools
use JSON Schema 2020-12, draft-07, draft-04 boolean bounds and OpenAPI ``nullable``; helpers here
never raise on anything else.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
#: Time bound for one regex of a schema (``pattern``, ``patternProperties``) against one value.
PATTERN_SECONDS = 0.05
OBJECT_KEYS = ("properties", "additionalProperties", "patternProperties")


def key(name: str) -> str:
    return name if IDENT.match(name) else json.dumps(name, ensure_ascii=False)


def ident(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_$]", "_", name) or "_"
    return "_" + name if name[0].isdigit() else name


def literal(value: Any, cap: int = 0) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text[: cap - 1] + "…" if cap and len(text) > cap else text


def refs_in(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        node = list(node.values())
    for value in node if isinstance(node, list) else ():
        yield from refs_in(value)


def resolve_ref(ref: str, root: Any) -> tuple[str, Any] | None:
    """(type name, target) of a local ``$ref`` such as ``#/$defs/Node``; None when it is dangling."""
    if not ref.startswith("#") or not isinstance(root, Mapping):
        return None
    node, parts = root, [unquote(p).replace("~1", "/").replace("~0", "~") for p in ref[1:].split("/") if p]
    for part in parts:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    title = root.get("title")
    return ident(parts[-1] if parts else title if isinstance(title, str) and title else "Root"), node


def bounds(s: Mapping) -> tuple[Any, Any, Any, Any]:
    """minimum, maximum, exclusiveMinimum, exclusiveMaximum, with draft-04 boolean exclusives normalised."""
    lo, hi, xlo, xhi = s.get("minimum"), s.get("maximum"), s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
    if isinstance(xlo, bool):
        lo, xlo = (None, lo) if xlo else (lo, None)
    if isinstance(xhi, bool):
        hi, xhi = (None, hi) if xhi else (hi, None)
    return number(lo), number(hi), number(xlo), number(xhi)


def number(value: Any) -> int | float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) else None


def get(s: Mapping, key: str, kind: type = dict) -> Any:
    """``s[key]`` when it is a dict (or ``kind``), else an empty one: malformed keywords are ignored."""
    value = s.get(key)
    return value if isinstance(value, Mapping if kind is dict else kind) else kind()


def count(s: Mapping, key: str, default: int | None = None) -> int | None:
    """A non-negative integer keyword such as minItems, or ``default`` when absent or malformed."""
    value = s.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default



def merge(a: Mapping, b: Mapping) -> dict:
    """Shallow ``allOf``-style merge of two schemas; properties and required lists are unioned."""
    out = dict(a)
    for k, v in b.items():
        if k == "properties" and isinstance(out.get(k), Mapping) and isinstance(v, Mapping):
            out[k] = {**out[k], **v}
        elif k == "required" and isinstance(out.get(k), list) and isinstance(v, list):
            out[k] = out[k] + [r for r in v if r not in out[k]]
        else:
            out[k] = v
    return out
