"""One hostile line must not break the cells after it: a cell may replace any built-in it likes, and
that changes what its own code does, never how the kernel runs, reports or shows later cells.

Each line runs in a fresh Session (engine, display and API; no servers), then a battery of
ordinary cells must give exactly their ordinary results.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import ECHO, SessionHarness

HOSTILE = [
    "Object.prototype.toJSON = () => 1",
    "Array.prototype.toJSON = () => 1",
    "JSON.stringify = () => 'x'",
    "JSON.parse = () => null",
    "Array.prototype.push = null",
    "Array.prototype.map = () => { throw new Error('map') }",
    "Array.prototype.join = null",
    "Array.prototype.slice = null; Array.prototype.filter = null; Array.prototype.some = null; Array.prototype.every = null",
    "String.prototype.split = null; String.prototype.replace = null; String.prototype.slice = null; String.prototype.repeat = null",
    "Promise.prototype.then = () => { throw new Error('then') }",
    "globalThis.Promise = null",
    "globalThis.__mcp2repl = null",
    "__mcp2repl.run = null",
    "Object.keys = null; Object.entries = null; Object.defineProperty = null; Object.getOwnPropertyDescriptor = null",
    "globalThis.Error = null; globalThis.TypeError = null",
    "globalThis.String = null; globalThis.Number = null",
    "globalThis.Map = null; globalThis.Set = null",
    "Map.prototype.get = () => undefined; Map.prototype.set = () => null; Set.prototype.add = null",
    "Symbol.for = () => Symbol('x')",
    "Reflect.apply = null; Function.prototype.call = null; Function.prototype.apply = null",
    "Math.max = null; Date.now = () => NaN",
    "globalThis.setTimeout = null; globalThis.sleep = null",
    "Object.getPrototypeOf(Promise.prototype).then = function () {}; Promise.prototype.then = function () {}",
    "Object.defineProperty(Object.getPrototypeOf(Promise), Symbol.species, { get() { throw new Error('species') } })",
    "Array.prototype[Symbol.iterator] = function* () {}",
    "Atomics.compareExchange = null; Atomics.wait = null; Atomics.store = null; Reflect.construct = null; globalThis.Symbol = null",
]
#: Every object a thenable: the battery still works (tests/test_prototype_hooks.py has these with tool
#: calls, timers and displays), but a cell that awaits an object, as the all-at-once test does, gets
#: what JavaScript gives it.
THEN_HOOKS = [
    "Object.prototype.then = function () {}",
    "Object.defineProperty(Object.prototype, 'then', { get() { return (res) => res(13) }, configurable: true })",
    "Object.defineProperty(Object.prototype, 'then', { get() { throw new Error('then') }, configurable: true })",
    "Array.prototype.then = function () {}; Function.prototype.then = function () {}",
]

#: (code, expected text/plain of its result) after the hostile line; `sleep` and `setTimeout` are
#: globals a cell may replace, so the timers check uses the runtime's own promise of a timer.
BATTERY = [
    ("1 + 1", "2"),
    ("({ a: [1, 'x'], b: null })", "{ a: [ 1, 'x' ], b: null }"),
    ("await (async () => 'awaited')()", "'awaited'"),
    ("[1, 2, 3].length", "3"),
    ("`${40 + 2}`", "'42'"),
]


@pytest.mark.parametrize("line", HOSTILE + THEN_HOOKS)
def test_later_cells_work_after(line: str, tmp_path: Path) -> None:
    s = SessionHarness(tmp_path, {"mcpServers": {}})
    try:
        s.run(line)
        for code, expected in BATTERY:
            result, _ = s.run(code)
            assert result.error is None, (line, code, result.error.traceback)
            assert result.data["text/plain"] == expected, (line, code)
        result, _ = s.run("null.x")
        assert result.error.name == "TypeError" and result.error.message.startswith("Cannot read properties of null"), line
        result, out = s.run("console.log('hi', [1]); 2")
        assert result.data["text/plain"] == "2"
        assert out.text() == "hi [ 1 ]\n" or line.startswith("globalThis.String"), (line, out.streams)
        result, _ = s.run("const r = Array.from({ length: 3000 }, (_, i) => ({ i })); r")  # too big: fitted, saved
        assert "full value: artifact" in result.data["text/plain"], line
    finally:
        s.close()


def test_json_results_keep_their_shape_after_json_is_replaced(tmp_path: Path) -> None:
    s = SessionHarness(tmp_path, {"mcpServers": {}})
    try:
        s.run("JSON.stringify = () => 'x'; JSON.parse = () => null; Object.prototype.toJSON = () => 'y'")
        assert s.json("({ n: 1, list: [true, 'a'] })") == {"n": 1, "list": [True, "a"]}
        result, out = s.run("await api.print([{ id: 'a' }])")
        assert out.displays[0][0]["text/plain"] == "id\n──\na"
    finally:
        s.close()


def test_tool_calls_work_after_every_hostile_line_at_once(tmp_path: Path) -> None:
    s = SessionHarness(tmp_path, {"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}})
    try:
        for line in HOSTILE:
            s.run(line)
        assert s.value("await mcp.echo.add({ a: 1, b: 2 })") == "{ sum: 3 }"
        assert s.value("(await tools.call('echo.add', { a: 'x', b: 1 })).ok") == "false"
        result, _ = s.run("await mcp.echo.fail({ message: 'nope' })")
        assert (result.error.name, result.error.message) == ("ToolError", "nope")
        for code, expected in BATTERY:
            assert s.value(code) == expected, code
    finally:
        s.close()
