"""The bridge protocol through a real engine: requests, JSON text passed through once, notes, context data."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from conftest import EngineHarness

from mcp_kernel.engine import BridgeError, CallContext, JsonText


def test_handler_results_cross_as_data(js: EngineHarness) -> None:
    async def echo(args: dict, ctx: CallContext) -> object:
        return {"got": args, "cell": ctx.cell}

    async def text(args: dict, ctx: CallContext) -> JsonText:
        # JSON the handler already has as text is spliced in as it is: quotes, unicode and a
        # "__proto__" key arrive as data, never as code
        return JsonText(json.dumps({"s": 'a"b\u2028c', "__proto__": {"polluted": True}, "n": [1, 2.5]}, ensure_ascii=False))

    async def nothing(args: dict, ctx: CallContext) -> None:
        return None

    js.engine.register("echo", echo)
    js.engine.register("text", text)
    js.engine.register("nothing", nothing)
    assert js.value("await __mcp2repl.call('echo', { x: [1, 'é'] })") == "{ got: { x: [ 1, 'é' ] }, cell: 'cell[1]' }"
    assert js.value(
        "const t = await __mcp2repl.call('text', {}); [t.s === 'a\"b\\u2028c', Object.keys(t), Object.getPrototypeOf(t) === Object.prototype, ({}).polluted]"
    ) == "[ true, [ 's', '__proto__', 'n' ], true, undefined ]"
    assert js.value("typeof await __mcp2repl.call('nothing', {})") == "'undefined'"


def test_a_lone_result_goes_to_v8_at_once_and_results_settling_together_go_in_one_batch(js: EngineHarness, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pump's two ways: a small result with nothing else in flight (a sequential loop) is posted
    by ``_settle`` itself, a loop turn before a pump task could; results that settle together (a
    ``Promise.all``) still reach V8 as one batch, not one round trip each, and a big one goes by
    the pump too."""
    v8 = js.engine._v8
    assert v8 is not None
    batches: list[tuple[str, int]] = []  # (who posted it, how many items)
    post = v8.post_receive_then_drain

    def record(batch: str, *rest: object) -> object:
        batches.append((sys._getframe(1).f_code.co_name, len(json.loads(batch)["items"])))
        return post(batch, *rest)

    monkeypatch.setattr(v8, "post_receive_then_drain", record)
    gate = asyncio.Event()
    started: list[int] = []

    async def now(args: dict, ctx: CallContext) -> int:
        return args["i"]

    async def together(args: dict, ctx: CallContext) -> int:
        started.append(args["i"])
        if len(started) == 20:
            gate.set()
        await gate.wait()
        return args["i"]

    js.engine.register("now", now)
    js.engine.register("together", together)
    assert js.value("let sum = 0; for (let i = 0; i < 20; i++) sum += await __mcp2repl.call('now', { i }); sum") == "190"
    assert batches == [("_settle", 1)] * 20
    batches.clear()
    assert js.value("(await Promise.all(Array.from({ length: 20 }, (_, i) => __mcp2repl.call('together', { i })))).join()") == repr(",".join(map(str, range(20))))
    assert batches == [("receive_then_drain", 20)]
    batches.clear()
    assert js.value("(await __mcp2repl.call('now', { i: 'x'.repeat(70000) })).length") == "70000"
    assert batches == [("receive_then_drain", 1)]  # a big answer waits for the pump: joined at once it would be held twice


def test_big_string_arguments_reach_python_whole_and_nothing_stays_behind(js: EngineHarness, monkeypatch: pytest.MonkeyPatch) -> None:
    """A top-level string of 256 K characters or more is taken by Python as one string (not escaped
    into the outbox: an artifact's text); smaller and nested ones go inside the JSON as before."""
    got: list[dict] = []

    async def keep(args: dict, ctx: CallContext) -> object:
        got.append(args)
        return {k: len(v) if isinstance(v, str) else type(v).__name__ for k, v in args.items()}

    js.engine.register("keep", keep)
    drained: list[int] = []
    handle = js.engine.bridge.handle
    monkeypatch.setattr(js.engine.bridge, "handle", lambda text: (drained.append(len(text or "")), handle(text)))
    cell = "await __mcp2repl.call('keep', { data: 'é\"\\u2028'.repeat(100000), small: 'x', n: 1, also: 'y'.repeat(262144), nested: { s: 'z'.repeat(300000) } })"
    assert js.value(cell) == "{ data: 300000, small: 1, n: 'int', also: 262144, nested: 'dict' }"
    [args] = got
    assert 0 < max(drained) < 400_000  # the nested 300,000 characters went in the JSON; the other 562,144 did not
    assert args["data"] == 'é"\u2028' * 100000 and args["also"] == "y" * 262144 and args["nested"] == {"s": "z" * 300000}
    # each was handed over once: nothing is left for a later take
    assert js.value("[1, 2, 3, 4].map((id) => __mcp2repl.take.call(`${id}/data`) + __mcp2repl.take.call(`${id}/also`))") == "[ '', '', '', '' ]"


