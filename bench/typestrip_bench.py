"""TypeScript type stripping against the JavaScript cell rewrite (the issue's targets: stripping costs
no more than the rewrite, ≤ 1 ms for a 10-line cell, ≤ 100 ms for a 2,000-line cell), and what
plain JavaScript pays for it now that every cell goes through the stripper.

    .venv/bin/python bench/typestrip_bench.py        # alone, prints medians
    .venv/bin/python bench/run.py --only typestrip   # the same, as rows of the harness's table

The big cells (a 1 MB array literal, 1 MB of JSON rows, a 6 MB JavaScript file) are timed in CPU
seconds of this thread, a few runs each. Each other number is a median of repeated runs with warm caches, taken in this process (the stripper and
the rewrite are pure Python over tree-sitter: what the kernel runs before V8 sees a cell). The
rewrite of the same (stripped) JavaScript is timed in the same run, beside the stripper, so the
ratio holds on a busy machine. Plain JavaScript: every distinct cell the test suite ran
(tests/fixtures/js_cells.json), which the stripper hands back unchanged.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHUNK = """interface Point { x: number; y: number }
type Pair<T> = [T, T];
function dist(a: Point, b: Point): number {
  const dx: number = a.x - b.x, dy = a.y - b.y;
  return Math.sqrt(dx * dx + dy * dy) as number;
}
class Box<T> implements Iterable<T> {
  private items: T[] = [];
  constructor(items?: T[]) { this.items = items ?? []; }
  add(item: T): this { this.items.push(item!); return this; }
  *[Symbol.iterator](): Iterator<T> { yield* this.items; }
}
const boxes = new Map<string, Box<number>>();
let total = 0;
for (const [k, v] of boxes) { total += [...v].length satisfies number; }
const ident = <T,>(x: T): T => x;
const r = ident<string>("s") + dist({ x: 0, y: 0 }, { x: 3, y: 4 });
"""

SMALL = """interface Row { id: number; name?: string }
const rows: Row[] = await api.call<Row[]>("list", { limit: 10 as number });
function label(r: Row): string {
  return `${r.id}: ${r.name ?? "?"}`;
}
const byId = new Map<number, Row>(rows.map((r): [number, Row] => [r.id, r]));
let first = byId.get(1)!;
type Out = { n: number; labels: string[] };
const out = { n: rows.length, labels: rows.map(label) } satisfies Out;
out
"""


def cell(lines: int) -> str:
    """The 10-line cell, or whole copies of CHUNK up to at least ``lines`` lines."""
    if lines <= 10:
        return SMALL
    return CHUNK * -(-lines // CHUNK.count("\n"))


def js_cells() -> list[str]:
    return json.loads((ROOT / "tests" / "fixtures" / "js_cells.json").read_text(encoding="utf-8"))


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def measures(quick: bool = False) -> dict[str, dict[str, Any]]:
    """The harness's typestrip rows: strip_types and rewrite of the same cells, in ms (plain JS: µs per cell)."""
    from mcp_kernel.engine.rewrite import rewrite
    from mcp_kernel.engine.typestrip import strip_types

    out: dict[str, dict[str, Any]] = {}
    for lines, repeat in ((10, 20 if quick else 500), (2000, 2 if quick else 15)):
        ts = cell(lines)
        js = strip_types(ts)
        out[f"strip_{lines}"] = {"value": median_ms(lambda ts=ts: strip_types(ts), repeat), "lines": ts.count("\n"), "repeat": repeat}
        out[f"rewrite_{lines}"] = {"value": median_ms(lambda js=js: rewrite(js, "cell[1]"), repeat), "lines": ts.count("\n"), "repeat": repeat}
    cells = js_cells()
    rounds = 1 if quick else 15
    strip = median_ms(lambda: [strip_types(c) for c in cells], rounds) * 1000 / len(cells)
    rw = median_ms(lambda: [rewrite(c, "cell[1]") for c in cells if _rewrites(c, rewrite)], rounds) * 1000 / len(cells)
    out["strip_js"] = {"value": strip, "cells": len(cells), "unchanged": sum(strip_types(c) == c for c in cells)}
    out["rewrite_js"] = {"value": rw, "cells": len(cells)}
    return out


def big_measures(repeat: int = 3) -> dict[str, dict[str, Any]]:
    """strip_types and rewrite of the big cells, in ms of CPU (this script's own lines; not the harness's)."""
    from mcp_kernel.engine.rewrite import rewrite
    from mcp_kernel.engine.typestrip import strip_types

    out: dict[str, dict[str, Any]] = {}
    for name, code in big_cells().items():
        js = strip_types(code)
        out[f"strip_{name}"] = {"value": cpu_ms(lambda code=code: strip_types(code), repeat), "bytes": len(code.encode())}
        out[f"rewrite_{name}"] = {"value": cpu_ms(lambda js=js: rewrite(js, "cell[1]"), repeat), "bytes": len(js.encode())}
    return out


def big_cells() -> dict[str, str]:
    """Issue 22's big cells: a 1 MB array literal, 1 MB of JSON rows, and a 5+ MB JavaScript file (TypeScript's
    compiler, from the test fixtures' node_modules; left out where it is not installed)."""
    rows = ",".join(f'{{"id": {i}, "name": "row {i}", "tags": ["a", "b"], "ok": true}}' for i in range(15000))
    found = {"array_1mb": "[" + ",".join(["1"] * 500000) + "]", "json_1mb": f"const rows = [{rows}];\nrows.length"}
    tsc = ROOT / "tests" / "fixtures" / "node" / "node_modules" / "typescript" / "lib" / "_tsc.js"
    if tsc.exists():
        found["file_5mb"] = tsc.read_text(encoding="utf-8")
    return found


def cpu_ms(fn: Callable[[], object], repeat: int) -> float:
    """Median CPU time of this thread, in ms: big cells take seconds, and a busy machine's wall clock says little."""
    samples = []
    for _ in range(repeat):
        start = time.thread_time()
        fn()
        samples.append((time.thread_time() - start) * 1000)
    return statistics.median(samples)


_REWRITES: dict[str, bool] = {}


def _rewrites(code: str, rewrite: Callable[[str, str], object]) -> bool:
    """Whether the rewrite takes the cell at all (a few test cells are syntax errors on purpose)."""
    if code not in _REWRITES:
        try:
            rewrite(code, "cell[1]")
            _REWRITES[code] = True
        except Exception:  # noqa: BLE001 - the cell's own syntax error, nothing to time
            _REWRITES[code] = False
    return _REWRITES[code]


def main() -> None:
    found = measures()
    for lines in (10, 2000):
        strip, rw = found[f"strip_{lines}"], found[f"rewrite_{lines}"]
        print(f"{strip['lines']:5d}-line TypeScript cell: strip_types {strip['value']:8.3f} ms   rewrite {rw['value']:8.3f} ms   ratio {strip['value'] / rw['value']:.2f}")
    js, rw = found["strip_js"], found["rewrite_js"]
    print(f"plain JavaScript ({js['cells']} cells, {js['unchanged']} unchanged): strip_types {js['value']:.1f} µs/cell   rewrite {rw['value']:.1f} µs/cell   ratio {js['value'] / rw['value']:.2f}")
    big = big_measures()
    for name in big_cells():
        strip, rw = big[f"strip_{name}"], big[f"rewrite_{name}"]
        print(f"{name} ({strip['bytes'] / 1e6:.1f} MB): strip_types {strip['value'] / 1000:6.2f} s CPU   rewrite {rw['value'] / 1000:6.2f} s CPU")


if __name__ == "__main__":
    main()
