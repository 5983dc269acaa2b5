"""An agent's loop with the Python step API: define small helpers, evaluate one step, read a compact
value, choose the next step. Runs against the built-in demo server (no config needed):

    python examples/agent_loop.py

Every step goes to one persistent session ("example"), so globals and the MCP connection carry
over; only compact values come back. A real agent would choose each next step from the last result
(here the choices are written out), and would keep the session for later instead of stopping it.
"""

from __future__ import annotations

import json

from mcp_kernel.client import KernelSession

STEPS = [
    (
        "define helpers",
        """
globalThis.task = { picks: [] };
async function topRated(genre, n) {
  const found = await mcp.demo.search_books({ query: genre, genre });
  return found.results.sort((a, b) => b.rating - a.rating).slice(0, n).map(({ id, title, rating }) => ({ id, title, rating }));
}
""",
    ),
    ("search fantasy", "task.picks = await topRated('fantasy', 3); task.picks"),
    ("fetch details", "await Promise.all(task.picks.map((b) => mcp.demo.get_book({ book_id: b.id }).then((d) => ({ id: d.id, pages: d.pages, price: d.price }))))"),
    ("summarise", "({ books: task.picks.length, best: task.picks[0]?.title })"),
]


def main() -> None:
    session = KernelSession("example", restart=True)
    try:
        for number, (what, code) in enumerate(STEPS, 1):
            result = session.step(code, timeout=60)
            if result.error is not None:
                print(f"step {number}: {what} -> {result.error.name}: {result.error.message}")
                break
            shown = "ok" if result.value is None else json.dumps(result.value)
            calls = f" ({len(result.calls)} tool calls)" if result.calls else ""
            print(f"step {number}: {what} -> {shown}{calls}")
    finally:
        session.stop()
    print("stopped session 'example'")


if __name__ == "__main__":
    main()