def test_garbage_is_collected_before_a_very_big_string_is_taken(js: EngineHarness) -> None:
    """A request that sets aside 8 M characters or more (an artifact of a big value) has V8 collect its
    garbage first: the parsed-and-dropped data of the cell is not in memory while the string is copied out."""
    used: list[int] = []

    async def heap(args: dict, ctx: CallContext) -> int:
        assert js.engine._v8 is not None and js.engine._v8._racer is not None
        used.append(int(js.engine._v8._racer.heap_stats()["used_heap_size"]))
        return len(args["data"])

    js.engine.register("heap", heap)
    garbage = "let junk = JSON.parse(JSON.stringify(Array.from({ length: 400000 }, (_, i) => ({ i, w: 'w' + i })))); junk = null"
    assert js.value(f"{garbage}; await __mcp2repl.call('heap', {{ data: 'x'.repeat(300000) }})") == "300000"
    assert js.value(f"{garbage}; await __mcp2repl.call('heap', {{ data: 'x'.repeat(9 << 20) }})") == str(9 << 20)
    small, big = used
    assert small > 30 << 20 and big < 30 << 20  # 400,000 dropped objects, still there / collected (the 9 MiB string is taken after)


def test_handler_errors_become_js_errors_at_the_call_site(js: EngineHarness) -> None:
    async def refuse(args: dict, ctx: CallContext) -> None:
        raise BridgeError("ToolError", "nope", server="s1")

    js.engine.register("refuse", refuse)
    err = js.error("let x = 1;\nawait __mcp2repl.call('refuse', {})")
    assert (err.name, err.message, err.extra) == ("ToolError", "nope", {"server": "s1"})
    assert err.traceback[1] == "  at cell[1] line 2, col 18"  # the call, not receive() in the runtime
    missing = js.error("await __mcp2repl.call('no_such_handler', {})")
    assert (missing.name, missing.message) == ("TypeError", "no Python handler named 'no_such_handler'")


def test_arguments_that_cannot_be_sent_fail_in_js(js: EngineHarness) -> None:
    err = js.error("await __mcp2repl.call('x', { big: 10n })")
    assert (err.name, err.message) == ("TypeError", "Cannot send a BigInt (10n) to x: convert it to a Number or String first")


def test_notes_reach_python_without_an_answer(js: EngineHarness) -> None:
    seen: list[tuple[object, str]] = []
    js.engine.register_note("seen", lambda args, ctx: seen.append((args, ctx.cell)))
    assert js.value("__mcp2repl.notify('seen', { n: 1 }); __mcp2repl.notify('unknown', {}); 'sent'") == "'sent'"
    assert seen == [({"n": 1}, "cell[1]")]


def test_context_data_reaches_receivers_now_and_after_a_rebuild(js: EngineHarness) -> None:
    async def send(value: object) -> None:  # on the engine's loop, as the Session does
        js.engine.set_data("limits", value)

    js.value("globalThis.got = []; __mcp2repl.onData('limits', (v) => got.push(v.max))")
    js.call(send({"max": 5}))
    assert js.value("await sleep(10); got") == "[ 5 ]"
    js.call(send(JsonText('{"max": 7}')))
    assert js.value("await sleep(10); got") == "[ 5, 7 ]"
    assert js.value("globalThis.late = []; __mcp2repl.onData('limits', (v) => late.push(v.max)); late") == "[ 7 ]"
    js.interrupt_after(0.3)
    assert "all globals were lost" in js.error("/(a+)+b/.test('a'.repeat(40))").traceback[-1]  # a rebuilt context…
    assert js.value("const again = []; __mcp2repl.onData('limits', (v) => again.push(v.max)); again") == "[ 7 ]"  # …has the data
