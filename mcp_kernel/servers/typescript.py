"""TypeScript-like docs for MCP tools: signatures, JSDoc, example calls and observed result shapes.

Tools are plain mappings as ``Tool.model_dump(by_alias=True, exclude_none=True)`` gives them:
``name``, ``description``, ``inputSchema``, optional ``outputSchema`` and ``annotations``.
JSON Schema 2020-12, draft-07 (and draft-04 boolean bounds, OpenAPI ``nullable``) are understood;
anything else renders as ``unknown`` rather than failing. Everything here is pure.
"""

from __future__ import annotations

import inspect
import json
import math
import re
import string
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import unquote

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
UNION, INTER, ATOM = 0, 1, 2  # precedence of a rendered type, to know where parentheses are needed
_INLINE_WIDTH = 76  # in docs, a nested object longer than this (plus indentation) gets one field per line
_SIGNATURE_MAX = 200
_WRAP = 100  # JSDoc line width
_FORMATS = {
    **dict.fromkeys(("uri", "url", "iri", "uri-reference", "iri-reference"), "https://example.com"),
    **dict.fromkeys(("email", "idn-email"), "user@example.com"),
    **dict.fromkeys(("hostname", "idn-hostname"), "example.com"),
    **{"date": "2024-01-01", "date-time": "2024-01-01T00:00:00Z", "time": "12:00:00Z", "duration": "P1D"},
    **{"ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "uuid": "123e4567-e89b-12d3-a456-426614174000"},
}
_OBJECT_KEYS = ("properties", "additionalProperties", "patternProperties")
_TYPING_KEYS = ("type", "$ref", "enum", "const", "items", "prefixItems", *_OBJECT_KEYS)
_PLAIN_OBJECT_KEYS = {"type", "properties", "required", "additionalProperties", "description", "title", "default", "examples", "$schema"}
Member = tuple[str, int]  # one member of a union: (text, precedence)


def _key(name: str) -> str:
    return name if _IDENT.match(name) else json.dumps(name, ensure_ascii=False)


def _ident(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_$]", "_", name) or "_"
    return "_" + name if name[0].isdigit() else name


def _lit(value: Any, cap: int = 0) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text[: cap - 1] + "…" if cap and len(text) > cap else text


def _refs_in(node: Any) -> Iterator[str]:
    if isinstance(node, Mapping):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        node = list(node.values())
    for value in node if isinstance(node, list) else ():
        yield from _refs_in(value)


def _resolve(ref: str, root: Any) -> tuple[str, Any] | None:
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
    return _ident(parts[-1] if parts else title if isinstance(title, str) and title else "Root"), node


def _bounds(s: Mapping) -> tuple[Any, Any, Any, Any]:
    """minimum, maximum, exclusiveMinimum, exclusiveMaximum, with draft-04 boolean exclusives normalised."""
    lo, hi, xlo, xhi = s.get("minimum"), s.get("maximum"), s.get("exclusiveMinimum"), s.get("exclusiveMaximum")
    if isinstance(xlo, bool):
        lo, xlo = (None, lo) if xlo else (lo, None)
    if isinstance(xhi, bool):
        hi, xhi = (None, hi) if xhi else (hi, None)
    return _num(lo), _num(hi), _num(xlo), _num(xhi)


def _num(value: Any) -> int | float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) else None


def _get(s: Mapping, key: str, kind: type = dict) -> Any:
    """``s[key]`` when it is a dict (or ``kind``), else an empty one: malformed keywords are ignored."""
    value = s.get(key)
    return value if isinstance(value, Mapping if kind is dict else kind) else kind()


def _count(s: Mapping, key: str, default: int | None = None) -> int | None:
    """A non-negative integer keyword such as minItems, or ``default`` when absent or malformed."""
    value = s.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


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


def _merge(a: Mapping, b: Mapping) -> dict:
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


def tool_doc(call_path: str, tool: Mapping, *, observed: str | None = None) -> str:
    """JSDoc, an ``async function`` declaration with argument and result types, and an example call."""
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

    lines: list[str] = []
    for renderer in (inputs, outputs):  # recursive definitions are referred to by name: declare them
        done: set[str] = set()
        while todo := [n for n in renderer.named if n not in done]:
            for type_name in todo:
                done.add(type_name)
                define = _Renderer(renderer.root, multiline=True, describe=renderer.describe)
                define.named = renderer.named
                lines.append(f"type {type_name} = {define.text(renderer.named[type_name])};")
    lines += ["/**", *doc, " */"] if doc else []
    lines.append(f"async function {_function_name(call_path)}({args}): Promise<{returns}>")
    lines.append(f"// Example: {example_call(call_path, tool)}")
    return "\n".join(lines)


# --- example arguments -------------------------------------------------------------------------


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
    """Whether the regex matches somewhere in ``text``; None when Python cannot compile it."""
    try:
        return re.search(pattern, text) is not None
    except (re.error, TypeError):
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


# --- observed shapes ---------------------------------------------------------------------------


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
