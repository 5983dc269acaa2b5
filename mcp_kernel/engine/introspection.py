"""Completion and inspection of names in the live environment, without running user code.

Python finds the dotted name under the cursor (so cursor offsets stay in code points, as the
protocol counts them; TypeScript's ``a!.b`` and ``f<T>(…)`` are read as the JavaScript they run as); JS resolves it through property descriptors only (introspect.js). When V8
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
#: What a TypeScript cell can also start to write (types are erased, so these never reach V8).
TS_KEYWORDS = (
    "abstract any as asserts bigint boolean declare implements infer interface is keyof never number "
    "object private protected public readonly satisfies string symbol type unknown"
).split()

def _ident_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


def _ident_before(text: str, end: int) -> int:
    """Start of the identifier ending at ``end`` (== ``end`` when there is none): one backward scan."""
    start = end
    while start > 0 and _ident_char(text[start - 1]):
        start -= 1
    while start < end and not (text[start].isascii() and (text[start].isalpha() or text[start] in "_$")):
        start += 1  # an identifier starts with an ASCII letter, _ or $
    return start


def _chain_ending(text: str, end: int) -> tuple[list[str], int]:
    """The dotted names (``a.b?.c.``, TypeScript's ``a!.b``) ending at ``end``, and where the chain
    starts: linear time, so a 100,000-character ``a.a.a…`` line answers at once (a regex here
    backtracked for minutes)."""
    parts: list[str] = []
    pos = end
    while True:
        k = pos
        while k > 0 and text[k - 1] in " \t\r\n":
            k -= 1
        if k == 0 or text[k - 1] != ".":
            return parts[::-1], pos
        k -= 1
        if k > 0 and text[k - 1] == "?":
            k -= 1
        while k > 0 and text[k - 1] in " \t\r\n":
            k -= 1
        while k > 0 and text[k - 1] == "!":  # a non-null assertion: `a!.b` is `a.b` at run time
            k -= 1
        start = _ident_before(text, k)
        if start == k:
            return parts[::-1], pos
        parts.append(text[start:k])
        pos = start


@dataclass
class Completion:
    matches: list[str]
    start: int
    end: int
    types: list[dict[str, Any]] = field(default_factory=list)


def _chain_before(code: str, cursor: int) -> tuple[list[str], str, int] | None:
    before = code[:cursor]
    start = _ident_before(before, cursor)
    prefix = before[start:cursor]
    path, chain_start = _chain_ending(before, start)
    # do not complete right after a number ("1." is a decimal point) or inside a string/comment
    head = before[:chain_start]
    if head.endswith(".") or head[-1:].isdigit():
        return None
    if head.count("'") % 2 or head.count('"') % 2 or head.count("`") % 2:
        return None
    line_start = before.rfind("\n") + 1
    comment = before.find("//", line_start)
    if comment != -1 and comment < chain_start:
        return None
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
        rows += [[k, "keyword", ""] for k in (*KEYWORDS, *TS_KEYWORDS) if k.startswith(prefix) and k not in known]
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
    before = code[:cursor]
    paren = max(before.rfind("("), before.rfind(")"))
    if paren == -1 or before[paren] != "(":
        return None
    end = _skip_type_arguments(before, paren)
    while end > 0 and before[end - 1] in " \t\r\n":
        end -= 1
    start = _ident_before(before, end)
    if start == end:
        return None
    path, _ = _chain_ending(before, start)
    return [*path, before[start:end]]


def _skip_type_arguments(text: str, end: int) -> int:
    """Where a callee ends before TypeScript type arguments: ``api.project<Book[]>|(`` -> before ``<``."""
    k = end
    while k > 0 and text[k - 1] in " \t\r\n":
        k -= 1
    if k == 0 or text[k - 1] != ">":
        return end
    depth = 0
    for i in range(k - 1, max(k - 2000, 0) - 1, -1):  # bounded, like every scan here
        ch = text[i]
        if ch == ">" and not (i > 0 and text[i - 1] == "="):  # `=>` is no bracket
            depth += 1
        elif ch == "<":
            depth -= 1
            if depth == 0:
                return i
        elif ch in "();{}":
            return end
    return end


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
    # a function from a TypeScript cell: V8 has its stripped text, show what the user typed
    typed = next((t for smap in reversed(list(engine.maps.values())) if (t := smap.shown_text(source)) is not None), None)
    source, fence = (typed, "ts") if typed is not None else (source, "js")
    # (label, plain text, markdown) per section, so both renderings say the same things
    sections: list[tuple[str, str, str]] = []
    if info.get("signature"):
        sections.append(("Signature: ", info["signature"], f"```js\n{info['signature']}\n```"))
    if info.get("doc"):
        sections.append(("", info["doc"], info["doc"]))
    if source:
        sections.append(("Source:\n", source, f"```{fence}\n{source}\n```"))
    elif info.get("summary"):
        sections.append(("Value: ", info["summary"], f"```\n{info['summary']}\n```"))
    plain = "\n".join([f"{dotted}: {info['type']}", *(label + text for label, text, _ in sections)])
    md = [f"**{dotted}**: `{info['type']}`", *(m for _, _, m in sections)]
    return {"text/plain": plain, "text/markdown": "\n\n".join(md)}
