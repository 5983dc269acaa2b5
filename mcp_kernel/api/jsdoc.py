"""TypeScript declarations of the runtime API (``api.*``, ``emit``), read from the JSDoc of the JS files.

The JS files are where the API is written and documented, so the ``.d.ts`` of ``api.types()`` is
derived from them rather than kept by hand beside them: a function added with JSDoc is declared
with its types, and one added without is still declared (each parameter optional and ``any``),
so a declaration can be loose but never missing. Only the simple shapes these files use are read:
``api.name = function …(…)``, ``api.name = (…) =>``, ``api.name = otherName``, ``function name(…)``,
``const name = (…) =>`` and ``api.name = <literal>``, each with an optional ``/** … */`` before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_IDENT = r"[A-Za-z_$][\w$]*"
_DEFINITION = re.compile(
    rf"^[ \t]*(?:api\.(?P<api>{_IDENT})|(?:async[ \t]+)?function\*?[ \t]+(?P<fn>{_IDENT})|const[ \t]+(?P<const>{_IDENT}))(?P<rest>[^\n]*)",
    re.M,
)
_TAG = re.compile(r"^@(\w+)\s*(.*)$", re.S)
_STANDALONE_STAR = re.compile(r"(?<![\w$*/])\*(?![\w$*/])")
_LITERAL_TYPES = (("\"", "string"), ("'", "string"), ("`", "string"), ("true", "boolean"), ("false", "boolean"))


@dataclass
class Param:
    name: str
    type: str = "any"
    optional: bool = False
    rest: bool = False
    doc: str = ""


@dataclass
class Declaration:
    """One documented (or at least defined) name: a function, or a constant with a type."""

    name: str
    doc: str = ""
    params: list[Param] = field(default_factory=list)
    returns: str = "any"
    returns_doc: str = ""
    template: str = ""  # "<T = any>"
    const_type: str | None = None  # set for constants (``api.version = ""``)
    examples: list[str] = field(default_factory=list)

    def render(self, indent: str = "  ") -> str:
        """``/** … */`` and ``function name(…): T;`` (or ``const name: T;``) inside a namespace."""
        lines = _doc_lines(self)
        head = [f"{indent}/**", *(f"{indent} * {line}".rstrip() for line in lines), f"{indent} */"] if lines else []
        if self.const_type is not None:
            return "\n".join([*head, f"{indent}const {self.name}: {self.const_type};"])
        params = ", ".join(_param(p) for p in self.params)
        return "\n".join([*head, f"{indent}function {self.name}{self.template}({params}): {self.returns};"])


def _param(p: Param) -> str:
    if p.rest:
        return f"...{p.name}: {p.type if p.type.endswith('[]') else 'any[]'}"
    return f"{p.name}{'?' if p.optional else ''}: {p.type}"


def _doc_lines(d: Declaration) -> list[str]:
    lines = d.doc.splitlines() if d.doc else []
    lines += [f"@param {p.name} {p.doc}".rstrip() for p in d.params if p.doc]
    lines += [f"@returns {d.returns_doc}"] if d.returns_doc else []
    lines += [f"@example {e}" for e in d.examples]
    return [line.replace("*/", "*\\/") for line in lines]


def declarations(source: str) -> dict[str, Declaration]:
    """Every ``api.*`` member of one JS file (keys ``api.name``) and every named function or
    constant it defines (keys ``name``), in source order."""
    found: dict[str, Declaration] = {}
    for match in _DEFINITION.finditer(source):
        name = match["api"] or match["fn"] or match["const"]
        key = f"api.{name}" if match["api"] else name
        doc = _jsdoc_before(source, match.start())
        rest = match["rest"]
        if match["api"] or match["const"]:
            rhs = rest.split("=", 1)[1].strip() if "=" in rest and not rest.lstrip().startswith("==") else ""
            alias = re.fullmatch(rf"({_IDENT});?", rhs)
            if alias and alias[1] in found:  # api.unwrap = unwrap: the function's own declaration
                found[key] = Declaration(**{**found[alias[1]].__dict__, "name": name})
                continue
            literal = next((t for start, t in _LITERAL_TYPES if rhs.startswith(start)), "number" if rhs[:1].isdigit() else None)
            if literal is not None:
                found[key] = _declaration(name, doc, None, False, literal)
                continue
            if not rhs or not (re.match(r"(?:async\s+)?(?:function\b|\(|" + _IDENT + r"\s*=>)", rhs)):
                continue  # not a function we can read (a call result, an object…)
        start = match.start("rest") + rest.find("(") if "(" in rest else -1
        arrow = re.search(rf"=\s*(?:async\s+)?({_IDENT})\s*=>", rest)
        params = [arrow[1]] if arrow and (start < 0 or match.start("rest") + arrow.start(1) < start) else _params_at(source, start)
        is_async = bool(re.search(r"\basync\b", source[match.start() : match.end()]))
        calls_python = "ns.call(" in rest
        found[key] = _declaration(name, doc, params, is_async or calls_python, None)
    return found


def _jsdoc_before(source: str, at: int) -> str:
    before = source[:at].rstrip()
    if not before.endswith("*/"):
        return ""
    start = before.rfind("/**")
    if start < 0 or "*/" in before[start:-2]:
        return ""
    body = before[start + 3 : -2]
    return "\n".join(re.sub(r"^\s*\* ?", "", line) for line in body.splitlines()).strip()


def _params_at(source: str, open_paren: int) -> list[str]:
    """The parameter texts of the parameter list whose ``(`` is at ``open_paren``."""
    if open_paren < 0:
        return []
    depth, quote, parts, current = 0, "", [], ""
    for ch in source[open_paren:]:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch in "([{":
            depth += 1
            if depth == 1:
                continue
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                break
        elif ch == "," and depth == 1:
            parts.append(current)
            current = ""
            continue
        current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _declaration(name: str, doc: str, params: list[str] | None, is_async: bool, const_type: str | None) -> Declaration:
    text, tags = _split_tags(doc)
    decl = Declaration(name=name, doc=text)
    tagged: dict[str, Param] = {}
    for tag, body in tags:
        if tag == "param":
            type_, rest = _braced(body)
            pname, pdoc = [*rest.split(None, 1), "", ""][:2]
            optional = pname.startswith("[")
            pname = pname.strip("[]").split("=")[0]
            tagged[pname] = Param(pname, type_ or "any", optional, doc=" ".join(pdoc.split()))
        elif tag in ("returns", "return"):
            type_, rest = _braced(body)
            decl.returns, decl.returns_doc = type_ or decl.returns, " ".join(rest.split())
        elif tag == "template":
            decl.template = "<" + ", ".join(t.strip("[]").replace("=", " = ") for t in body.split()) + ">"
        elif tag == "example":
            decl.examples.append(" ".join(body.split()))
        elif tag == "type" and const_type is not None:
            const_type = _braced(body)[0] or const_type
    if const_type is not None:
        decl.const_type = const_type
        return decl
    for raw in params or []:
        rest = raw.startswith("...")
        pname = re.match(_IDENT, raw.lstrip(".")) if not raw.startswith(("{", "[")) else None
        key = pname[0] if pname else "options"
        param = tagged.get(key) or Param(key, optional=True)  # undocumented: loose, never wrong
        param.optional = param.optional or "=" in raw
        param.rest = rest
        decl.params.append(param)
    if not any(tag in ("returns", "return") for tag, _ in tags):
        decl.returns = "Promise<any>" if is_async else "any"
    elif is_async and not decl.returns.startswith("Promise<"):
        decl.returns = f"Promise<{decl.returns}>"
    return decl


def _split_tags(doc: str) -> tuple[str, list[tuple[str, str]]]:
    text: list[str] = []
    tags: list[tuple[str, str]] = []
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith("@"):
            m = _TAG.match(stripped)
            if m:
                tags.append((m[1], m[2]))
                continue
        if tags:
            tags[-1] = (tags[-1][0], tags[-1][1] + "\n" + line)
        else:
            text.append(line)
    return "\n".join(text).strip(), tags


def _braced(body: str) -> tuple[str, str]:
    """``{type} rest`` -> (TypeScript type, rest); JSDoc's ``*`` becomes ``any``."""
    body = body.strip()
    if not body.startswith("{"):
        return "", body
    depth = 0
    for i, ch in enumerate(body):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            type_ = " ".join(body[1:i].split())
            return _STANDALONE_STAR.sub("any", type_), body[i + 1 :].strip()
    return "", body
