"""Completion and inspection of names in the live environment, without running user code.

Python finds the dotted name under the cursor (so cursor offsets stay in code points, as the
protocol counts them); JS resolves it through property descriptors only (introspect.js). When V8
is busy with a running cell the answer falls back to what the rewriter saw declared plus a
snapshot of the standard globals, so completion always answers at once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .rewrite import strip_checks

if TYPE_CHECKING:
    from .runtime import Engine

KEYWORDS = (
    "async await break case catch class const continue debugger default delete do else export "
    "extends false finally for function if import in instanceof let new null of return static "
    "super switch this throw true try typeof undefined var void while with yield"
).split()

_IDENT = r"[A-Za-z_$][\w$]*"
# `a.b?.c` chain ending at the cursor, with the partial last name
_CHAIN = re.compile(rf"((?:{_IDENT}\s*\??\.\s*)*)({_IDENT})?$")
_SPLIT = re.compile(r"\s*\??\.\s*")


@dataclass
class Completion:
    matches: list[str]
    start: int
    end: int
    types: list[dict[str, Any]] = field(default_factory=list)


def _chain_before(code: str, cursor: int) -> tuple[list[str], str, int] | None:
    before = code[:cursor]
    m = _CHAIN.search(before)
    if m is None:
        return None
    prefix = m.group(2) or ""
    chain = m.group(1)
    start = cursor - len(prefix)
    # do not complete right after a number ("1." is a decimal point) or inside a string/comment
    head = before[: m.start()]
    if head.endswith((".",)) or re.search(r"\d$", head):
        return None
    if head.count("'") % 2 or head.count('"') % 2 or head.count("`") % 2:
        return None
    line = before[before.rfind("\n") + 1 :]
    if "//" in line and line.index("//") < len(line) - len(m.group(0)):
        return None
    path = [p for p in _SPLIT.split(chain) if p] if chain else []
    return path, prefix, start


async def complete(engine: Engine, code: str, cursor: int) -> Completion:
    found = _chain_before(code, cursor)
    if found is None:
        return Completion([], cursor, cursor)
    path, prefix, start = found
    reply = await engine.query(f"__mcp2repl.complete({json.dumps(path)},{json.dumps(prefix)})")
    rows: list[list[str]] = reply if isinstance(reply, list) else []
    if reply is None and not path:  # V8 busy: what we know without it
        rows = [[n, "instance", ""] for n in sorted(engine.declared | engine.global_names) if n.startswith(prefix)]
    if not path:
        known = {r[0] for r in rows}
        rows += [[k, "keyword", ""] for k in KEYWORDS if k.startswith(prefix) and k not in known]
    rows.sort(key=lambda r: (r[0].startswith("_"), r[0].lower()))
    matches = [r[0] for r in rows]
    types = [{"start": start, "end": cursor, "text": name, "type": kind, "signature": sig} for name, kind, sig in rows]
    return Completion(matches, start, cursor, types)


def _name_at(code: str, cursor: int) -> list[str] | None:
    """The dotted name the cursor is on or just after (`Math.ma|x` -> ["Math", "max"])."""
    right = re.match(r"[\w$]*", code[cursor:])
    end = cursor + (len(right.group(0)) if right else 0)
    found = _chain_before(code, end)
    if found is not None and found[1]:
        return [*found[0], found[1]]
    # not on a name: inside a call's parentheses, inspect the callee, like Shift-Tab in IPython
    m = re.search(rf"((?:{_IDENT}\s*\??\.\s*)*{_IDENT})\s*\([^()]*$", code[:cursor])
    return [p for p in _SPLIT.split(m.group(1)) if p] if m else None


async def inspect(engine: Engine, code: str, cursor: int) -> dict[str, str] | None:
    """A MIME bundle describing the name at the cursor, or None if there is nothing there."""
    path = _name_at(code, cursor)
    if not path:
        return None
    info = await engine.query(f"__mcp2repl.describe({json.dumps(path)})")
    if not isinstance(info, dict) or not info.get("found"):
        return None
    dotted = ".".join(path)
    source = strip_checks(info.get("source", ""))
    if "[native code]" in source:
        source = ""
    # (label, plain text, markdown) per section, so both renderings say the same things
    sections: list[tuple[str, str, str]] = []
    if info.get("signature"):
        sections.append(("Signature: ", info["signature"], f"```js\n{info['signature']}\n```"))
    if info.get("doc"):
        sections.append(("", info["doc"], info["doc"]))
    if source:
        sections.append(("Source:\n", source, f"```js\n{source}\n```"))
    elif info.get("summary"):
        sections.append(("Value: ", info["summary"], f"```\n{info['summary']}\n```"))
    plain = "\n".join([f"{dotted}: {info['type']}", *(label + text for label, text, _ in sections)])
    md = [f"**{dotted}**: `{info['type']}`", *(m for _, _, m in sections)]
    return {"text/plain": plain, "text/markdown": "\n\n".join(md)}
