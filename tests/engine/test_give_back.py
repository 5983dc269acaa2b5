"""Between cells V8 gives back the memory a cell's garbage took (engine.give_back_memory, gc_tuning).

Real V8: a cell builds and drops some 40 MB of objects; after the give-back the heap V8 holds is
back near where it started, and the globals and the next cell are untouched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from conftest import EngineHarness

MB = 1 << 20
GARBAGE = "{ let junk = []; for (let i = 0; i < 400000; i++) junk.push({ i, s: 'x' + i }); junk.length }"


@pytest.fixture
def js() -> Iterator[EngineHarness]:
    harness = EngineHarness()
    yield harness
    harness.close()


def held(js: EngineHarness) -> int:
    return int(js.engine._v8._racer.heap_stats()["total_heap_size"])  # type: ignore[union-attr]


def test_the_heap_a_cell_grew_is_given_back_and_its_globals_stay(js: EngineHarness) -> None:
    js.value("globalThis.kept = { n: 42 }; 1")
    start = held(js)
    assert js.value(GARBAGE) == "400000"
    grown = held(js)
    assert grown > start + 20 * MB
    assert js.call(js.engine.give_back_memory(64 * MB, lambda: True)) is True
    assert held(js) < start + 4 * MB
    assert js.value("kept.n") == "42"


def used(js: EngineHarness) -> int:
    return int(js.engine._v8._racer.heap_stats()["used_heap_size"])  # type: ignore[union-attr]


def test_garbage_past_the_bound_is_collected_when_little_was_alive(js: EngineHarness) -> None:
    """What is in use counts garbage: big cells' dropped texts grew it past the bound, and nothing was ever given back."""
    bound = used(js) + 16 * MB  # more than was alive after the runtime's start, and a quarter of the heap in use
    start = held(js)
    assert js.value(GARBAGE) == "400000"
    assert used(js) > bound, "the cell's garbage was collected before the give-back: nothing to test"
    assert js.call(js.engine.give_back_memory(bound, lambda: True)) is True
    assert held(js) < start + 4 * MB
    assert js.value("1 + 1") == "2"


def test_no_collection_once_a_cell_began_meanwhile(js: EngineHarness) -> None:
    """``quiet()`` is asked in the thread right before the collection (a cell binding its data counts)."""
    assert js.value(GARBAGE) == "400000"
    grown = held(js)
    assert js.call(js.engine.give_back_memory(64 * MB, lambda: False)) is False
    assert held(js) >= grown - 2 * MB


def test_a_closed_quiet_gives_nothing_back_even_for_a_cell_that_ends_later(js: EngineHarness) -> None:
    from mcp_kernel import gc_tuning

    async def run() -> tuple[bool, bool]:
        quiet = gc_tuning.Quiet(js.engine)
        quiet.cell_started()
        during = quiet.quiet()
        await quiet.close()
        quiet.cell_ended()  # the closing engine ended the running cell
        return during, quiet._timer is None and not quiet.quiet()

    assert js.call(run()) == (False, True)


def test_a_heap_over_the_bound_is_left_to_v8(js: EngineHarness) -> None:
    js.value("globalThis.big = Array.from({ length: 300000 }, (_, i) => ({ i })); big.length")
    grown = held(js)
    assert js.call(js.engine.give_back_memory(1 * MB, lambda: True)) is False
    assert held(js) >= grown - 2 * MB  # nothing was collected here
    assert js.value("big.length") == "300000"


def test_a_live_heap_mistaken_for_garbage_is_collected_once_then_left_to_v8(js: EngineHarness) -> None:
    """Within ``guess`` (4) times the bound, a heap that grew from little is collected once; found alive, it is left."""
    js.value("globalThis.big = Array.from({ length: 300000 }, (_, i) => ({ i })); big.length")
    bound = used(js) // 2
    assert js.call(js.engine.give_back_memory(bound, lambda: True)) is True
    assert js.call(js.engine.give_back_memory(bound, lambda: True)) is False
    assert js.value("big.length") == "300000"


def test_nothing_is_collected_while_a_cell_runs(js: EngineHarness) -> None:
    async def during() -> bool:
        cell = asyncio.ensure_future(js.engine.run_cell("await sleep(300); 7", "cell[1]"))
        while js.engine.current_cell is None:  # noqa: ASYNC110 - the engine signals nothing when a cell begins
            await asyncio.sleep(0.01)
        given = await js.engine.give_back_memory(64 * MB, lambda: True)
        outcome = await cell
        assert outcome.error is None and outcome.data["text/plain"] == "7"
        return given

    assert js.call(during()) is False
