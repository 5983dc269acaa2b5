"""Is this cell finished, or is the user still typing it? (`is_complete` for `jupyter console`.)

It must answer in microseconds and never wait for V8 (a running cell may be spinning), so it is
pure Python: a small scanner tracks brackets, strings, template literals and comments to spot
constructs left open at the end ("incomplete", with an indent), and the tree-sitter parser
judges everything else ("invalid" for real syntax errors). Cells may be TypeScript, so the parser
judges what the cell runs as: the cell with its types stripped (prepare.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .asi import insert_semicolons
from .rewrite import parser
from .typestrip import TypeScriptError, strip_types

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")", "]", "}"}
# After these tokens a `/` starts a regular expression, not a division.
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {""}
_REGEX_KEYWORDS = {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"}
# A cell ending in one of these is waiting for its right-hand side (`x!` is TypeScript's non-null
# assertion, complete; `x as` and `x satisfies` wait for a type).
_DANGLING = re.compile(
    r"(?:[=+\-*/%&|^<>?:,.]|(?<![\w$)\]])!|=>|\b(?:return|typeof|new|await|yield|in|of|instanceof|else|do)"
    r"|[\w$)\]}]\s+(?:as|satisfies))\s*$"
)


@dataclass
class Verdict:
    status: str  # "complete" | "incomplete" | "invalid"
    indent: str = ""


def _scan(code: str) -> tuple[list[str], str | None]:
    """Return the stack of open brackets and the open string/comment kind at the end, if any.

    Raises ValueError on a closing bracket that matches nothing.
    """
    stack: list[str] = []
    templates: list[int] = []  # stack depth at which each `${` of a template started
    i, n = 0, len(code)
    last = ""  # last significant token, to tell regex from division
    while i < n:
        c = code[i]
        if c in " \t\r\n":
            i += 1
            continue
        if code.startswith("//", i):
            j = code.find("\n", i)
            if j < 0:
                return stack, None
            i = j + 1
            continue
        if code.startswith("/*", i):
            j = code.find("*/", i + 2)
            if j < 0:
                return stack, "comment"
            i = j + 2
            continue
        if c in "'\"":
            j = i + 1
            while j < n and code[j] != c and code[j] != "\n":
                j += 2 if code[j] == "\\" else 1
            if j >= n:
                return stack, "string"
            if code[j] == "\n":
                raise ValueError("unterminated string literal")
            i, last = j + 1, "str"
            continue
        if c == "`" or (c == "}" and templates and templates[-1] == len(stack)):
            if c == "}":
                templates.pop()
            j = i + 1
            while j < n and code[j] != "`":
                if code[j] == "\\":
                    j += 2
                    continue
                if code.startswith("${", j):
                    break
                j += 1
            if j >= n:
                return stack, "template"
            if code[j] == "`":
                i, last = j + 1, "str"
            else:
                templates.append(len(stack))
                i, last = j + 2, "{"
            continue
        if c == "/" and (last in _REGEX_AFTER or last in _REGEX_KEYWORDS):
            j, in_class = i + 1, False
            while j < n and code[j] != "\n" and (code[j] != "/" or in_class):
                if code[j] == "\\":
                    j += 1
                elif code[j] == "[":
                    in_class = True
                elif code[j] == "]":
                    in_class = False
                j += 1
            if j >= n or code[j] == "\n":
                raise ValueError("unterminated regular expression")
            i = j + 1
            while i < n and (code[i].isalnum()):
                i += 1
            last = "re"
            continue
        if c in _OPEN:
            stack.append(c)
        elif c in _CLOSE:
            if not stack or _OPEN[stack[-1]] != c:
                raise ValueError(f"unexpected {c!r}")
            stack.pop()
        m = re.match(r"[A-Za-z_$][\w$]*|\d[\w.]*|.", code[i : i + 64], re.S)
        token = m.group(0) if m else c
        last = token if token[0].isalpha() or token[0] in "_$" else (token if not token[0].isdigit() else "num")
        i += len(token)
    return stack, "template" if templates else None


def classify(code: str) -> Verdict:
    """The `is_complete` answer for ``code``."""
    if not code.strip():
        return Verdict("complete")
    try:
        stack, open_kind = _scan(code)
    except ValueError:
        return Verdict("invalid")
    last_line = code.rstrip("\n").split("\n")[-1]
    base = re.match(r"[ \t]*", last_line).group(0)  # type: ignore[union-attr]
    if open_kind in ("string",):
        return Verdict("invalid")
    if open_kind in ("template", "comment"):
        return Verdict("incomplete", "")
    if stack:
        return Verdict("incomplete", base + "  " if last_line.rstrip().endswith(tuple(_OPEN)) else base)
    if code.endswith("\n\n"):
        pass  # two blank lines force a decision below, like a REPL
    elif _DANGLING.search(code) and not code.rstrip().endswith(("++", "--")):
        return Verdict("incomplete", base)
    try:
        js = strip_types(code)
    except TypeScriptError:  # an enum, a decorator…: running it says why
        return Verdict("invalid")
    if not parser().parse(js.encode("utf-8")).root_node.has_error:
        return Verdict("complete")
    # a semicolon tree-sitter misses (`let t` then a line starting with a template) is no error
    return Verdict("complete" if insert_semicolons(js) is not None else "invalid")
