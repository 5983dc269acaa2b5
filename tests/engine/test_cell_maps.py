"""A long session does not grow with the cells it ran (engine/cellmaps.py).

Every cell's source map used to be kept forever, in Python and in V8: some 10 KB a cell however
little it held (issue 28: 0.95 MB more anonymous memory after each 100 one-line steps). Now a cell
with no function or class, whose code cannot run once it ended, keeps its map for a few cells
more; a cell that defines code keeps it while that code may throw. Real V8 throughout.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
from pathlib import Path

from conftest import EngineHarness

from mcp_kernel.engine import cellmaps
from mcp_kernel.engine.rewrite import rewrite
from mcp_kernel.engine.sourcemap import SourceMap


def used_after_gc(js: EngineHarness) -> int:
    racer = js.engine._v8._racer  # type: ignore[union-attr]

    async def collect() -> int:
        racer.low_memory_notification()
        await asyncio.sleep(0.05)
        return int(racer.heap_stats()["used_heap_size"])

    return js.call(collect())


def test_the_v8_heap_stays_flat_over_a_thousand_plain_cells(js: EngineHarness) -> None:
    for i in range(100):
        js.value(f"return {i} + 1")
    before = used_after_gc(js)
    for i in range(1000):
        js.value(f"let x{i % 7} = {i}; x{i % 7} * 2")
    grown = used_after_gc(js) - before
    # before the fix: ~500 KB more (one map per cell in stacks.js); what remains is V8's own noise
    assert grown < 150_000, f"the heap grew {grown} bytes over 1,000 cells"


def test_plain_cells_keep_their_maps_only_for_a_few_cells_more(js: EngineHarness) -> None:
    for i in range(cellmaps.RECENT * 3):
        js.value(f"return {i} + 1")
    assert len(js.engine.maps) == cellmaps.RECENT
    assert list(js.engine.maps)[-1] == f"cell[{cellmaps.RECENT * 3}]"


def test_a_function_from_an_early_cell_still_throws_where_the_user_wrote_it(js: EngineHarness) -> None:
    js.value('const boom = (n) => { if (n > 0) throw new Error("deep " + n); return n }; 1')
    first = js.error("boom(1)").traceback
    for i in range(cellmaps.RECENT * 3):
        js.value(f"return {i}")
    later = js.error("boom(2)").traceback
    assert later[0] == "Error: deep 2"
    assert later[1:4] == first[1:4] == [
        "  at cell[1] line 1, col 40, in boom",
        '    const boom = (n) => { if (n > 0) throw new Error("deep " + n); return n }; 1',
        "                                           ^",
    ]
    # the JS side maps it too: e.stack as the cell sees it
    stack = js.value("try { boom(3) } catch (e) { e.stack.split('\\n')[1].trim() }")
    assert stack == "'at boom (cell[1]:1:40)'"


def test_an_error_kept_by_a_plain_cell_is_still_mapped_a_few_cells_later(js: EngineHarness) -> None:
    js.value('globalThis.kept = new Error("kept"); 1')
    for i in range(3):
        js.value(f"return {i}")
    assert js.value("kept.stack.split('\\n')[1].trim()") == "'at cell[1]:1:19'"


def test_a_plain_cell_is_told_apart_from_one_that_leaves_code_behind() -> None:
    assert not rewrite("let a = 1; for (let i = 0; i < 3; i++) a += i; a", "c").lasting
    assert not rewrite("return [1, 2].length", "c").lasting
    for code in ("const f = () => 1", "function g() {}", "({ get x() { return 1 } })", "class A { x = 1 }", "[1].map(function (v) { return v })"):
        assert rewrite(code, "c").lasting, code


def anonymous_mb() -> float:
    """This process's anonymous memory, after Python's collector and the C allocator gave back what they could."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    rollup = Path("/proc/self/smaps_rollup").read_text()
    return int(next(line.split()[1] for line in rollup.splitlines() if line.startswith("Anonymous:"))) / 1024


def test_big_plain_cells_do_not_stay_in_memory(js: EngineHarness) -> None:
    """A 3 MB cell's map quoted its text twice, kept for 32 cells: 200 MB after 32 such cells."""
    big = "return '" + "x" * (3 << 20) + "'.length"
    assert js.value(big) == str(3 << 20)
    used_after_gc(js)
    before = anonymous_mb()
    for _ in range(12):
        assert js.value(big) == str(3 << 20)
    used_after_gc(js)
    grown = anonymous_mb() - before
    assert grown < 24, f"{grown:.0f} MB more after 12 cells of 3 MB"
    kept = sum(len(line) + 1 for name in js.engine.maps for line in js.engine.maps[name].lines)
    assert kept <= cellmaps.RECENT_CHARS + len(big) + 1


def smap(text: str) -> SourceMap:
    return SourceMap(text)


def test_lasting_maps_are_kept_up_to_their_budgets_oldest_dropped_first() -> None:
    maps = cellmaps.CellMaps(recent=2, lasting_cells=3, lasting_chars=100)
    forgotten: list[str] = []
    for n in range(5):
        forgotten += maps.keep(f"f{n}", smap("x" * 10), lasting=True)
    assert list(maps) == ["f2", "f3", "f4"] and forgotten == ["f0", "f1"]
    forgotten = maps.keep("big", smap("y" * 95), lasting=True)
    assert list(maps) == ["big"] and forgotten == ["f2", "f3", "f4"]


def test_plain_maps_leave_the_window_and_a_cell_run_again_replaces_its_map() -> None:
    maps = cellmaps.CellMaps(recent=2, lasting_cells=10, lasting_chars=1000)
    assert maps.keep("a", smap("1"), lasting=False) == []
    assert maps.keep("f", smap("f"), lasting=True) == []
    assert maps.keep("b", smap("2"), lasting=False) == ["a"]
    assert maps.keep("c", smap("3"), lasting=False) == []  # f is lasting: it stays
    assert list(maps) == ["f", "b", "c"]
    again = smap("again")
    assert maps.keep("f", again, lasting=False) == ["b"]  # now plain, and the newest
    assert maps["f"] is again and list(maps) == ["c", "f"]
    assert maps.keep("d", smap("4"), lasting=False) == ["c"]
    assert maps.keep("e", smap("5"), lasting=False) == ["f"]


def test_plain_maps_are_kept_within_a_budget_of_characters_and_the_latest_always() -> None:
    maps = cellmaps.CellMaps(recent=10, lasting_cells=10, lasting_chars=1000, recent_chars=100)
    assert maps.keep("a", smap("a" * 59), lasting=False) == []
    assert maps.keep("f", smap("f" * 59), lasting=True) == ["a"]  # 120 characters: the oldest goes
    assert maps.keep("b", smap("b" * 500), lasting=False) == []  # f is lasting: out of the window, still kept
    assert list(maps) == ["f", "b"]
    assert maps.keep("c", smap("c" * 9), lasting=False) == ["b"]
    assert maps.keep("d", smap("d" * 9), lasting=False) == []
    assert list(maps) == ["f", "c", "d"]
