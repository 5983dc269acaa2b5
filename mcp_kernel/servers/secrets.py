"""Values from a config that must never be shown, and the masking of them in text that leaves the kernel.

Config files carry tokens: in substitutions (``${TOKEN}``, ``{file:…}``), headers, environment
variables, URL credentials and query strings (see ``ServerSpec.secrets``). They can come back in
error messages (a 401 naming the URL, a wrongly typed field echoing its value), server logs, tool
results, artifacts and the input history. The session masks every known secret wherever text
leaves the kernel, and in what Python hands to JS: a tool result is masked on its JSON text before
V8 parses it, so no JS transformation of a string (``s.split('')``, ``btoa(s)``, a reversal) can
bring a secret back.

A secret is looked for in every form it takes in text: as written; JSON-escaped (a quote,
backslash, control character or non-ASCII letter in it written ``\\"``, ``\\\\``, ``\\n``,
``\\u00e9``), also twice over (JSON text inside a JSON string) and with ``\\/``; percent-encoded (in
a URL); and, for a secret of several lines (a PEM key from ``{file:}``), line by line: every line of
:data:`MIN_LINE` characters or more is a secret of its own, except PEM armour
(``-----BEGIN … KEY-----``), which says only what kind of key follows. Longer forms are replaced
first, in one scan. Masking JSON text keeps it JSON: a string holding a secret is decoded, masked and
encoded again, and a number that is a secret becomes the string ``"[redacted]"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from json.decoder import scanstring
from typing import Any
from urllib.parse import quote, quote_plus

MASK = "[redacted]"
#: Lines of a multi-line secret at least this long (without surrounding spaces) are masked on their own.
MIN_LINE = 8
#: How deep JSON text inside JSON strings is followed (each level has escaped the one inside it).
_NESTED = 4


class Redactor:
    """Replaces every known secret in text with :data:`MASK`; longer forms first.

    A 50 MB tool result is scanned on every call, so the scan is a few ``str.find`` passes at memory
    speed: for each secret (or line of one) its longest run of URL-safe characters, which every form
    of it contains unchanged (escaping touches only quotes, backslashes, controls, non-ASCII and
    reserved characters). Only around those hits does the regex of all forms run.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._state: _State | None = None  # replaced whole, so a reader (a thread) never sees half of it
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        new = {s for s in secrets if s} - self._secrets
        if not new:
            return
        self._secrets |= new
        self._state = _State(self._secrets)

    def __bool__(self) -> bool:
        return self._state is not None

    def _spans(self, value: str) -> list[tuple[int, int]]:
        """Where the secrets' forms are in ``value`` (none without secrets or text)."""
        state = self._state  # read once: add() may replace it from another thread
        return state.matches(value) if state is not None and value else []

    def text(self, value: str) -> str:
        """``value`` with every form of every secret masked (plain text: output, messages, logs)."""
        spans = self._spans(value)
        if not spans:
            return value
        out, last = [], 0
        for start, end in spans:
            out += (value[last:start], MASK)
            last = end
        out.append(value[last:])
        return "".join(out)

    def json_text(self, value: str, _depth: int = 0) -> str:
        """JSON text (or pieces of it) with every secret masked, still JSON (see the module docstring).

        Only the strings and numbers that hold a secret are touched: a string is decoded, masked
        (as JSON again when it holds JSON) and encoded, so an escape next to a secret is never cut.
        A secret that spans JSON punctuation is masked as plain text: never shown, even if the text
        is then no longer JSON.
        """
        spans = self._spans(value)
        if not spans:
            return value
        out, last, outside = [], 0, 0  # outside: a position of ``value`` known to be outside any string
        for hit, stop in spans:
            if hit < last:  # in a token already masked; a secret running on past it spans punctuation
                if stop > last:
                    out.append(MASK)
                    last = stop
                continue
            found = _token_at(value, outside, hit)
            if found is None or found[1] < stop:  # not inside one string or number: masked as plain text
                out += (value[last:hit], MASK)
                last = stop
                continue
            start, end, decoded = found
            out += (value[last:start], json.dumps(MASK) if decoded is None else self._string_token(decoded, _depth))
            last = outside = end
        out.append(value[last:])
        return "".join(out)

    def string(self, value: str, _depth: int = 0) -> str:
        """A string that may hold JSON (a tool's text, which mcp.js parses): masked so that it still parses."""
        if self._state is None or not value:
            return value
        head = value.lstrip()[:1]
        return self.json_text(value, _depth) if head in ("{", "[", '"') and _depth < _NESTED else self.text(value)

    def _string_token(self, decoded: str, depth: int) -> str:
        """A JSON string that holds a secret, encoded again with it masked (JSON text in it stays JSON)."""
        return json.dumps(self.string(decoded, depth + 1), ensure_ascii=False)

    def data(self, value: Any, _depth: int = 0) -> Any:
        """The same JSON-like value with every string masked (dict keys too), and every number that is a secret."""
        if self._state is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return MASK if self._state.matches(str(value)) else value
        if _depth > 400:  # JS bounds the depth of what it sends far below this
            return MASK
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.data(v, _depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v, _depth + 1) for v in value]
        return value


