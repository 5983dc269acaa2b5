"""Python's cyclic garbage collector, set for a process that hosts one long-lived session.

With CPython's defaults a young collection runs every 700 allocations, and every tenth of them
also walks the older generation. Many tool calls in flight keep thousands of young objects alive
(tasks, futures, requests, results), so those walks were measured at ~40% of the kernel's time
for 1,000 concurrent calls (125 µs of ~310 µs per call), and the full collections walk the
~110,000 objects start-up leaves behind (the MCP SDK's and pydantic's models, the kernel's
modules), none of which ever becomes garbage. Frozen, those are never walked again; with young
collections every 10,000 allocations the same 1,000 calls took ~170 µs each, their collector's
share ~10 µs. Objects without reference cycles are freed at once either way, so this delays only
cyclic garbage, by at most a few MB.

Only a face that owns its process (the kernel, the one-shot command line) applies this: a
library user's process keeps its own settings.
"""

from __future__ import annotations

import gc

#: allocations between young collections (CPython's default is 700), and the default ratios above
THRESHOLDS = (10_000, 10, 10)


def tune() -> None:
    """Collect the young generation less often, and never walk what was imported so far."""
    gc.set_threshold(*THRESHOLDS)
    freeze()


def freeze() -> None:
    """Move everything alive now out of the collector's sight: start-up's objects live as long as the process.

    No collection first: after start-up it finds ~100 objects in ~55 ms, and that time would be the
    first cell's. Called again after a later stage of start-up (the MCP layer's import), it freezes
    what that stage added; what comes later (connections, cells' values) is collected as usual.
    """
    gc.freeze()
