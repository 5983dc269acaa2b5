"""TypeScript-like docs for MCP tools: one-line signatures, JSDoc declarations, schema types.

Tools are plain mappings as ``Tool.model_dump(by_alias=True, exclude_none=True)`` gives them:
``name``, ``description``, ``inputSchema``, optional ``outputSchema`` and ``annotations``.
JSON Schema 2020-12, draft-07 (and draft-04 boolean bounds, OpenAPI ``nullable``) are understood;
anything else renders as ``unknown`` rather than failing. Everything here is pure. Example calls
come from examples.py, observed result shapes from shapes.py.
"""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .examples import example_call
from .schema import IDENT as _IDENT
from .schema import OBJECT_KEYS as _OBJECT_KEYS
from .schema import bounds as _bounds
from .schema import get as _get
from .schema import ident as _ident
from .schema import key as _key
from .schema import literal as _lit
from .schema import merge as _merge
from .schema import refs_in as _refs_in
from .schema import resolve_ref as _resolve

UNION, INTER, ATOM = 0, 1, 2  # precedence of a rendered type, to know where parentheses are needed
_INLINE_WIDTH = 76  # in docs, a nested object longer than this (plus indentation) gets one field per line
_SIGNATURE_MAX = 200
_WRAP = 100  # JSDoc line width
_TYPING_KEYS = ("type", "$ref", "enum", "const", "items", "prefixItems", *_OBJECT_KEYS)
_PLAIN_OBJECT_KEYS = {"type", "properties", "required", "additionalProperties", "description", "title", "default", "examples", "$schema"}
Member = tuple[str, int]  # one member of a union: (text, precedence)


def _join(members: list[Member]) -> Member:
    out = [m for i, m in enumerate(members) if m not in members[:i]]
    if ("unknown", ATOM) in out:
        return "unknown", ATOM
    out = [m for m in out if m[0] != "never"] or out[:1]
    if not out:
        return "never", ATOM
    return out[0] if len(out) == 1 else (" | ".join(t for t, _ in out), UNION)


def _paren(rendered: Member, need: int) -> str:
    return rendered[0] if rendered[1] >= need else f"({rendered[0]})"


