"""The TypeScript shape of tool results seen so far, so tools without an output schema still get a
documented return type (``api.library``, ``describeTool``, Shift-Tab).

JS samples results (``api/mcp.js``: the first calls of a tool, then one in :data:`SAMPLE_EVERY`)
and sends their value here; nothing else of a result is parsed twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .schema import key as _key

#: After the first :data:`SAMPLE_FIRST` results of a tool, one in this many is observed.
SAMPLE_FIRST = 3
SAMPLE_EVERY = 25


@dataclass(frozen=True)
class Shape:
    """The TypeScript shape of the JSON values seen so far: a union of primitive types, at most one
    object form (a field missing from some of the objects is optional) and one array form."""

    prims: frozenset[str] = frozenset()
    fields: Mapping[str, tuple[Shape, bool]] | None = None  # name -> (shape, present in every object)
    items: Shape | None = None  # the merged shape of every array element seen (empty: unknown[])

    def merge(self, other: Shape) -> Shape:
        fields = self.fields if other.fields is None else other.fields
        if self.fields is not None and other.fields is not None:
            fields = {}
            for key in [*self.fields, *(k for k in other.fields if k not in self.fields)]:
                a, b = self.fields.get(key), other.fields.get(key)
                fields[key] = (a[0].merge(b[0]), a[1] and b[1]) if a and b else ((a or b or (Shape(), False))[0], False)
        items = self.items if other.items is None else other.items if self.items is None else self.items.merge(other.items)
        return Shape(self.prims | other.prims, fields, items)

    def _members(self) -> list[str]:
        if "unknown" in self.prims:
            return ["unknown"]
        out = []
        if self.fields is not None:
            parts = [f"{_key(k)}{'' if always else '?'}: {shape.to_ts()}" for k, (shape, always) in self.fields.items()]
            out.append("{ " + "; ".join(parts) + " }" if parts else "{}")
        if self.items is not None:
            inner = self.items._members() or ["unknown"]
            out.append((inner[0] if len(inner) == 1 else "(" + " | ".join(inner) + ")") + "[]")
        return out + [p for p in ("string", "number", "boolean", "null") if p in self.prims]

    def to_ts(self) -> str:
        return " | ".join(self._members()) or "unknown"


def observe(value: Any, _depth: int = 0) -> Shape:
    """The :class:`Shape` of one JSON value (merge several with :meth:`Shape.merge`)."""
    kind = {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null"}.get(type(value))
    if kind or _depth > 32:
        return Shape(frozenset({kind or "unknown"}))
    if isinstance(value, Mapping):
        return Shape(fields={str(k): (observe(v, _depth + 1), True) for k, v in value.items()})
    if isinstance(value, list | tuple):
        # a sample is enough to describe a shape; a 200,000-row result must not cost seconds
        sample = value if len(value) <= 64 else [*value[:48], *value[-16:]]
        items = Shape()
        for item in sample:
            items = items.merge(observe(item, _depth + 1))
        return Shape(items=items)
    return Shape(frozenset({"unknown"}))


def shape_of(value: Any) -> str:
    """TypeScript shape of a JSON value, e.g. ``{ id: string; tags: string[]; score: number | null }``."""
    return observe(value).to_ts()


class ObservedShapes(dict[tuple[str, str], str]):
    """``(server, tool)`` -> the TypeScript of every result observed, merged; plus where results sit."""

    def __init__(self) -> None:
        super().__init__()
        self._shapes: dict[tuple[str, str], tuple[str, Shape]] = {}
        self._calls: dict[tuple[str, str], int] = {}

    def want(self, key: tuple[str, str]) -> bool:
        """Count a call of the tool; True when its result should be observed."""
        n = self._calls.get(key, 0) + 1
        self._calls[key] = n
        return n <= SAMPLE_FIRST or n % SAMPLE_EVERY == 0

    def add(self, key: tuple[str, str], source: str, value: Any) -> None:
        """Merge the shape of one result value, found at ``source`` (structuredContent, json text…)."""
        shape = observe(value)
        if key in self._shapes:
            shape = self._shapes[key][1].merge(shape)
        self._shapes[key] = (source, shape)
        self[key] = shape.to_ts()

    def source(self, key: tuple[str, str]) -> str | None:
        found = self._shapes.get(key)
        return found[0] if found else None
