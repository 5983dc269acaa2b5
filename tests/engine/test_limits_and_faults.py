"""Cells that used to hang or break the engine: huge delays, deep values, runaway microtasks,
out-of-memory stops, and messages Python could not handle. Each outcome belongs to its own cell."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import EngineHarness


def test_huge_delays_are_clamped_like_node(js: EngineHarness) -> None:
    assert js.value("await sleep(1e400); 'woke'") == "'woke'"
    assert js.value("await new Promise((r) => setTimeout(() => r('timeout'), Infinity))") == "'timeout'"
    assert js.value("let n = 0; const id = setInterval(() => n++, Infinity); await sleep(30); clearInterval(id); n > 0") == "true"
    assert js.value("await new Promise((r) => setTimeout(() => r('negative'), -5))") == "'negative'"
    warnings = js.sink.text("stderr")
    assert "TimeoutOverflowWarning: Infinity does not fit into a 32-bit signed integer.\nTimeout duration was set to 1.\n" in warnings


def test_deep_values_come_back_as_text(js: EngineHarness) -> None:
    out = js.run("let a = []; for (let i = 0; i < 1500; i++) a = [a]; a")
    assert out.error is None and set(out.data) == {"text/plain"}
    assert "[Array]" in out.data["text/plain"]
    err = js.error("let b = {}; for (let i = 0; i < 1500; i++) b = { b }; await __mcp2repl.call('x', b)")
    assert (err.name, err.message) == ("TypeError", "Cannot send a value nested more than 200 levels deep to x")
    assert js.value("1 + 1") == "2"


def test_a_message_python_cannot_handle_fails_its_cell(js: EngineHarness) -> None:
    async def broken(args: dict, ctx: object) -> None:
        return None

    js.engine.register("broken", broken)
    js.engine.bridge._arm = lambda *a: (_ for _ in ()).throw(ValueError("no clock"))  # type: ignore[method-assign]
    err = js.error("setTimeout(() => {}, 5); await sleep(10)")
    assert (err.name, err.message) == ("InternalError", 'mcp2repl could not handle a "timer" message (ValueError: no clock)')


def test_a_microtask_loop_is_stopped_without_a_rebuild(js: EngineHarness) -> None:
    js.value("const kept = 'kept'")
    timer = threading.Timer(0.3, js.engine.interrupt)
    timer.start()
    err = js.error("const spin = () => queueMicrotask(spin); spin(); await new Promise(() => {})")
    assert err.name == "InterruptError"
    assert js.engine.rebuilds == 0
    assert js.value("kept") == "'kept'"
    timer = threading.Timer(0.3, js.engine.interrupt)
    timer.start()
    err = js.error("const again = () => Promise.resolve().then(again); again(); await new Promise(() => {})")
    assert err.name == "InterruptError" and js.engine.rebuilds == 0


def test_out_of_memory_frees_the_cells_names_and_the_next_cell_runs() -> None:
    js = EngineHarness(heap_limit_mb=128)
    try:
        js.value("const small = 'still here'")
        err = js.error("const hog = []; while (true) hog.push(new Array(1e5).fill(1.5))")
        assert err.name == "RangeError"
        assert err.message == (
            "JavaScript heap out of memory: the cell needed more than the 128 MB heap limit and was stopped. "
            "Its top-level names (hog) were set to undefined to free the memory; if memory stays short, set large globals to null "
            "(or restart the kernel)"
        )
        assert js.value("typeof hog") == "'undefined'"
        assert js.value("const room = new Array(5e6).fill(1.5); room.length") == "5000000"  # the memory is back
        assert js.value("small") == "'still here'"
    finally:
        js.close()


def test_time_limit_then_heap_limit_each_on_its_own_cell() -> None:
    js = EngineHarness(heap_limit_mb=128)
    try:
        for _ in range(3):
            js.value("const before = 'kept'")
            err = js.error("await null; while (true) {}", timeout=1)
            assert (err.name, err.message) == ("TimeoutError", "Cell time limit reached")
            err = js.error("const hog2 = []; while (true) hog2.push(new Array(1e5).fill(1.5))", timeout=30)
            assert err.name == "RangeError", err.traceback
            started = time.monotonic()
            assert js.value("before") == "'kept'"
            assert time.monotonic() - started < 30
        assert js.value("'done'") == "'done'"
    finally:
        js.close()


def test_unhandled_rejections_are_reported_like_node(js: EngineHarness) -> None:
    assert js.value("Promise.reject(new RangeError('x')); 1") == "1"
    assert js.sink.text("stderr", "cell[1]") == "Uncaught (in promise) RangeError: x\n  at cell[1] line 1, col 16\n    Promise.reject(new RangeError('x')); 1\n                   ^\n"
    assert js.value("const p = Promise.reject(new Error('handled')); await p.catch(() => 0); 2") == "2"
    assert js.value("new Promise((_, reject) => reject(new Error('no'))).then(() => 1).catch(() => 0); 3") == "3"
    assert js.sink.text("stderr", "cell[2]") == js.sink.text("stderr", "cell[3]") == ""
    # a rejection after its cell ended is told on the next cell
    js.value("setTimeout(() => Promise.reject(new Error('late')), 10); 4")
    time.sleep(0.3)
    js.value("5")
    assert js.sink.text("stderr", "cell[5]").startswith("[mcp2repl] from cell[4]: Uncaught (in promise) Error: late")
    assert js.value("(async () => 1)() instanceof Promise") == "true"


@pytest.mark.parametrize(
    "code",
    ["Promise.reject(new Proxy([], { get() { throw 2 } }))", "Promise.reject(new Proxy({}, { get() { throw 2 }, getPrototypeOf() { throw 3 } })); 1"],
    ids=["the-cells-value", "unhandled"],
)
def test_a_rejection_with_a_hostile_proxy_is_a_users_error(js: EngineHarness, code: str) -> None:
    """Found by scripts/fuzz.sh: reading a Proxy's `stack` to describe it threw, and the cell ended
    with "InternalError: the cell could not be started: JSEvalException … 2"."""
    out = js.run(code)
    assert out.error is None or out.error.name == "Uncaught", out.error.traceback
    assert "InternalError" not in js.sink.text("stderr", f"cell[{js.count}]")
    assert js.value("40 + 2") == "42"