#: Characters no escaping changes (JSON's or a URL's); a run of them is in every form of a secret.
_PLAIN_RUN = re.compile(r"[A-Za-z0-9_.~-]{4,}")
#: Texts this short are scanned by the regex at once.
_SHORT = 4096


class _State:
    """The forms of a set of secrets, and how to find them fast."""

    def __init__(self, secrets: Iterable[str]) -> None:
        anchors: set[str] = set()
        every: set[str] = set()
        for secret in secrets:
            for base, its in _bases(secret):
                every |= its
                runs = _PLAIN_RUN.findall(base)
                anchors |= {max(runs, key=len)} if runs else its  # no plain run: look for each form itself
        self.forms = tuple(sorted(every, key=len, reverse=True))
        self.pattern = re.compile("|".join(map(re.escape, self.forms)))
        self.anchors = tuple(anchors)
        self.longest = len(self.forms[0])

    def matches(self, value: str) -> list[tuple[int, int]]:
        """``(start, end)`` of every form in ``value``, leftmost-longest, as ``pattern.sub`` would replace them."""
        if len(value) <= _SHORT:
            return [m.span() for m in self.pattern.finditer(value)]
        hits = sorted({i for anchor in self.anchors for i in _find_all(value, anchor)})
        spans: list[tuple[int, int]] = []
        cursor = 0
        for hit in hits:  # every form holds an anchor: a match lies within a form's length of a hit
            stop = min(len(value), hit + self.longest)
            m = self.pattern.search(value, max(cursor, hit - self.longest), stop)
            while m is not None and m.start() <= hit:
                spans.append(m.span())
                cursor = m.end()
                m = self.pattern.search(value, cursor, stop)
        return spans


def _bases(secret: str) -> list[tuple[str, set[str]]]:
    """The secret and the lines of it that are secrets of their own (see the module docstring), each with its forms."""
    lines = [line.strip() for line in secret.splitlines()]
    bases = {secret}
    if len(lines) > 1:
        bases.update(line for line in lines if len(line) >= MIN_LINE and not line.startswith("-----"))
    return [(base, _forms(base)) for base in bases]


def _forms(base: str) -> set[str]:
    once = json.dumps(base, ensure_ascii=False)[1:-1]
    ascii_once = json.dumps(base)[1:-1]
    out = {base, once, ascii_once, once.replace("/", "\\/"), ascii_once.replace("/", "\\/"), quote(base, safe=""), quote(base), quote_plus(base)}
    out.update(json.dumps(escaped, ensure_ascii=False)[1:-1] for escaped in (once, ascii_once))  # JSON text in a JSON string
    return {form for form in out if form}


def _find_all(value: str, needle: str) -> list[int]:
    found, i = [], value.find(needle)
    while i >= 0:
        found.append(i)
        i = value.find(needle, i + 1)
    return found


def _escaped(value: str, i: int) -> bool:
    """Is the character at ``i`` escaped (an odd run of backslashes before it)?"""
    j = i
    while j > 0 and value[j - 1] == "\\":
        j -= 1
    return (i - j) % 2 == 1


def _quotes(value: str, start: int, end: int) -> int:
    """Unescaped double quotes in ``value[start:end]`` (``start`` outside any string), counted in C."""
    total = value.count('"', start, end)
    sign, run = 1, "\\"
    while (n := value.count(run + '"', start, end)) > 0:  # quotes after len(run) or more backslashes
        total -= sign * n
        sign, run = -sign, run + "\\"
    return total


def _token_at(value: str, outside: int, hit: int) -> tuple[int, int, str | None] | None:
    """The JSON string (with its decoded text) or number that holds position ``hit``; ``outside``: a
    position before it, outside any string."""
    if _quotes(value, outside, hit) % 2:  # inside a string
        return _string_at(value, outside, hit)
    start = end = hit
    while start > outside and value[start - 1] in _NUMBER:
        start -= 1
    while end < len(value) and value[end] in _NUMBER:
        end += 1
    return (start, end, None) if end > start and value[start] in "-0123456789" else None


def _string_at(value: str, outside: int, hit: int) -> tuple[int, int, str] | None:
    """The string that holds ``hit``: its span and decoded text, read by the json module's own C scanner.

    Its opening quote is the last unescaped quote before ``hit``, looked for backwards a few quotes
    deep; a string full of escaped quotes (JSON text inside a JSON string) is found instead by
    reading whole strings forwards from ``outside``.
    """
    start = value.rfind('"', outside, hit)
    for _ in range(64):
        if start < 0:
            return None
        if not _escaped(value, start):
            try:
                decoded, end = scanstring(value, start + 1, False)
            except ValueError:
                return None
            return start, end, decoded
        start = value.rfind('"', outside, start)
    start = value.find('"', outside)
    while 0 <= start < hit:
        try:
            decoded, end = scanstring(value, start + 1, False)
        except ValueError:
            return None
        if end > hit:
            return start, end, decoded
        start = value.find('"', end)
    return None


_NUMBER = frozenset("0123456789.eE+-")
