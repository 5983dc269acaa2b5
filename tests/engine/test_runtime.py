"""The engine without Jupyter: cell semantics, output, timers, errors, interrupts and limits."""

from __future__ import annotations

import time

import pytest
from conftest import EngineHarness


def test_last_expression_is_the_result(js):
    assert js.value("1 + 1") == "2"
    assert js.value("1 + 1;") == "2"  # a trailing semicolon does not hide it
    assert js.value("const a = 3") is None
    assert js.value("undefined") is None
    assert js.value("{a: 1}") == "{ a: 1 }"
    assert js.value("'x' // trailing comment") == "'x'"
    assert js.value("let q = 2\nq * 21") == "42"


def test_return_and_top_level_await(js):
    assert js.value("return 5") == "5"
    assert js.value("const v = await Promise.resolve(7); return v + 1") == "8"
    assert js.value("if (true) { return 'early' }\n'late'") == "'early'"


def test_declarations_persist_and_can_be_redeclared(js):
    js.value("const x = 1; let y = 2; var z = 3; function f() { return x + y + z } class C { m() { return 'm' } }")
    assert js.value("f()") == "6"
    assert js.value("new C().m()") == "'m'"
    js.value("const x = 10")  # re-running a const declaration works
    assert js.value("f()") == "15"
    js.value("const {a, b: [c], d = 4} = {a: 1, b: [2]}")
    assert js.value("[a, c, d]") == "[ 1, 2, 4 ]"
    js.value("class C { m() { return 'new' } }")
    assert js.value("new C().m()") == "'new'"


def test_block_and_loop_declarations_stay_local(js):
    js.value("for (let i = 0; i < 2; i++) { const inner = i }\n{ let blockLocal = 1 }")
    assert js.value("typeof i + ' ' + typeof inner + ' ' + typeof blockLocal") == "'undefined undefined undefined'"


def test_var_without_initializer_keeps_value(js):
    js.value("var keep = 5")
    js.value("var keep")
    assert js.value("keep") == "5"


def test_function_hoisting_within_cell(js):
    assert js.value("const r = g(); function g() { return 'hoisted' }\nr") == "'hoisted'"


def test_console_streams(js):
    js.value("console.log('a %s b %d', 'x', 42, {k: [1]}); console.error('bad'); console.warn('w'); console.info('i')")
    assert js.sink.text("stdout") == "a x b 42 { k: [ 1 ] }\ni\n"
    assert js.sink.text("stderr") == "bad\nw\n"


def test_timers(js):
    js.value(
        "globalThis.seen = []; setTimeout(() => seen.push('t0')); setTimeout(() => seen.push('t10'), 10); const h = setTimeout(() => seen.push('never'), 5); clearTimeout(h)"
    )
    assert js.value("await sleep(50); seen") == "[ 't0', 't10' ]"
    js.value("globalThis.n = 0; const iv = setInterval(() => { if (++n === 3) clearInterval(iv) }, 1)")
    assert js.value("await sleep(60); n") == "3"
    assert js.value("await new Promise(r => setTimeout(v => r(v), 0, 'arg'))") == "'arg'"
    assert js.value("let order = []; queueMicrotask(() => order.push('micro')); await null; order") == "[ 'micro' ]"


def test_output_of_timers_goes_to_the_cell_that_started_them(js):
    js.value("setTimeout(() => console.log('late'), 20)")
    js.value("await sleep(80)")
    assert ("cell[1]", "stdout", "late\n") in js.sink.streams


def test_errors_name_message_and_cell_frames(js):
    js.value("function boom(o) {\n  return o.x.y\n}")
    err = js.error("boom({})")
    assert err.name == "TypeError"
    assert err.message == "Cannot read properties of undefined (reading 'y')"
    assert err.traceback[0] == "TypeError: Cannot read properties of undefined (reading 'y')"
    assert "  at cell[1] line 2, col 14, in boom" in err.traceback
    assert "    return o.x.y" in err.traceback
    assert "  at cell[2] line 1, col 1" in err.traceback


def test_syntax_errors_name_line_and_column(js):
    err = js.error("const ok = 1\nlet z = ;")
    assert err.name == "SyntaxError"
    assert err.traceback[:2] == ["SyntaxError: Unexpected token ';'", "  at cell[1] line 2, col 9"]
    err = js.error("function f() { await 1 }")
    assert err.name == "SyntaxError"
    assert "await is only valid in async functions" in err.message
    err = js.error("import fs from 'fs'")
    assert err.message.startswith("'import' is not available")