class _Renderer:
    """Renders schemas as TypeScript: on one line, or (``multiline``) objects one field per line
    with ``// default`` comments (and descriptions when ``describe``) and ``/* format */`` notes."""

    def __init__(self, root: Any, *, multiline: bool = False, describe: bool = False, expand_top: bool = False) -> None:
        self.root, self.multiline, self.describe, self.expand_top = root, multiline, describe, expand_top
        self.max_depth: int | None = None  # deeper objects render as { … }
        self.max_union = 0  # longer unions render as a | b | c | …
        self.named: dict[str, Any] = {}  # recursive definitions, referred to by name
        self._flat = 0  # > 0 while rendering the one-line candidate of an object
        self._nested_expands = False  # whether an object inside that candidate wants one field per line
        self._expanding: list[str] = []
        self._recursive: dict[str, bool] = {}

    def text(self, schema: Any, ind: int = 0, depth: int = 0) -> str:
        return self.render(schema, ind, depth)[0]

    def render(self, schema: Any, ind: int, depth: int) -> Member:
        members = self._members(schema, ind, depth)
        if self.max_union and len(members) > self.max_union:
            cut = self.max_union - 1
            members = [*members[:cut], ("…", ATOM), *[m for m in members[cut:] if m[0] == "null"]]
        return _join(members)

    def _members(self, s: Any, ind: int, depth: int) -> list[Member]:
        if s is False:
            return [("never", ATOM)]
        if not isinstance(s, Mapping):
            return [("unknown", ATOM)]
        if isinstance(s.get("$ref"), str):
            out = [self._ref(s["$ref"], ind, depth)]
        elif "const" in s:
            out = [(_lit(s["const"]), ATOM)]
        elif isinstance(s.get("enum"), list):
            out = [(_lit(v), ATOM) for v in s["enum"]] or [("never", ATOM)]
        elif any(k in s for k in ("allOf", "anyOf", "oneOf")):
            out = self._combined(s, ind, depth)
        else:
            types = s.get("type")
            if types is None:
                types = ["object"] if any(k in s for k in _OBJECT_KEYS) else ["array"] if "items" in s or "prefixItems" in s else []
            types = types if isinstance(types, list) else [types]
            out = [self._typed(s, t, ind, depth) for t in types] or [("unknown", ATOM)]
        return [*out, ("null", ATOM)] if s.get("nullable") is True else out

    def is_recursive(self, ref: str) -> bool:
        """Whether the definition ``ref`` points to can reach itself through ``$ref``s."""
        if ref not in self._recursive:
            seen, stack, found = {ref}, [ref], False
            while stack and not found:
                target = _resolve(stack.pop(), self.root)
                for sub in _refs_in(target[1] if target else None):
                    found = found or sub == ref
                    if sub not in seen:
                        seen.add(sub)
                        stack.append(sub)
            self._recursive[ref] = found
        return self._recursive[ref]

    def _ref(self, ref: str, ind: int, depth: int) -> Member:
        target = _resolve(ref, self.root)
        if target is None:
            return "unknown", ATOM
        if ref in self._expanding or self.is_recursive(ref):
            self.named.setdefault(target[0], target[1])
            return target[0], ATOM
        self._expanding.append(ref)
        try:
            return self.render(target[1], ind, depth)
        finally:
            self._expanding.pop()

    def _combined(self, s: Mapping, ind: int, depth: int) -> list[Member]:
        """allOf (merged into one object when possible, else ``&``) with anyOf / oneOf unions."""
        own = {k: v for k, v in s.items() if k not in ("allOf", "anyOf", "oneOf")}
        parts = [own] if any(k in own for k in _TYPING_KEYS) else []
        parts += [p for p in _get(s, "allOf", list) if isinstance(p, Mapping | bool)]
        merged = self._merge_objects(parts) if len(parts) > 1 else None
        terms = [self._members(p, ind, depth) for p in ([merged] if merged else parts)]
        for key in ("anyOf", "oneOf"):
            branches = [m for b in _get(s, key, list) for m in self._members(b, ind, depth)]
            if branches:  # branches that only add constraints ({required: [...]}) say nothing about the type
                terms.append([m for m in branches if m != ("unknown", ATOM)] or [("unknown", ATOM)])
        terms = [t for t in terms if t != [("unknown", ATOM)]] or [[("unknown", ATOM)]]
        if len(terms) == 1:
            return terms[0]
        return [(" & ".join(_paren(_join(t), INTER) for t in terms), INTER)]

    def _merge_objects(self, parts: list) -> Mapping | None:
        merged: dict = {"type": "object"}
        for part in parts:
            while isinstance(part, Mapping) and isinstance(part.get("$ref"), str) and not self.is_recursive(part["$ref"]):
                part = (_resolve(part["$ref"], self.root) or ("", None))[1]
            if not isinstance(part, Mapping) or part.get("type", "object") != "object" or not set(part) <= _PLAIN_OBJECT_KEYS:
                return None
            merged = _merge(merged, {k: v for k, v in part.items() if k in ("properties", "required", "additionalProperties")})
        return merged

    def _typed(self, s: Mapping, ty: Any, ind: int, depth: int) -> Member:
        if ty == "string" and self.multiline and s.get("format"):
            return "string /* " + str(s["format"]).replace("*/", "*\\/") + " */", ATOM
        if ty in ("string", "boolean", "null"):
            return ty, ATOM
        if ty in ("number", "integer"):
            return "number", ATOM
        if ty == "array":
            return self._array(s, ind, depth), ATOM
        return (self._object(s, ind, depth) if ty == "object" else "unknown"), ATOM

    def _array(self, s: Mapping, ind: int, depth: int) -> str:
        prefix, items = s.get("prefixItems"), s.get("items")
        rest = items
        if prefix is None and isinstance(items, list):  # draft-07 tuple
            prefix, rest = items, s.get("additionalItems")
        if isinstance(prefix, list):
            elems = [self.text(p, ind, depth) for p in prefix]
            if isinstance(rest, Mapping) and rest:
                elems.append(f"...{_paren(self.render(rest, ind, depth), ATOM)}[]")
            return "[" + ", ".join(elems) + "]"
        return _paren(self.render(items, ind, depth), ATOM) + "[]"

    def _object(self, s: Mapping, ind: int, depth: int) -> str:
        props = _get(s, "properties")
        extra = s.get("additionalProperties")
        index = [extra] if isinstance(extra, Mapping) and extra else []
        index += list(_get(s, "patternProperties").values())
        if not props and not index:
            return "{}" if "properties" in s or extra is False else "{ [key: string]: unknown }"
        if self.max_depth is not None and depth >= self.max_depth:
            return "{ … }"
        required = {r for r in _get(s, "required", list) if isinstance(r, str)}
        outer_expands, self._nested_expands = self._nested_expands, False
        self._flat += 1
        try:
            fields = self._fields(props, required, index, ind, depth)
        finally:
            self._flat -= 1
        flat = "{ " + "; ".join(f for f, _ in fields) + " }"
        width = _INLINE_WIDTH if depth else _INLINE_WIDTH + 24  # a top-level result type may be a little longer
        expand = (self.expand_top and depth == 0) or self._nested_expands or any(c for _, c in fields) or 2 * ind + len(flat) > width
        self._nested_expands = outer_expands or expand
        if not self.multiline or self._flat or not expand:
            return flat
        pad = "  " * (ind + 1)
        lines = [f"{pad}{f};" + (f" // {c}" if c else "") for f, c in self._fields(props, required, index, ind + 1, depth)]
        return "{\n" + "\n".join(lines) + "\n" + "  " * ind + "}"

    def _fields(self, props: Mapping, required: set, index: list, ind: int, depth: int) -> list[tuple[str, str]]:
        """(``name?: type``, comment) per property, plus the index signature."""
        out = []
        for name, schema in props.items():
            notes = []
            if self.multiline and isinstance(schema, Mapping):
                desc = " ".join(str(schema.get("description") or "").split())
                if self.describe and desc:
                    notes.append(desc if len(desc) <= 100 else desc[:99] + "…")
                if "default" in schema:
                    notes.append("default " + _lit(schema["default"], 100))
            out.append((f"{_key(name)}{'' if name in required else '?'}: {self.text(schema, ind, depth + 1)}", "; ".join(notes)))
        if index:
            out.append(("[key: string]: " + _join([m for v in index for m in self._members(v, ind, depth + 1)])[0], ""))
        return out


