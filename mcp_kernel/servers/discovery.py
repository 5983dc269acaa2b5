"""Finding tools: ranked search over the catalog, compact listings and full definitions.

An agent in a notebook knows what it wants ("read a file", "sum two numbers") but not what a
server called it, so search ranks by relevance over everything a tool says about itself: the
parts of its name, its parameters and its description (name > parameters > description), with
the search engine of search.py. Catalogs can hold thousands of tools, so the index is built once
per catalog and reused until the catalog changes.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .catalog import ToolEntry
from .search import SHOWN_CHARS, Scorer, split_name, words

DEPRECATED_FACTOR = 0.5  # a tool that says it is deprecated ranks below its replacement
#: Servers named in the note of a search that found nothing (more are counted).
SERVERS_NAMED = 8
#: characters of a server's error that an empty search repeats
ERROR_SHOWN = 160


def summary(description: str | None, limit: int = 160) -> str:
    """The first sentence of a description, on one line, at most ``limit`` characters."""
    text = " ".join(inspect.cleandoc(description or "").split("\n\n")[0].split())
    text = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _tool_dict(entry: ToolEntry) -> dict[str, Any]:
    return entry.tool.model_dump(by_alias=True, exclude_none=True)


def _param_words(schema: Any, depth: int = 0) -> list[str]:
    """Parameter names, descriptions and string enum values, a few levels down."""
    if not isinstance(schema, Mapping) or depth > 3:
        return []
    out: list[str] = []
    for name, prop in (schema.get("properties") or {}).items():
        out += split_name(str(name))
        if isinstance(prop, Mapping):
            out += words(str(prop.get("description") or ""))
            out += [w for v in prop.get("enum") or () if isinstance(v, str) for w in words(v)]
            out += _param_words(prop, depth + 1) + _param_words(prop.get("items"), depth + 1)
    return out


class ToolIndex:
    """Search over a catalog's tools; build once per catalog (see :meth:`sync`), query often."""

    def __init__(self, entries: Iterable[ToolEntry] = ()) -> None:
        self.servers: Sequence[Any] | None = None  # the servers' rows (manager.ServerRow), for an empty catalog's note
        self.rebuild(entries)

    def rebuild(self, entries: Iterable[ToolEntry]) -> None:
        self.entries = list(entries)
        self._key = self._key_of(self.entries)
        docs = []
        for e in self.entries:
            t = e.tool
            title = t.title or (t.annotations.title if t.annotations else None) or ""
            docs.append(
                {
                    "name": split_name(e.name) + words(title),
                    "params": _param_words(t.input_schema),
                    "description": words(t.description or ""),
                    "server": split_name(e.server),
                }
            )
        self._scorer = Scorer(docs)
        self._boost = {
            i: DEPRECATED_FACTOR for i, e in enumerate(self.entries) if re.search(r"\bdeprecated\b", e.tool.description or "", re.I)
        }
        self._exact: dict[str, set[int]] = {}
        for i, e in enumerate(self.entries):
            for alias in {e.name, e.safe, e.tool_safe, e.qualified, " ".join(split_name(e.name))}:
                if alias:
                    self._exact.setdefault(alias.lower(), set()).add(i)
        self._calls: dict[int, str] = {}

    @staticmethod
    def _key_of(entries: Sequence[ToolEntry]) -> tuple:
        return tuple((e.server, e.name, e.server_safe, e.tool_safe, id(e.tool)) for e in entries)

    def sync(self, entries: Sequence[ToolEntry], servers: Sequence[Any] | None = None) -> ToolIndex:
        """Rebuild only when the catalog changed (new entries, tools or names); returns self. ``servers``: their rows now."""
        self.servers = servers
        if self._key_of(entries) != self._key:
            self.rebuild(entries)
        return self

    def _call(self, i: int) -> str:
        if i not in self._calls:
            from . import examples

            e = self.entries[i]
            self._calls[i] = examples.example_call(e.call_path, _tool_dict(e))
        return self._calls[i]

    def ranked(self, query: str, server: str | None = None) -> tuple[list[tuple[int, float]], dict]:
        """(entry index, score) best first, and what the query words matched as."""
        allowed = None if server is None else {i for i, e in enumerate(self.entries) if server in (e.server, e.server_safe)}
        query = query.strip()
        if not query:
            return [(i, 0.0) for i in range(len(self.entries)) if allowed is None or i in allowed], {}
        scores, info = self._scorer.rank(query, self._boost)
        exact = self._exact.get(query.lower(), set()) | self._exact.get(" ".join(split_name(query)), set())
        if exact:  # a tool asked for by name comes first; its score is raised so results stay in score order
            top = max((s for i, s in scores.items() if i not in exact), default=0.0)
            for i in exact:
                scores[i] = top + max(scores.get(i, 0.0), 1.0)
        order = sorted(
            (i for i in scores if allowed is None or i in allowed),
            key=lambda i: (-scores[i], self.entries[i].server, self.entries[i].name),
        )
        return [(i, scores[i]) for i in order], info

    def search(self, query: str, *, limit: int = 8, offset: int = 0, server: str | None = None) -> dict[str, Any]:
        """One page of ranked results, with paging fields and a note when nothing (or a correction) matched."""
        limit, offset = max(1, min(int(limit), 100)), max(0, int(offset))
        ranked, info = self.ranked(query, server)
        page = ranked[offset : offset + limit]
        results = [
            {"name": e.name, "server": e.server, "call": self._call(i), "summary": summary(e.tool.description), "score": round(s, 3)}
            for i, s in page
            for e in [self.entries[i]]
        ]
        more = offset + len(page) < len(ranked)
        out: dict[str, Any] = {
            "query": query,
            "total": len(ranked),
            "hasMore": more,
            "nextOffset": offset + len(page) if more else None,
            "results": results,
        }
        if note := self.note(query, server, ranked, info):
            out["note"] = note
        return out

    def note(self, query: str, server: str | None, ranked: list, info: dict) -> str:
        """What a search should tell the user beside its results ("" when nothing): what was
        searched when nothing matched, which words were replaced by similar ones, which matched nothing."""
        servers = list(dict.fromkeys(e.server for e in self.entries))
        if server is not None and not any(server in (e.server, e.server_safe) for e in self.entries):
            return f'Unknown server "{server}". Servers with tools: {", ".join(servers) or "none"}.'
        if not ranked and not self.entries:
            return nothing_to_search(self.servers)
        if not ranked:
            if server is not None:
                scope = f'{sum(e.server == server or e.server_safe == server for e in self.entries)} tools on server "{server}"'
            else:  # the servers named, so that a reader sees at once what a search could have found
                named = ", ".join(servers[:SERVERS_NAMED]) + (f", … {len(servers) - SERVERS_NAMED} more" if len(servers) > SERVERS_NAMED else "")
                scope = f"{len(self.entries)} tools on {len(servers)} server{'s' if len(servers) != 1 else ''}: {named}"
            shown = query if len(query) <= SHOWN_CHARS else query[:SHOWN_CHARS] + "…"
            return f'No tool matches "{shown}" (searched {scope}). Try fewer or different words, or api.listTools().'

        parts = []
        if info.get("fixes"):
            parts.append("Matched similar words: " + ", ".join(f"{a} → {b}" for a, b in info["fixes"].items()) + ".")
        if info.get("missing"):
            parts.append("No tool mentions: " + ", ".join(info["missing"]) + ".")
        return " ".join(parts)


