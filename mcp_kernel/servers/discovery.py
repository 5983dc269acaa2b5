"""Finding tools: ranked search, compact listings, full definitions and runtime guidance.

An agent in a notebook knows what it wants ("read a file", "sum two numbers") but not what a
server called it, so search ranks by relevance over everything a tool says about itself: the
parts of its name, its parameters and its description (BM25F, name > parameters > description).
Queries are short and sloppy, hence light stemming, typo tolerance (edit distance) and prefix
matches, each at a reduced weight so that exact words still win. Catalogs can hold thousands of
tools, so all per-tool work happens once, when the index is built; a query only touches the
postings of its own (expanded) terms.
"""

from __future__ import annotations

import inspect
import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from mcp_kernel.servers import typescript
from mcp_kernel.servers.catalog import ToolEntry

_PARTS = re.compile(r"[A-Z]+(?![a-z])\d*|[A-Z]?[a-z]+\d*|\d+")  # HTTPServer -> HTTP, Server; v2 stays whole
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in into is it its me my of on or some than that the "
    "their them then there these this those to was what when which who will with would you your".split()
)
# A few everyday words that tools rarely use; expanded at a reduced weight, never replacing the word.
SYNONYMS = {"folder": "directory", "folders": "directory", "picture": "image", "photo": "image", "dir": "directory"}
FIELDS = {"name": (3.0, 0.5), "params": (1.5, 0.6), "description": (1.0, 0.75), "server": (0.5, 0.3)}  # weight, b
K1 = 1.2
PREFIX_WEIGHT, FUZZY_WEIGHT, SYNONYM_WEIGHT, SURFACE_WEIGHT = 0.5, 0.6, 0.8, 0.3
DEPRECATED_FACTOR = 0.5  # a tool that says it is deprecated ranks below its replacement


def split_name(name: str) -> list[str]:
    """``get-weather.v2`` -> get, weather, v2; ``HTTPServerStatus`` -> http, server, status (lowercase).
    Non-ASCII words (``café``, ``文件``) are kept whole rather than dropped."""
    return [p.lower() for chunk in re.findall(r"[^\W_]+", name) for p in (_PARTS.findall(chunk) if chunk.isascii() else [chunk])]


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A deliberately light stemmer: plurals, -ing, -ed and a final e, so that files/file,
    directories/directory, reading/read and created/create meet; short words are left alone."""
    w = word.lower()
    if len(w) <= 3 or not w.isalpha():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "ches", "shes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif w.endswith(("ing", "ed")) and not w.endswith("eed"):
        base = w[: -3 if w.endswith("ing") else -2]
        if len(base) >= 3 and re.search(r"[aeiouy]", base):
            w = base[:-1] if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz" else base
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


def words(text: str) -> list[str]:
    """Lowercase words of free text; identifiers inside it (``read_text_file``) are split too."""
    return [p for p in split_name(text or "") if len(p) > 1]


def tokenize(text: str) -> list[str]:
    """Stems of the words of ``text`` without stopwords: what the index stores and queries use."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def summary(description: str | None, limit: int = 160) -> str:
    """The first sentence of a description, on one line, at most ``limit`` characters."""
    text = " ".join(inspect.cleandoc(description or "").split("\n\n")[0].split())
    text = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _osa(a: str, b: str, cap: int) -> int:
    """Edit distance with adjacent transpositions (``raed`` -> ``read`` is 1), cut off above ``cap``."""
    if abs(len(a) - len(b)) > cap:
        return cap + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        if min(row) > cap:
            return cap + 1
        prev2, prev = prev, row
    return prev[-1]


def _deletes(word: str, depth: int) -> set[str]:
    """Every string made by deleting up to ``depth`` characters (symmetric-delete typo lookup)."""
    out, frontier = {word}, {word}
    for _ in range(depth):
        frontier = {w[:i] + w[i + 1 :] for w in frontier for i in range(len(w)) if len(w) > 2}
        out |= frontier
    return out