def schema_to_ts(schema: Mapping | bool | None, *, root: Mapping | None = None, indent: int | None = None) -> str:
    """TypeScript type of a JSON Schema; ``$ref`` resolves against ``root`` (default: the schema).

    ``indent=None`` gives one line. An int gives the form used in docs: objects with defaults, or too
    long for one line, get one field per line (nested lines indented from level ``indent``) with
    ``// default X`` comments, and strings show their format as ``string /* date-time */``.
    """
    return _Renderer(root if root is not None else schema, multiline=indent is not None).text(schema, indent or 0)


# --- docs --------------------------------------------------------------------------------------


def _constraints(s: Mapping) -> list[str]:
    lo, hi, xlo, xhi = _bounds(s)
    out = [f"Range: {_lit(lo)} to {_lit(hi)}."] if lo is not None and hi is not None else []
    singles = [("Minimum", lo if hi is None else None), ("Maximum", hi if lo is None else None)]
    singles += [("Greater than", xlo), ("Less than", xhi), ("Multiple of", s.get("multipleOf"))]
    out += [f"{label}: {_lit(v)}." for label, v in singles if v is not None]
    for what, low, high in (("Length", "minLength", "maxLength"), ("Items", "minItems", "maxItems")):
        if low in s and high in s:
            out.append(f"{what}: {s[low]} to {s[high]}.")
        else:
            out += [f"{label} {what.lower()}: {s[k]}." for label, k in (("Min", low), ("Max", high)) if k in s]
    out += ["Unique items."] if s.get("uniqueItems") is True else []
    return out + ([f"Pattern: /{s['pattern']}/."] if isinstance(s.get("pattern"), str) else [])