def nothing_to_search(rows: Sequence[Any] | None) -> str:
    """What a search of an empty catalog says: each server and why it has no tools (manager.ServerRow:
    still starting, failed and with what error), so that an agent waits, fixes or asks instead of guessing."""
    if rows is not None and not rows:
        return "No tools to search: no MCP server runs in this session (one the config disables starts with await api.connect(name))."
    told = []
    for r in rows or ():
        said = {"ready": "offers no tools", "starting": "is still starting", "error": "failed", "needs_login": "needs a login"}
        why = f"{r.name} {said.get(r.state, 'is ' + r.state.replace('_', ' '))}"
        if r.error:
            error = " ".join(str(r.error).split())
            why += f": {error[:ERROR_SHOWN]}…" if len(error) > ERROR_SHOWN else f": {error}"
        told.append(why.rstrip("."))
    return " ".join(["No tools to search: no MCP server offers any.", *(f"{t}." for t in told), "await api.servers() shows their state."])


def list_tools(entries: Iterable[ToolEntry], *, schemas: bool = False, server: str | None = None) -> list[dict[str, Any]]:
    """A compact index of every tool (one line each), with the schemas only when asked: an agent
    that lists 200 tools wants names and signatures, not 200 JSON Schemas."""
    from . import typescript  # with the first listing: a session that lists nothing never loads it

    out = []
    for e in entries:
        if server is not None and server not in (e.server, e.server_safe):
            continue
        tool = _tool_dict(e)
        first = inspect.cleandoc(e.tool.description or "").split("\n")[0].strip()
        row = {"name": e.name, "server": e.server, "call": e.call_path, "safe": e.safe, "description": first}
        row["signature"] = typescript.signature(e.call_path, tool)
        if schemas:
            row["inputSchema"] = tool.get("inputSchema") or {}
            row["outputSchema"] = tool.get("outputSchema")
        out.append(row)
    return out


_HINTS = {"readOnly": "readOnlyHint", "destructive": "destructiveHint", "idempotent": "idempotentHint", "openWorld": "openWorldHint"}


def describe(entry: ToolEntry, observed: str | None = None, observed_source: str | None = None) -> dict[str, Any]:
    """Everything known about one tool, including the result shape seen so far when the server
    declares no output schema (``observed_source``: structuredContent, json text, text, content items)."""
    from . import examples, typescript

    tool = _tool_dict(entry)
    hints = tool.get("annotations") or {}
    return {
        "name": entry.name,
        "server": entry.server,
        "qualified": entry.qualified,
        "call": entry.call_path,
        "safe": entry.safe,
        "title": tool.get("title") or hints.get("title"),
        "description": inspect.cleandoc(tool.get("description") or ""),
        "inputSchema": tool.get("inputSchema") or {},
        "outputSchema": tool.get("outputSchema"),
        "annotations": {k: hints[v] for k, v in _HINTS.items() if v in hints},
        "signature": typescript.signature(entry.call_path, tool, observed=observed),
        "example": examples.example_call(entry.call_path, tool),
        "doc": typescript.tool_doc(entry.call_path, tool, observed=observed),
        "observedOutput": None if observed is None else {"shape": observed, "source": observed_source},
    }


def library(
    index: ToolIndex, query: str, limit: int = 6, observed: Mapping[tuple[str, str], str] | None = None
) -> tuple[list[str], str]:
    """TypeScript declarations of the best matches (what an agent needs to write the calls), and the
    note api.searchTools would give for the query: an empty list alone does not say whether the
    words were wrong, the catalog empty or a typo corrected."""
    from . import typescript

    observed = observed or {}
    ranked, info = index.ranked(query)
    out = []
    for i, _ in ranked[: max(1, min(int(limit), 100))]:
        e = index.entries[i]
        out.append(typescript.tool_doc(e.call_path, _tool_dict(e), observed=observed.get((e.server, e.name))))
    return out, index.note(query.strip(), None, ranked, info)
