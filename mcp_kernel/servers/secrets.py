"""Values from a config that must never be shown, and the masking of them in text that leaves the kernel.

Config files carry tokens: in substitutions (``${TOKEN}``, ``{file:…}``), headers, environment
variables, URL credentials and query strings (see ``ServerSpec.secrets``). They can come back in
error messages (a 401 naming the URL, a wrongly typed field echoing its value), server logs, tool
results, artifacts and the input history. The session masks every known secret wherever text
leaves the kernel, and in what Python hands to JS.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "[redacted]"


class Redactor:
    """Replaces every known secret in text with :data:`MASK`; longer secrets first, in one linear scan."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        new = {s for s in secrets if s} - self._secrets
        if not new:
            return
        self._secrets |= new
        ordered = sorted(self._secrets, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(s) for s in ordered))

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, value: str) -> str:
        pattern = self._pattern
        return value if pattern is None or not value else pattern.sub(MASK, value)

    def data(self, value: Any, _depth: int = 0) -> Any:
        """The same JSON-like value with every string masked (dict keys too)."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if _depth > 400:  # JS bounds the depth of what it sends far below this
            return MASK
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.data(v, _depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v, _depth + 1) for v in value]
        return value
