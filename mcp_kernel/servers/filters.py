"""Which tools of a server are exposed: tool selectors (an exact name, a regex, a glob) and the
filter a profile and ``blocked_tools`` make of them.

Selectors come from config files, and a regex that backtracks forever must not freeze the event
loop: regexes run with a time bound, and one that runs out of time once is given up on for good,
failing closed (a deny pattern blocks, an allow pattern admits nothing).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Literal

#: Time bound for one selector regex against one tool name.
REGEX_SECONDS = 0.05
_SLOW_PATTERNS: set[str] = set()


@dataclass(frozen=True)
class Selector:
    """One tool selector: an exact name, an unanchored regex (``re.search``) or an anchored glob (fnmatch)."""

    kind: Literal["name", "regex", "glob"]
    pattern: str

    def matches(self, tool: str, on_timeout: bool = True) -> bool:
        """Does the selector match? A regex that runs out of time once is given up on for good and
        answers ``on_timeout`` (True for deny lists, which fail closed; False for allow lists)."""
        if self.kind == "name":
            return tool == self.pattern
        if self.kind == "glob":
            return fnmatch.fnmatchcase(tool, self.pattern)
        if self.pattern in _SLOW_PATTERNS:
            return on_timeout
        import regex  # for regex selectors only: ~3 MB of an idle kernel's memory

        try:
            return regex.search(self.pattern, tool, timeout=REGEX_SECONDS) is not None
        except TimeoutError:
            _SLOW_PATTERNS.add(self.pattern)
            return on_timeout


@dataclass(frozen=True)
class ToolFilter:
    """Which tools of a server are exposed: ``allow`` (None = all, from the profile) minus ``deny`` (blocked_tools).

    The deny list always wins, so a profile cannot re-enable a tool the server definition blocks.
    """

    allow: tuple[Selector, ...] | None = None
    deny: tuple[Selector, ...] = ()

    def allows(self, tool: str) -> bool:
        if any(s.matches(tool, on_timeout=True) for s in self.deny):
            return False
        return self.allow is None or any(s.matches(tool, on_timeout=False) for s in self.allow)

    __call__ = allows

    @property
    def allows_all(self) -> bool:
        return self.allow is None and not self.deny


ALL_TOOLS = ToolFilter()