@pytest.mark.parametrize(
    ("code", "where", "excerpt"),
    [
        ("function f(x) {", "line 1, col 16", ["    function f(x) {", "                   ^"]),
        ("foo(", "line 1, col 5", ["    foo(", "        ^"]),
        ("const a = ", "line 1, col 10", ["    const a =", "             ^"]),
        ("let x = [1,\n  2,\n\n", "line 2, col 5", ["    2,", "      ^"]),
        ("`abc", "line 1, col 5", ["    `abc", "        ^"]),
    ],
)
def test_incomplete_input_ends_where_the_user_stopped(js, code, where, excerpt):
    """Regression: V8 blamed the wrapper's closing brackets, on a line the user never wrote."""
    err = js.error(code)
    assert err.traceback == ["SyntaxError: Unexpected end of input", f"  at cell[1] {where}", *excerpt]


def test_thrown_non_errors(js):
    err = js.error("throw 'plain string'")
    assert (err.name, err.message) == ("Uncaught", "'plain string'")
    err = js.error("await Promise.reject(new RangeError('r'))")
    assert (err.name, err.message) == ("RangeError", "r")


def test_values_that_are_hard_to_show(js):
    assert js.value("10n ** 30n") == "1000000000000000000000000000000n"
    assert js.value("[-0, NaN, Infinity]") == "[ -0, NaN, -Infinity ]".replace("-Infinity", "Infinity")
    assert js.value("new Map([['a', 1]])") == "Map(1) { 'a' => 1 }"
    assert js.value("new Set([1])") == "Set(1) { 1 }"
    assert js.value("Symbol('s')") == "Symbol(s)"
    assert js.value("const circ = {}; circ.self = circ; circ") == "<ref *1> { self: [Circular *1] }"
    assert js.value("new Uint8Array([1, 2])") == "Uint8Array(2) [ 1, 2 ]"
    assert js.value("new Date(0)") == "1970-01-01T00:00:00.000Z"
    assert js.value("(function named() {})") == "[Function: named]"
    out = js.run("({a: [1, 'x'], b: null})")
    assert out.data == {"text/plain": "{ a: [ 1, 'x' ], b: null }", "application/json": {"a": [1, "x"], "b": None}}


def test_bare_engine_results_are_text_and_json(js):
    """Without the display layer a value's own Jupyter.display is not consulted: the engine knows no display."""
    out = js.run("({ a: 1, [Symbol.for('Jupyter.display')]() { return {'text/html': '<b>hi</b>'} } })")
    assert out.data == {"text/plain": "{ a: 1, [Symbol(Jupyter.display)]: [Function: [Jupyter.display]] }"}


def test_web_globals_exist(js):
    assert (
        js.value(
            "[typeof structuredClone, typeof TextEncoder, typeof TextDecoder, typeof URL, typeof URLSearchParams, typeof atob, typeof btoa, typeof queueMicrotask].every(t => t === 'function')"
        )
        == "true"
    )
    assert js.value("new URL('https://a.b/c?d=1').searchParams.get('d')") == "'1'"
    assert js.value("new TextDecoder().decode(new TextEncoder().encode('héllo'))") == "'héllo'"


def test_no_way_out_of_the_sandbox(js):
    assert (
        js.value("[typeof require, typeof process, typeof fetch, typeof Deno]") == "[ 'undefined', 'undefined', 'undefined', 'undefined' ]"
    )


@pytest.mark.parametrize(
    "code",
    [
        "while (true) {}",
        "await null; while (true) {}",
        "await sleep(1); for (;;) {}",
        "await sleep(100000)",
        "function spin() { while (true) {} } spin()",
        "setTimeout(() => { while (true) {} }, 5); await sleep(100000)",
        "[1].forEach(() => { for (;;) {} })",
    ],
)
def test_interrupt_stops_any_spin_and_keeps_globals(js, code):
    js.value("const survivor = 'kept'")
    timer = js.interrupt_after(0.3)
    started = time.monotonic()
    err = js.error(code)
    elapsed = time.monotonic() - started
    timer.join()
    assert err.name == "InterruptError"
    assert elapsed < 10  # the spin never ends by itself: any bound proves the interrupt landed
    assert js.value("survivor") == "'kept'"
    assert js.engine.rebuilds == 0


def test_interrupt_in_function_defined_in_earlier_cell(js):
    js.value("function busy() { let i = 0; while (true) { i++ } }")
    js.interrupt_after(0.3)
    err = js.error("busy()")
    assert err.name == "InterruptError"
    assert "in busy" in err.traceback[1]


def test_idle_interrupt_is_harmless(js):
    js.value("const still = 1")
    js.engine.interrupt()
    time.sleep(0.05)
    assert js.value("still + 1") == "2"


def test_uninstrumented_spin_rebuilds_context_with_notice(js):
    js.value("const lost = 1")
    js.interrupt_after(0.3)
    started = time.monotonic()
    err = js.error("/(a+)+b/.test('a'.repeat(40))")
    assert time.monotonic() - started < 60, "the spin was not stopped within 60 s"
    assert err.name == "InterruptError"
    assert "all globals were lost" in err.traceback[-1]
    assert js.engine.rebuilds == 1
    assert js.value("typeof lost") == "'undefined'"
    assert js.value("1 + 1") == "2"


