"""Whatever a cell sets on the shared prototypes or globals, the runtime's own machinery keeps working.

`Object.prototype.then = function () {}` once made every later result, tool call, timer and display
hang: the runtime resolved its promises with plain objects, whose `then` a cell can set for all of
them. Each hook below runs in a fresh Session with the echo fixture server; the cells after it must
give exactly their ordinary results: a value, a promise as a value, a tool call and a tool error, a
timer, console output, a display, emit, and an interrupt and a time limit. The battery keeps to what
the runtime owns: a cell that awaits its own objects after hooking their `then` gets what JS gives it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ECHO, CellOutput, SessionHarness

#: Names the runtime reads or writes on its own objects and on descriptors, each a getter that throws.
GETTER_NAMES = [
    "extra", "isError", "structuredContent", "content", "observe", "raw", "timeout", "code", "data", "text", "cell",
    "items", "texts", "args", "apart", "paths", "wait", "depth", "mime", "metadata", "display_id", "update",
    "projection", "maxChars", "fit", "artifactName", "format", "auto", "size", "kind", "id", "ok", "error", "v",
    "name", "message", "stack", "get", "set", "value",
]  # fmt: skip
GETTERS = (
    f"for (const k of {GETTER_NAMES!r}) Object.defineProperty(Object.prototype, k,"
    " { __proto__: null, get() { throw new Error('getter ' + k) }, configurable: true })"
)
NATIVE_PROMISE = "Object.getPrototypeOf(Promise.prototype)"  # the global Promise is the runtime's subclass

HOOKS = [
    # `then` on every object, array and function: each is a thenable now
    "Object.prototype.then = function () {}",
    "Object.prototype.then = function (resolve) { resolve(13) }",
    "Object.defineProperty(Object.prototype, 'then', { get() { return (res) => res(13) }, configurable: true })",
    "Object.defineProperty(Object.prototype, 'then', { get() { throw new Error('then getter') }, configurable: true })",
    "Array.prototype.then = function () {}",
    "Function.prototype.then = function () {}",
    # promises: then, catch, finally, constructor, Symbol.species, the global
    "Promise.prototype.then = function () {}",
    f"{NATIVE_PROMISE}.then = function () {{}}",
    f"{NATIVE_PROMISE}.then = function () {{ throw new Error('then') }}",
    f"{NATIVE_PROMISE}.catch = null; {NATIVE_PROMISE}.finally = null; Promise.prototype.catch = null",
    f"{NATIVE_PROMISE}.constructor = function () {{}}",
    f"Object.defineProperty({NATIVE_PROMISE}, 'constructor', {{ get() {{ throw new Error('constructor') }} }})",
    f"{NATIVE_PROMISE}.constructor = Object; {NATIVE_PROMISE}.then = function () {{}}",
    "Object.defineProperty(Object.getPrototypeOf(Promise), Symbol.species, { get() { throw new Error('species') } })",
    "Object.defineProperty(Promise, Symbol.species, { get() { throw new Error('species') } })",
    "globalThis.Promise = function () {}; Promise.resolve = null",
    # iteration, Array species, descriptors, conversions, RegExp, stacks
    "Array.prototype[Symbol.iterator] = function* () {}",
    "Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({ done: true })",
    "Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())).next = () => ({ done: true })",
    "Object.defineProperty(Array, Symbol.species, { get() { throw new Error('species') } })",
    "Object.prototype.get = function () {}; Object.prototype.set = function () {}",
    "Object.prototype.value = 1; Object.prototype.writable = true; Object.prototype.enumerable = true",
    "Object.prototype.toString = () => { throw new Error('toString') }; Object.prototype.valueOf = () => { throw new Error('valueOf') }",
    "Object.prototype[Symbol.toPrimitive] = () => { throw new Error('toPrimitive') }",
    "Object.prototype.toJSON = () => 1",
    "RegExp.prototype.exec = () => null",
    "Object.defineProperty(RegExp.prototype, 'flags', { get() { throw new Error('flags') } })",
    "Error.prepareStackTrace = () => { throw new Error('prepare') }",
    # globals
    "globalThis.JSON = undefined; globalThis.Array = null; globalThis.Object = null; globalThis.Reflect = null; globalThis.Proxy = null; globalThis.Symbol = null",
    GETTERS,
]

#: (code, text/plain of its result) for the cells after a hook.
VALUES = [
    ("1 + 1", "2"),
    ("({ a: 1, b: [1, 'x'] })", "{ a: 1, b: [ 1, 'x' ] }"),
    ("[{ id: 1 }, { id: 2 }].length", "2"),
    ("(async () => 5)()", "5"),  # a promise as the value: its value is shown
    ("await mcp.echo.echo({ text: 'hi' })", "'hi'"),  # a tool call (a string: nothing of the cell's to look up)
    ("await sleep(1); 'slept'", "'slept'"),
]


def ordinary_cells_behave(s: SessionHarness, hook: str) -> None:
    """The battery: everything the runtime does for a cell, after ``hook``."""
    for code, expected in VALUES:
        result, _ = s.run(code)
        assert result.error is None, (hook, code, result.error.traceback)
        assert result.data["text/plain"] == expected, (hook, code, result.data)
    result, _ = s.run("await mcp.echo.fail({ message: 'nope' })")
    assert (result.error.name, result.error.message) == ("ToolError", "nope"), (hook, result.error)
    result, _ = s.run("null.x")
    assert result.error.name == "TypeError" and result.error.message.startswith("Cannot read properties of null"), hook
    result, out = s.run("setTimeout(() => console.log('tick', [1]), 0); await sleep(30); 7")
    assert (result.data["text/plain"], out.text()) == ("7", "tick [ 1 ]\n"), (hook, out.streams)
    result, out = s.run("api.display({ b: 2 }); emit([{ id: 'a' }]); 8")
    assert result.data["text/plain"] == "8", (hook, result.error and result.error.traceback)
    assert [d[0]["text/plain"] for d in out.displays] == ["{ b: 2 }", "id\n──\na"], hook
    result, _ = s.run("const r = []; for (let i = 0; i < 3000; i++) r[i] = { i }; r")  # too big: fitted, saved
    assert "full value: artifact" in result.data["text/plain"], hook
    stopper = threading.Timer(0.5, s.session.interrupt)
    stopper.start()
    result, _ = s.run("while (true) {}")
    stopper.cancel()
    assert result.error.name == "InterruptError", hook
    result = s.call(s.session.execute("for (;;) {}", CellOutput(), progress="off", time_limit=0.5), 60)
    assert result.error.name == "TimeoutError", hook
    result, _ = s.run("40 + 2")
    assert result.data["text/plain"] == "42", hook


@pytest.fixture(scope="module")
def echo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One echo server over streamable HTTP for every Session here: a process per hook would cost seconds each."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    log = tmp_path_factory.mktemp("echo") / "echo.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, ECHO, "--transport", "streamable-http", "--port", str(port)], stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, f"the echo server exited with {proc.returncode}:\n{log.read_text()}"
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, f"the echo server did not listen on port {port} within 90 s:\n{log.read_text()}"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(30)


def echo_session(tmp_path: Path, url: str) -> SessionHarness:
    # a cell time limit: a cell the hook broke ends with a TimeoutError to read, not a hung test
    s = SessionHarness(tmp_path, {"mcpServers": {"echo": {"url": url}}}, timeout=45.0)
    result, _ = s.run("(await api.servers({ wait: true }))[0].state", timeout=120)
    assert result.data == {"text/plain": "'ready'"}, f"the echo server did not connect: {result}"
    return s


@pytest.mark.parametrize("hook", HOOKS)
def test_the_runtime_keeps_working_after(hook: str, tmp_path: Path, echo_url: str) -> None:
    s = echo_session(tmp_path, echo_url)
    try:
        s.run(hook)
        ordinary_cells_behave(s, hook)
    finally:
        s.close()


def test_a_then_hook_set_and_deleted_leaves_javascript_as_it_was(tmp_path: Path, echo_url: str) -> None:
    s = echo_session(tmp_path, echo_url)
    try:
        s.run("Object.defineProperty(Object.prototype, 'then', { get() { return (res) => res(13) }, configurable: true })")
        # JS semantics where the cell awaits an object of its own: the hook answers
        assert s.value("await ({ a: 1 })") == "13"
        assert s.value("await mcp.echo.add({ a: 1, b: 2 })") == "13"
        # the cell's own thenable is still followed as JS would, a Promise's value shown
        assert s.value("({ then(resolve) { resolve(7) } })") == "7"
        assert s.value("Promise.resolve('p')") == "'p'"
        s.run("delete Object.prototype.then")
        assert s.value("await ({ a: 1 })") == "{ a: 1 }"
        assert s.value("await mcp.echo.add({ a: 1, b: 2 })") == "{ sum: 3 }"
        assert s.value("(await tools.call('echo.echo', { text: 'x' })).ok") == "true"
        ordinary_cells_behave(s, "(deleted)")
    finally:
        s.close()


def test_what_a_cell_returns_from_its_top_level_is_its_value(tmp_path: Path) -> None:
    s = SessionHarness(tmp_path, {"mcpServers": {}})
    try:
        s.run("Object.prototype.then = function () {}")
        cases: list[tuple[str, Any]] = [
            ("if (true) { return { a: 1 } }", "{ a: 1 }"),
            ("return /* first */ [1], [2]", "[ 2 ]"),
            ("label: { return (async () => 'x')() }", "'x'"),
            ("return", None),
            ("function f() { return { inner: true } }; f().inner", "true"),
        ]
        for code, expected in cases:
            result, _ = s.run(code)
            assert result.error is None, (code, result.error.traceback)
            assert (result.data or {}).get("text/plain") == expected, code
    finally:
        s.close()
