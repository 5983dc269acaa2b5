"""Result-shaping benchmarks: __mcp2repl.shape.fit / envelope and api.project in a raw V8 context.

    .venv/bin/python bench/shape_bench.py

Prints milliseconds (medians, timed inside V8) for fitting a 1 MB and a 50 MB value into
20,000 characters (targets: < 100 ms and < 3 s), for the ResultTooLarge path (which measures
the whole value), and for api.project over 100,000 records. For scale, the same run times
Python's json.loads and V8's JSON.parse / JSON.stringify of the same bytes.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from py_mini_racer import MiniRacer

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ["mcp_kernel/engine/js/inspect.js", "mcp_kernel/api/core.js", "mcp_kernel/api/shape.js"]


def make_text(target_bytes: int) -> str:
    """A search-result-like JSON document of about `target_bytes` characters."""
    record = {
        "id": 0,
        "title": "A result title of moderate length",
        "url": "https://example.com/items/0",
        "tags": ["alpha", "beta", "gamma"],
        "score": 0.123456,
        "summary": "lorem ipsum dolor sit amet " * 12,
        "meta": {"lang": "en", "words": 312, "source": {"name": "crawler", "version": 3}},
    }
    per = len(json.dumps(record))
    n = max(1, target_bytes // per)
    results = [{**record, "id": i, "url": f"https://example.com/items/{i}", "score": i / 7} for i in range(n)]
    return json.dumps({"query": "benchmark", "total": n, "results": results})


def js_ms(mr: MiniRacer, expr: str, runs: int) -> float:
    """Median milliseconds of `expr`, timed inside V8 (Date.now, so several runs for short ones)."""
    code = f"(() => {{ const t = Date.now(); for (let i = 0; i < {runs}; i++) {{ {expr}; }} return (Date.now() - t) / {runs}; }})()"
    return statistics.median(mr.eval(code) for _ in range(3))


def py_ms(fn: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    mr = MiniRacer()
    try:
        run(mr)
    finally:
        mr.close()  # an unclosed context with a large heap stalls interpreter exit


def run(mr: MiniRacer) -> None:
    for name in SCRIPTS:
        mr.eval((ROOT / name).read_text())
    rows: list[tuple[str, float]] = []
    for label, size, runs in (("1MB", 1_000_000, 20), ("50MB", 50_000_000, 1)):
        text = make_text(size)
        rows.append((f"python json.loads {label} ({len(text) / 1e6:.1f} MB)", py_ms(lambda t=text: json.loads(t), 3)))
        mr.eval(f"var TEXT = {json.dumps(text)};")
        rows.append((f"V8 JSON.parse {label}", js_ms(mr, "globalThis.V = JSON.parse(TEXT)", 1)))
        rows.append((f"V8 JSON.stringify {label}", js_ms(mr, "JSON.stringify(V)", 1)))
        mr.eval("__mcp2repl.shape.fit(V, 20000)")  # warm up
        rows.append((f"fit {label} -> 20,000 chars", js_ms(mr, "__mcp2repl.shape.fit(V, 20000)", runs)))
        rows.append((f"fit {label} -> 200,000 chars", js_ms(mr, "__mcp2repl.shape.fit(V, 200000)", max(1, runs // 5))))
        rows.append((f"envelope {label} fit:false (ResultTooLarge)", js_ms(mr, "__mcp2repl.shape.envelope(V, {fit: false})", 1)))
        fitted = json.loads(mr.eval("JSON.stringify(__mcp2repl.shape.fit(V, 20000))"))
        assert len(fitted["json"]) <= 20000
        json.loads(fitted["json"])
        print(f"{label} -> 20,000 chars: {len(fitted['json'])} chars, cut {fitted['steps']}, limits {fitted['limits']}")
        if label == "50MB":
            mr.eval("var ROWS = Array.from({length: 100000}, (_, i) => V.results[i % V.results.length]);")
            spec = "{$slice: 100000, id: true, title: true, tags: {$slice: 1}, meta: {$pick: ['lang']}}"
            rows.append(("api.project 100,000 records", js_ms(mr, f"api.project(ROWS, {spec})", 1)))
            rows.append(
                (
                    "api.project 100,000 records, $path + $items",
                    js_ms(mr, "api.project(V, {$path: 'results', $items: {$omit: ['summary']}})", 1),
                )
            )
        mr.eval("TEXT = undefined; V = undefined; ROWS = undefined;")
    width = max(len(name) for name, _ in rows)
    for name, ms in rows:
        print(f"{name:<{width}}  {ms:9.1f} ms")


if __name__ == "__main__":
    main()
