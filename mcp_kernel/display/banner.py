"""The banner's server lines: where the servers came from, each server's state, config problems."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def banner_lines(
    source: str, rows: Iterable[tuple[str, str, str, int | None, str | None]], problems: Sequence[str] = (), warnings: Sequence[str] = ()
) -> list[str]:
    """``MCP servers from …`` and a line per server: (name, transport, state, tool count, error)."""
    lines = [f"MCP servers from {source}:"]
    count = 0
    for name, transport, state, tools, error in rows:
        count += 1
        shown = f", {tools} tools" if tools is not None else ""
        why = f": {error}" if error else ""
        lines.append(f"  {name} ({transport}) {state}{shown}{why}")
    lines += [f"  config problem: {p}" for p in problems]
    lines += [f"  config warning: {w}" for w in warnings]
    if not count:
        lines.append("  (none)")
    return lines
