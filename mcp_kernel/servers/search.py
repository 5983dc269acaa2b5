"""A small search engine for short, sloppy queries over short documents with named fields.

BM25F (each field with its own weight and length normalisation), a deliberately light stemmer,
prefix matches, synonyms, words found inside compounds ("zone" in "timezone") and typo tolerance
(edit distance, found through symmetric deletes), each at a reduced weight so that exact words
still win. A typo correction is a guess: it is tried only for a word that matches nothing as
written, and a document it reaches gets relevance but no credit for covering that word, so a
guess ("zone" → "done") never lifts a document above one that has the words the user typed.
A score is relevance scaled by the share of query words covered, and results go by score alone.
All per-document work happens when the index is built; a query only touches the postings of its
own (expanded) terms. Tool search (discovery.py) and the runtime guide (api/guide.py) use it.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache

_PARTS = re.compile(r"[A-Z]+(?![a-z])\d*|[A-Z]?[a-z]+\d*|\d+")  # HTTPServer -> HTTP, Server; v2 stays whole
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in into is it its me my of on or some than that the "
    "their them then there these this those to was what when which who will with would you your".split()
)
# A few everyday words that tools rarely use; expanded at a reduced weight, never replacing the word.
SYNONYMS = {"folder": "directory", "folders": "directory", "picture": "image", "photo": "image", "dir": "directory"}
FIELDS = {"name": (3.0, 0.5), "params": (1.5, 0.6), "description": (1.0, 0.75), "server": (0.5, 0.3)}  # weight, b
K1 = 1.2
PREFIX_WEIGHT, PART_WEIGHT, FUZZY_WEIGHT, SYNONYM_WEIGHT, SURFACE_WEIGHT = 0.5, 0.5, 0.6, 0.8, 0.3
# Which kinds of match (Scorer.expand) mean the document has the word the user meant: not a typo
# guess, nor a longer word when the word itself is in the index. Substitutes are reported in notes.
COVERING = frozenset({"word", "synonym", "prefix", "part"})
SUBSTITUTES = frozenset({"synonym", "typo"})
UNCOVERED_SHARE = 0.5  # so that among documents covering no word, relevance still decides
#: The longest query searched (a search is for a few words, not a document to be matched against).
MAX_QUERY_CHARS, MAX_QUERY_WORDS = 1000, 32
#: Words longer than this are never tried as typos: their deletions grow with the square of their length.
MAX_TYPO_CHARS = 24
#: Characters of a refused query quoted back.
SHOWN_CHARS = 60


class QueryTooLong(ValueError):
    """A query past :data:`MAX_QUERY_CHARS` or :data:`MAX_QUERY_WORDS`; the message quotes only its start."""


def check_query(query: str) -> None:
    """Refuse a query no search should take: in time (each word is expanded) and in the text said back."""
    if len(query) <= MAX_QUERY_CHARS and len(query.split(None, MAX_QUERY_WORDS)) <= MAX_QUERY_WORDS:
        return
    shown = query.strip()[:SHOWN_CHARS].rstrip() + ("…" if len(query.strip()) > SHOWN_CHARS else "")
    raise QueryTooLong(
        f"the query is {len(query):,} characters and {len(query.split()):,} words long; give at most "
        f"{MAX_QUERY_CHARS:,} characters and {MAX_QUERY_WORDS} words (it began: {shown!r})"
    )


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


def _typo_cap(length: int) -> int:
    """The edit distance a word of ``length`` letters may be from the word meant: none under 4 letters
    (too many short words are one edit apart), 1 up to 7, 2 from 8 on."""
    return 0 if length < 4 else 1 if length < 8 else 2


def _deletes(word: str, depth: int) -> set[str]:
    """Every string made by deleting up to ``depth`` characters (symmetric-delete typo lookup)."""
    out, frontier = {word}, {word}
    for _ in range(depth):
        frontier = {w[:i] + w[i + 1 :] for w in frontier for i in range(len(w)) if len(w) > 2}
        out |= frontier
    return out


class Scorer:
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
        self.reversed_words = sorted(w[::-1] for w in self.surface)  # suffix lookup: compounds' tails
        self.shown = {s: w for w, s in reversed(list(self.surface.items()))}  # stem -> a word to show in notes
        self.surfaces: dict[str, list[str]] = {}  # stem -> its words (typos are measured against both)
        for w, s in self.surface.items():
            self.surfaces.setdefault(s, []).append(w)
        # Symmetric-delete table for typo lookup: built here so that no query pays for it.
        self.deletes: dict[str, set[str]] = {}
        for t in self.shown:
            for d in _deletes(t, 2 if len(t) >= 6 else 1):
                self.deletes.setdefault(d, set()).add(t)

    def expand(self, raw: str) -> list[tuple[str, float, str]]:
        """(indexed term, weight, kind) triples a query word stands for; ``kind`` (see COVERING) says
        whether a document holding the term has the word the user meant or only a guess at it.

        In order, each step only when the ones before found nothing: the word's stem and exact form
        ("word"), a synonym ("synonym") and the index words it is a prefix of ("prefix" when the word
        is partial, "longer" when it is itself in the index: "time" is covered by "time", not by
        "timezone"); then index words it ends ("part": "zone" in "timezone"); then, for a word that
        matches nothing at all, index words within a small edit distance ("typo": see _typo_distance)."""
        term = stem(raw)
        whole = term in self.postings
        out: dict[str, tuple[float, str]] = {term: (1.0, "word")} if whole else {}
        if "=" + raw in self.postings:  # the very word, not only the same stem ("a file" vs "files")
            out["=" + raw] = (SURFACE_WEIGHT, "word")
        if raw in SYNONYMS and stem(SYNONYMS[raw]) in self.postings:
            out.setdefault(stem(SYNONYMS[raw]), (SYNONYM_WEIGHT, "synonym"))
        if len(raw) >= 3:
            i = bisect_left(self.sorted_words, raw)
            for w in self.sorted_words[i : i + 50]:  # enough for a partial word; bounded for huge vocabularies
                if not w.startswith(raw):
                    break
                out.setdefault(self.surface[w], (PREFIX_WEIGHT, "longer" if whole else "prefix"))
        if not out and len(raw) >= 4:  # the tail of a compound: "zone" in "timezone", "name" in "filename"
            tail = raw[::-1]
            i = bisect_left(self.reversed_words, tail)
            for w in self.reversed_words[i : i + 50]:
                if not w.startswith(tail):
                    break
                head = w[: len(tail) - 1 : -1]  # what comes before must be a word too: not "re|turn"
                if len(head) >= 3 and head in self.surface:
                    out.setdefault(self.surface[w[::-1]], (PART_WEIGHT, "part"))
        if not out and 4 <= len(raw) <= MAX_TYPO_CHARS:  # matches nothing as written: a typo? (a partial word is not one)
            cap = _typo_cap(len(raw))
            candidates = {c for q in {raw, term} for d in _deletes(q, cap) for c in self.deletes.get(d, ())}
            for c in candidates:
                dist = self._typo_distance(raw, term, c)
                if dist is not None:
                    out.setdefault(c, (FUZZY_WEIGHT / dist, "typo"))
        return [(t, weight, kind) for t, (weight, kind) in out.items()]

    def _typo_distance(self, raw: str, term: str, stem_: str) -> int | None:
        """How far ``raw`` is from a catalog word of stem ``stem_``, if it is a likely typo of it.

        Word against word and stem against stem, each pair within the edit distance the shorter of
        the two allows (:func:`_typo_cap`): a long query word does not stretch the budget for a
        short stem ("touching" is no typo of "though", "pods" none of "nodes")."""
        pairs = [(term, stem_)] + [(raw, w) for w in self.surfaces.get(stem_, ())]
        best = None
        for a, b in pairs:
            cap = min(_typo_cap(len(a)), _typo_cap(len(b)))
            if cap and (d := _osa(a, b, cap)) <= cap and (best is None or d < best):
                best = d
        return best

    def rank(self, query: str, boost: Mapping[int, float] | None = None) -> tuple[dict[int, float], dict]:
        """doc -> score, plus what the query words turned into (``fixes``: the word put in place of
        a query word that is not in the index, ``missing``: words that match nothing, ``terms``).

        A score is the document's relevance (the sum of its term scores) times ((c + ½) / (n + ½))²,
        where n counts the query words something in the index covers and c those this document
        covers: a document with every word beats one that repeats a few of them, and a typo guess
        adds relevance but no coverage. Results are ranked by this score alone, so the scores users
        see always go down the list."""
        check_query(query)
        raws = [w for w in words(query) if w not in STOPWORDS] or words(query)
        raws = list({stem(w): w for w in raws}.values())
        found: dict[int, list] = {}
        fixes: dict[str, str] = {}
        missing: list[str] = []
        coverable = 0
        for bit, raw in enumerate(raws):
            expansions = self.expand(raw)
            if not expansions:
                missing.append(raw)
            elif all(kind in SUBSTITUTES for _, _, kind in expansions):  # say which word stood in: the nearest, then the most used
                best = max(expansions, key=lambda e: (e[1], len(self.postings[e[0]]), e[0]))
                fixes[raw] = self.shown.get(best[0], "?")
            coverable += any(kind in COVERING for _, _, kind in expansions)
            for t, weight, kind in expansions:
                covers = kind in COVERING
                for doc, score in self.postings[t]:
                    hit = found.setdefault(doc, [0, 0.0])
                    if covers:
                        hit[0] |= 1 << bit
                    hit[1] += weight * score
        boost = boost or {}
        ranked = {}
        for doc, (mask, relevance) in found.items():
            share = (bin(mask).count("1") + UNCOVERED_SHARE) / (coverable + UNCOVERED_SHARE)
            ranked[doc] = relevance * share * share * boost.get(doc, 1.0)
        return ranked, {"fixes": fixes, "missing": missing, "terms": raws}