def test_time_limit(js):
    js.value("const t = 1")
    err = js.error("await null; while (true) {}", timeout=0.3)
    assert (err.name, err.message) == ("TimeoutError", "Cell time limit reached")
    err = js.error("await sleep(5000)", timeout=0.2)
    assert err.name == "TimeoutError"
    assert js.value("t") == "1"


def test_heap_limit():
    js = EngineHarness(heap_limit_mb=128)
    try:
        js.value("const small = 'still here'")
        err = js.error("const hog = []; while (true) hog.push(new Array(1e5).fill(1.5))")
        assert err.name == "RangeError"
        assert "heap out of memory" in err.message
        assert js.value("small") == "'still here'"
        err = js.error("globalThis.hog2 = []; await null; while (true) hog2.push(new Array(1e5).fill(1.5))")
        assert err.name == "RangeError"
        assert js.value("hog2 = null; small") == "'still here'"
    finally:
        js.close()


def test_python_handlers_round_trip(js):
    from mcp_kernel.engine import BridgeError

    async def double(args, ctx):
        return {"twice": args["n"] * 2, "cell": ctx.cell}

    async def refuse(args, ctx):
        raise BridgeError("ToolError", "nope", server="s1")

    js.engine.register("double", double)
    js.engine.register("refuse", refuse)
    assert js.value("await __mcp2repl.call('double', {n: 21})") == "{ twice: 42, cell: 'cell[1]' }"
    assert js.value("(await Promise.all([1, 2, 3].map(n => __mcp2repl.call('double', {n})))).map(r => r.twice)") == "[ 2, 4, 6 ]"
    err = js.error("await __mcp2repl.call('refuse', {})")
    assert (err.name, err.message, err.extra) == ("ToolError", "nope", {"server": "s1"})
    err = js.error("await __mcp2repl.call('double', {n: 1n})")
    assert err.name == "TypeError" and "BigInt" in err.message


def test_huge_output_is_capped_not_fatal(js):
    js.value("for (let i = 0; i < 200000; i++) console.log('x'.repeat(100))")
    total = len(js.sink.text("stdout"))
    assert total <= 8 * 1024 * 1024 + 1000
    assert "characters of output were dropped" in js.sink.text("stderr")
    assert js.value("1") == "1"


def test_stacks_show_the_users_positions_and_no_runtime_frames(js):
    """Regression: inspected errors showed rewritten positions and the runtime's frames (mcp2repl/…)."""
    assert js.value("new Error('plain')") == "Error: plain\n    at cell[1]:1:1"
    assert js.value("function boom() {\n  return new Error('in boom')\n}\nboom()") == (
        "Error: in boom\n    at boom (cell[2]:2:10)\n    at cell[2]:4:1"
    )
    # a declaration is rewritten (`const` becomes a global assignment): the column is still the user's
    assert js.value("const e = new Error('x'); e.stack") == "'Error: x\\n    at cell[3]:1:11'"
    shown = js.value("await Promise.allSettled([(async () => { await null; throw new TypeError('t') })()])")
    assert "mcp2repl/" not in shown and "__mcp2repl" not in shown
    assert shown == "[\n  {\n    status: 'rejected',\n    reason: TypeError: t\n        at cell[4]:1:60\n  }\n]"
    # the kernel's traceback agrees with e.stack
    err = js.error("function f() { throw new RangeError('r') }\nf()")
    assert err.traceback == ["RangeError: r", "  at cell[5] line 1, col 22, in f", "    function f() { throw new RangeError('r') }", "                         ^", "  at cell[5] line 2, col 1", "    f()", "    ^"]


def test_scripts_load_as_one_and_a_missing_semicolon_does_not_join_two_files():
    """The runtime and the added scripts are evaluated as one script (context.joined_scripts): a
    file ending without a semicolon must not run into a next one that starts with a parenthesis."""
    from conftest import Recorder, _Loop

    from mcp_kernel.engine import Engine
    from mcp_kernel.engine.context import joined_scripts

    assert joined_scripts([("a.js", "x = 1"), ("b.js", "(0)")]).endswith("\n//# sourceURL=mcp2repl/runtime.js")
    loop = _Loop()
    engine = Engine(Recorder())
    engine.add_script("first.js", "globalThis.first = 1 // ends in a comment, no semicolon")
    engine.add_script("second.js", "(function () { globalThis.second = first + 1 })()")
    try:
        loop.call(engine.start())
        out = loop.call(engine.run_cell("[first, second]", "cell[1]"))
        assert out.error is None and out.data["text/plain"] == "[ 1, 2 ]"
        out = loop.call(engine.run_cell("new Error('e').stack", "cell[2]"))
        assert "runtime.js" not in out.data["text/plain"] and "mcp2repl/" not in out.data["text/plain"]
    finally:
        loop.call(engine.close())
        loop.stop()