def _param_text(s: Mapping, target: Mapping) -> str:
    """``Description. Default: X. Range: 1 to 40.`` for one field ('' when there is nothing to say)."""
    desc = " ".join(str(s.get("description") or target.get("description") or "").split())
    extra = [f"Default: {_lit(s['default'], 100)}."] if "default" in s else []
    for schema in [target, *[b for k in ("anyOf", "oneOf") for b in _get(target, k, list) if isinstance(b, Mapping)]]:
        extra += [c for c in _constraints(schema) if c not in extra]
    if desc and extra and desc[-1] not in ".!?:":
        desc += "."
    return " ".join([desc, *extra]).strip()


def _params(root: Any, s: Any, path: str, out: dict[str, str], stack: tuple = ()) -> None:
    """Collect ``@param`` texts for the documented fields below ``s``, following each ``$ref`` once."""
    if not isinstance(s, Mapping):
        return
    if isinstance(s.get("$ref"), str):
        target = _resolve(s["$ref"], root)
        if target is not None and s["$ref"] not in stack:
            _params(root, target[1], path, out, (*stack, s["$ref"]))
        return
    for branch in [b for k in ("allOf", "anyOf", "oneOf") for b in _get(s, k, list)]:
        _params(root, branch, path, out, stack)
    children = [(f"{path}.{k}" if _IDENT.match(k) else f"{path}[{json.dumps(k)}]", v) for k, v in _get(s, "properties").items()]
    items = s.get("prefixItems") or s.get("items")
    children += [(f"{path}[{i}]", v) for i, v in enumerate(items)] if isinstance(items, list) else [(f"{path}[]", items)]
    children.append((f"{path}[key]", s.get("additionalProperties")))
    for child_path, child in children:
        if not isinstance(child, Mapping):
            continue
        target = (_resolve(child["$ref"], root) or ("", {}))[1] if isinstance(child.get("$ref"), str) else child
        text = _param_text(child, target if isinstance(target, Mapping) and not child_path.endswith("]") else child)
        if text and child_path not in out:
            out[child_path] = text
        _params(root, child, child_path, out, stack)


def _annotations(tool: Mapping) -> str:
    hints = tool.get("annotations") or {}
    read_only = hints.get("readOnlyHint") is True
    words = ["read-only"] if read_only else []
    if not read_only and "destructiveHint" in hints:  # destructive and idempotent only mean something for writes,
        words.append("destructive" if hints["destructiveHint"] else "non-destructive")
    if hints.get("idempotentHint") is True or (not read_only and hints.get("idempotentHint") is False):  # but say idempotent
        words.append("idempotent" if hints["idempotentHint"] else "non-idempotent")
    if "openWorldHint" in hints:
        words.append("open-world" if hints["openWorldHint"] else "closed-world")
    return ", ".join(words)


def _function_name(call_path: str) -> str:
    return _ident(call_path.rsplit(".", 1)[-1])


def _args_part(schema: Any, text: str) -> str:
    """``args: T``, ``args?: T`` when no field is required, or '' for a tool without parameters."""
    if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        schema = (_resolve(schema["$ref"], schema) or ("", schema))[1]
    required = isinstance(schema, Mapping) and schema.get("required")
    return "" if text == "{}" else f"args{'' if required else '?'}: {text}"


