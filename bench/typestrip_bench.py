"""TypeScript type stripping vs the JavaScript cell rewrite (target: ≤ 1 ms for a 10-line cell,
≤ 100 ms for a 2,000-line cell).

    .venv/bin/python bench/typestrip_bench.py

Prints the median of repeated runs (caches warm) for: strip_types on a 10-line and a 2,000-line
TypeScript cell, strip_types on the same cells' plain-JavaScript output (the pass-through path),
and rewrite() of the stripped JavaScript, which the kernel runs next in any case.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_kernel.engine.rewrite import rewrite
from mcp_kernel.engine.typestrip import strip_types

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


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    for lines, repeat in ((10, 500), (2000, 15)):
        ts = cell(lines)
        js = strip_types(ts)
        strip = median_ms(lambda ts=ts: strip_types(ts), repeat)
        plain = median_ms(lambda js=js: strip_types(js), repeat)
        rw = median_ms(lambda js=js: rewrite(js, "cell[1]"), repeat)
        lines = ts.count("\n")
        print(f"{lines:5d} lines: strip_types {strip:8.3f} ms   (plain JS pass-through {plain:8.3f} ms)   rewrite {rw:8.3f} ms")


if __name__ == "__main__":
    main()