class _Scorer:
    """BM25F over documents made of weighted fields, with an inverted index of precomputed term
    scores and the lookup structures query expansion needs (sorted words, symmetric deletes)."""

    def __init__(self, docs: Sequence[Mapping[str, list[str]]]) -> None:
        self.size = len(docs)
        docs = [{f: [w for w in ws if w not in STOPWORDS] for f, ws in doc.items()} for doc in docs]
        avg = {f: max(sum(len(d.get(f, ())) for d in docs) / max(self.size, 1), 1.0) for f in FIELDS}
        pseudo: dict[str, dict[int, float]] = {}
        self.surface: dict[str, str] = {}  # surface word -> stem
        for i, doc in enumerate(docs):
            for f, ws in doc.items():
                weight, b = FIELDS[f]
                norm = weight / (1 - b + b * len(ws) / avg[f])
                # Words count for their stem; in names and parameters also for their exact form ("=word").
                exact = ["=" + w for w in ws] if f in ("name", "params") else []
                for t, n in Counter([stem(w) for w in ws] + exact).items():
                    tfs = pseudo.setdefault(t, {})
                    tfs[i] = tfs.get(i, 0.0) + n * norm
                for w in ws:
                    self.surface.setdefault(w, stem(w))
        self.postings: dict[str, list[tuple[int, float]]] = {}
        for t, tfs in pseudo.items():
            idf = math.log(1 + (self.size - len(tfs) + 0.5) / (len(tfs) + 0.5))
            self.postings[t] = [(i, idf * tf / (K1 + tf)) for i, tf in tfs.items()]
        self.sorted_words = sorted(self.surface)
        self.shown = {s: w for w, s in reversed(list(self.surface.items()))}  # stem -> a word to show in notes
        # Symmetric-delete table for typo lookup: built here so that no query pays for it.
        self.deletes: dict[str, set[str]] = {}
        for t in self.shown:
            for d in _deletes(t, 2 if len(t) >= 6 else 1):
                self.deletes.setdefault(d, set()).add(t)

    def expand(self, raw: str) -> list[tuple[str, float]]:
        """(indexed term, weight) pairs a query word stands for: itself, a synonym, index words it
        is a prefix of, and, when it is neither an indexed word nor the start of one, indexed words
        within a small edit distance (1, or 2 for words of 8 letters or more)."""
        term = stem(raw)
        out = {term: 1.0} if term in self.postings else {}
        if "=" + raw in self.postings:  # the very word, not only the same stem ("a file" vs "files")
            out["=" + raw] = SURFACE_WEIGHT
        if raw in SYNONYMS and stem(SYNONYMS[raw]) in self.postings:
            out.setdefault(stem(SYNONYMS[raw]), SYNONYM_WEIGHT)
        if len(raw) >= 3:
            i = bisect_left(self.sorted_words, raw)
            for w in self.sorted_words[i : i + 50]:  # enough for a partial word; bounded for huge vocabularies
                if not w.startswith(raw):
                    break
                out.setdefault(self.surface[w], PREFIX_WEIGHT)
        if term not in self.postings and len(raw) >= 4 and not out:  # a partial word is not a typo
            cap = 2 if len(raw) >= 8 else 1
            candidates = {c for q in {raw, term} for d in _deletes(q, cap) for c in self.deletes.get(d, ())}
            for c in candidates:
                dist = min(_osa(raw, c, cap), _osa(term, c, cap))
                if dist <= cap:
                    out.setdefault(c, FUZZY_WEIGHT / dist)
        return list(out.items())

    def rank(self, query: str, boost: Mapping[int, float] | None = None) -> tuple[dict[int, tuple[int, float]], dict]:
        """doc -> (distinct query words matched, score), plus what the query words turned into."""
        raws = [w for w in words(query) if w not in STOPWORDS] or words(query)
        raws = list({stem(w): w for w in raws}.values())
        found: dict[int, list] = {}
        fixes, missing = {}, []
        for bit, raw in enumerate(raws):
            expansions = self.expand(raw)
            if not expansions:
                missing.append(raw)
            elif stem(raw) not in self.postings and not any(w == PREFIX_WEIGHT for _, w in expansions):
                fixes[raw] = self.shown.get(max(expansions, key=lambda e: e[1])[0], "?")
            for t, weight in expansions:
                for doc, score in self.postings[t]:
                    hit = found.setdefault(doc, [0, 0.0])
                    hit[0] |= 1 << bit
                    hit[1] += weight * score
        boost = boost or {}
        ranked = {doc: (bin(mask).count("1"), s * boost.get(doc, 1.0)) for doc, (mask, s) in found.items()}
        return ranked, {"fixes": fixes, "missing": missing, "terms": raws}


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
        self._scorer = _Scorer(docs)
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

    def sync(self, entries: Sequence[ToolEntry]) -> ToolIndex:
        """Rebuild only when the catalog changed (new entries, tools or names); returns self."""
        if self._key_of(entries) != self._key:
            self.rebuild(entries)
        return self

    def _call(self, i: int) -> str:
        if i not in self._calls:
            e = self.entries[i]
            self._calls[i] = typescript.example_call(e.call_path, _tool_dict(e))
        return self._calls[i]

    def ranked(self, query: str, server: str | None = None) -> tuple[list[tuple[int, float]], dict]:
        """(entry index, score) best first, and what the query words matched as."""
        allowed = None if server is None else {i for i, e in enumerate(self.entries) if server in (e.server, e.server_safe)}
        query = query.strip()
        if not query:
            return [(i, 0.0) for i in range(len(self.entries)) if allowed is None or i in allowed], {}
        scores, info = self._scorer.rank(query, self._boost)
        exact = self._exact.get(query.lower(), set()) | self._exact.get(" ".join(split_name(query)), set())
        for i in exact:
            scores.setdefault(i, (0, 0.0))
        order = sorted(
            (i for i in scores if allowed is None or i in allowed),
            key=lambda i: (i not in exact, -scores[i][0], -scores[i][1], self.entries[i].server, self.entries[i].name),
        )
        return [(i, scores[i][1]) for i in order], info

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
        if note := self._note(query, server, ranked, info):
            out["note"] = note
        return out

    def _note(self, query: str, server: str | None, ranked: list, info: dict) -> str:
        servers = list(dict.fromkeys(e.server for e in self.entries))
        if server is not None and not any(server in (e.server, e.server_safe) for e in self.entries):
            return f'Unknown server "{server}". Servers with tools: {", ".join(servers) or "none"}.'
        if not ranked:
            if server is not None:
                scope = f'{sum(e.server == server or e.server_safe == server for e in self.entries)} tools on server "{server}"'
            else:
                scope = f"{len(self.entries)} tools on {len(servers)} server{'s' if len(servers) != 1 else ''}"
            return (
                f'No tools match "{query}" (searched {scope}: names, descriptions and parameters). '
                "Try fewer or different words, or api.listTools()."
            )
        parts = []
        if info.get("fixes"):
            parts.append("Matched similar words: " + ", ".join(f"{a} → {b}" for a, b in info["fixes"].items()) + ".")
        if info.get("missing"):
            parts.append("No tool mentions: " + ", ".join(info["missing"]) + ".")
        return " ".join(parts)