def signature(call_path: str, tool: Mapping, *, observed: str | None = None) -> str:
    """One line, ``name(args: {...}): Promise<T>``, shortened to about 200 characters when needed."""
    name, schema, output = _function_name(call_path), tool.get("inputSchema") or {}, tool.get("outputSchema")
    title = output.get("title") if isinstance(output, Mapping) else None
    for max_depth, max_union in ((None, 0), (1, 0), (1, 4)):  # then nested objects become { … }, long unions a | b | c | …
        inputs, outputs = _Renderer(schema), _Renderer(output)
        for renderer in (inputs, outputs):
            renderer.max_depth, renderer.max_union = max_depth, max_union
        args, returns = _args_part(schema, inputs.text(schema)), observed or "unknown"
        if output is not None:
            returns = outputs.text(output)
            if len(returns) > 60 and isinstance(title, str) and _IDENT.match(title):
                returns = title
        line = f"{name}({args}): Promise<{returns}>"
        if len(line) <= _SIGNATURE_MAX:
            return line
    returns = returns if len(returns) <= 60 else returns[:59] + "…"
    budget = max(_SIGNATURE_MAX - len(f"{name}(; … }}): Promise<{returns}>"), 0)
    cut = args.rfind("; ", 0, budget)  # drop whole fields from the end
    line = f"{name}({args[:cut] + '; … }' if cut > 0 else args[:budget] + '…'}): Promise<{returns}>"
    return line if len(line) <= _SIGNATURE_MAX else line[: _SIGNATURE_MAX - 1] + "…"


def _comment(text: str, first: str, rest: str) -> list[str]:
    lines: list[str] = []
    for raw in text.replace("*/", "*\\/").splitlines() or [""]:
        prefix = first if not lines else rest
        wrapped = textwrap.wrap(raw, _WRAP, initial_indent=prefix, subsequent_indent=rest, break_long_words=False, break_on_hyphens=False)
        lines += [line.rstrip() for line in wrapped] or [prefix.rstrip()]
    return lines


@dataclass
class ToolDeclaration:
    """The pieces of a tool's TypeScript declaration, for docs (:func:`tool_doc`) and the ``.d.ts``
    of ``api.types()`` alike, so the two can never disagree about a tool's types."""

    name: str  # the function name (the last part of the call path)
    types: dict[str, str]  # recursive definitions the types refer to by name: name -> type text
    doc: list[str]  # JSDoc body lines, each starting " * "
    args: str  # "args: T", "args?: T" or "" for a tool without parameters
    returns: str
    example: str


def tool_declaration(call_path: str, tool: Mapping, *, observed: str | None = None) -> ToolDeclaration:
    """The declaration parts of one tool: argument and result types, JSDoc, example call."""
    schema, output = tool.get("inputSchema") or {}, tool.get("outputSchema")
    inputs = _Renderer(schema, multiline=True, expand_top=True)
    outputs = _Renderer(output, multiline=True, describe=True)
    args = _args_part(schema, inputs.text(schema))
    returns = outputs.text(output) if output is not None else observed or "unknown"

    doc: list[str] = []
    if description := inspect.cleandoc(str(tool.get("description") or "")).strip():
        doc += _comment(description, " * ", " * ")
    params: dict[str, str] = {}
    _params(schema, schema, "args", params)
    for path, text in params.items():
        doc += _comment(text, f" * @param {path} - ", " *   ")
    if isinstance(output, Mapping) and output.get("description"):
        doc += _comment(" ".join(str(output["description"]).split()), " * @returns ", " *   ")
    elif output is None and observed:
        doc.append(" * @returns The shape seen in earlier results (the server declares no output schema).")
    if annotations := _annotations(tool):
        doc.append(f" * Annotations: {annotations}.")

    types: dict[str, str] = {}
    for renderer in (inputs, outputs):  # recursive definitions are referred to by name: declare them
        while todo := [n for n in renderer.named if n not in types]:
            for type_name in todo:
                define = _Renderer(renderer.root, multiline=True, describe=renderer.describe)
                define.named = renderer.named
                types[type_name] = define.text(renderer.named[type_name])
    return ToolDeclaration(_function_name(call_path), types, doc, args, returns, example_call(call_path, tool))


def tool_doc(call_path: str, tool: Mapping, *, observed: str | None = None) -> str:
    """JSDoc, an ``async function`` declaration with argument and result types, and an example call."""
    decl = tool_declaration(call_path, tool, observed=observed)
    lines = [f"type {name} = {text};" for name, text in decl.types.items()]
    lines += ["/**", *decl.doc, " */"] if decl.doc else []
    lines.append(f"async function {decl.name}({decl.args}): Promise<{decl.returns}>")
    lines.append(f"// Example: {decl.example}")
    return "\n".join(lines)