def list_tools(entries: Iterable[ToolEntry], *, schemas: bool = False, server: str | None = None) -> list[dict[str, Any]]:
    """A compact index of every tool (one line each), with the schemas only when asked: an agent
    that lists 200 tools wants names and signatures, not 200 JSON Schemas."""
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
        "example": typescript.example_call(entry.call_path, tool),
        "doc": typescript.tool_doc(entry.call_path, tool, observed=observed),
        "observedOutput": None if observed is None else {"shape": observed, "source": observed_source},
    }


def library(index: ToolIndex, query: str, limit: int = 6, observed: Mapping[tuple[str, str], str] | None = None) -> list[str]:
    """TypeScript declarations of the best matches: what an agent needs to write the calls."""
    observed = observed or {}
    out = []
    for i, _ in index.ranked(query)[0][: max(1, min(int(limit), 100))]:
        e = index.entries[i]
        out.append(typescript.tool_doc(e.call_path, _tool_dict(e), observed=observed.get((e.server, e.name))))
    return out


# Runtime guidance, searched like tools: "topic [extra search words]", then the text (blank line between entries).
_GUIDE = """
calling tools [call invoke run use function]
Every tool is an async function taking one argument object: `await mcp.<server>.<tool>({ key: value })`.
`tools.<name>(args)` works when the name is unique across servers; `mcp.call("server.tool", args)` and
`api.callTool(server, tool, args)` take names as strings.

argument checks [arguments validation schema invalid typo required parameter]
Arguments are checked against the tool's input schema before the call: a missing required field, a wrong type or an
unknown key throws at once, naming the field and showing the signature.

results [result unwrap structured content json text output return value raw]
Calls return the useful value: `structuredContent` when present, else a single text item (parsed when it is JSON),
else the content items (images, audio, resources kept as objects). Pass `{ raw: true }` as the second argument for the
whole MCP result; `api.unwrap(result)` unwraps one later.

errors [error exception catch fail failure throw try handling]
A tool error throws `ToolError` with `.server`, `.tool`, `.code` (and `.data`); catch it with try/catch.
`tools.call(name, args)` never throws: it returns `{ ok: true, data }` or `{ ok: false, error: { code, message } }`.

concurrency [parallel concurrent many batch promise all async]
Calls are promises: start several and `await Promise.all([...])` to run them in parallel, e.g. `await
Promise.all(ids.map((id) => mcp.demo.get_book({ book_id: id })))`.

timeouts [timeout slow limit seconds hang time]
Limit one call with an options argument: `await mcp.s.tool(args, { timeout: 30 })` (seconds). MCP2REPL_TIMEOUT=SECONDS
limits every cell; an overrun fails with TimeoutError and the kernel lives on.

interrupts [interrupt stop cancel abort kill stuck]
Interrupt the kernel (the stop button) to stop a running cell with InterruptError; pending timers and tool calls are
cancelled, all globals are kept.

printing [print show output shape project fields truncate large compact]
`api.print(value, { projection, maxChars })` prints a compact view of a large value; `api.project(value, projection)`
keeps only the fields you name. The last expression of a cell is its result.

artifacts [artifact save store file write read export handle]
Keep large data out of the notebook: `await api.saveArtifact(name, value, { format })` (json, text, ndjson or bytes)
writes a file and returns a small handle; `await api.readArtifact(nameOrHandle)` reads it back, `await api.artifacts()`
lists them.

display [display html markdown image png render rich chart show]
Rich output, shown at once while the cell runs: `api.display(value)` (returns a handle with `.update(next)`),
`api.html(s)`, `api.markdown(s)`, `api.svg(s)`, `api.json(v)`, `api.png(bytes)`; `api.clearOutput({ wait: true })`.

discovery [discover search find tool list describe documentation signature]
`await api.searchTools(query)` ranks tools by relevance, `await api.library(query)` gives TypeScript declarations of
the best matches, `await api.describeTool(name)` a full definition and `await api.listTools()` a compact index.

servers [server connect disconnect log status state start restart]
`await api.servers()` shows each server's state and tool count; `api.connect(name, spec)` adds one from a cell,
`api.disconnect(name)` stops it, `api.serverLog(name)` shows its stderr.

resources and prompts [resource prompt uri template read list]
`await mcp.<server>.resources.list()` and `.read(uri)` (`.templates()` for templates); `await
mcp.<server>.prompts.list()` and `.get(name, args)`.

persistence [variable global state persist cells keep declare reuse]
Top-level `const`, `let`, `function` and `class` declarations become globals that later cells see; re-running a cell
that declares them works. Declarations inside blocks and functions stay local.

timers [sleep wait delay timer interval poll retry]
`await sleep(ms)` waits; `setTimeout`, `setInterval` and their `clear*` work. Await what you want recorded: output
after a cell ends may not be saved.
"""
GUIDE: list[tuple[str, str, str]] = [
    (head.split(" [")[0], " ".join(body), head.split(" [")[1].rstrip("]"))
    for head, *body in (block.strip().splitlines() for block in _GUIDE.split("\n\n"))
]
_guide_scorer = _Scorer([{"name": words(t), "params": words(k), "description": words(x)} for t, x, k in GUIDE])


def guide(query: str, limit: int = 6) -> list[dict[str, str]]:
    """Guidance entries best matching ``query`` (the first ``limit`` when it is empty)."""
    limit = max(1, min(int(limit), len(GUIDE)))
    if not query.strip():
        return [{"topic": t, "text": x} for t, x, _ in GUIDE[:limit]]
    scores, _ = _guide_scorer.rank(query)
    order = sorted(scores, key=lambda i: (-scores[i][0], -scores[i][1], i))
    return [{"topic": GUIDE[i][0], "text": GUIDE[i][1]} for i in order[:limit]]
