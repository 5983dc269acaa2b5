"""Memory outside the V8 heap is bounded by the heap limit (issue 22, item 7).

Before: 3.2 GB of ``Uint8Array``s passed ``MCP2REPL_HEAP_LIMIT_MB=256`` until the host's OOM killer
came. Now one allocation above the limit is refused where it is made (engine/js/buffers.js), and
what array buffers hold together is watched (engine/memory.py): past the limit after a full
collection, the code is stopped with a RangeError and the cell's globals holding it are forgotten.
Garbage is never blamed: a loop that allocates and drops far more than the limit runs to its end.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ECHO, EngineHarness, SessionHarness

LIMIT = "256 MB"
REFUSED = f"refused: one buffer may hold at most {LIMIT}, the heap limit (MCP2REPL_HEAP_LIMIT_MB bounds array buffers as it bounds the heap)"
STOPPED = (
    f"Memory limit reached: the cell's ArrayBuffers and typed arrays held more than the {LIMIT} limit "
    "(MCP2REPL_HEAP_LIMIT_MB bounds them as it bounds the heap) and it was stopped"
)
AFTER = "; if memory stays short, set large globals to null (or restart the kernel)"


@pytest.fixture(scope="module")
def small() -> Iterator[EngineHarness]:
    js = EngineHarness(heap_limit_mb=256)
    yield js
    js.close()


def test_held_buffers_past_the_limit_stop_the_cell_and_free_its_globals(small: EngineHarness) -> None:
    small.value("globalThis.survivor = { n: 42 }; 1")
    err = small.error("const keep = []; for (let i = 0; i < 50; i++) keep.push(new Uint8Array(64 << 20)); keep.length", timeout=300)
    assert (err.name, err.message) == ("RangeError", f"{STOPPED}. Its top-level names (keep) were set to undefined to free the memory{AFTER}")
    assert small.value("survivor.n") == "42"
    assert small.value("typeof keep") == "'undefined'"
    # the code may catch the error, but the cell still ends with it (like an interrupt), and again frees
    err = small.error("globalThis.k2 = []; let seen = 'no'; try { for (;;) k2.push(new Float64Array(8 << 20)) } catch (e) { seen = e.name }", timeout=300)
    assert (err.name, err.message) == ("RangeError", f"{STOPPED}. Its top-level names (seen) were set to undefined to free the memory{AFTER}")
    held = int(small.value("k2.length") or 0)
    assert 4 <= held <= 48, f"stopped with {held} x 64 MB held: not near the 256 MB limit"
    assert small.value("k2 = null; 'freed'") == "'freed'"  # what earlier cells hold can always be freed
    assert small.value("let q = 0; for (let i = 0; i < 3; i++) q += new Uint8Array(64 << 20).length; q") == str(3 * (64 << 20))


def test_garbage_churn_far_past_the_limit_is_not_stopped(small: EngineHarness) -> None:
    code = "let total = 0; for (let i = 0; i < 100; i++) { const a = new Uint8Array(64 << 20); a[i] = 1; total += a.length } total"
    assert small.value(code) == str(100 * (64 << 20))  # 6.4 GB allocated and dropped under a 256 MB limit
    assert small.value(code.replace("const a", "const b = new ArrayBuffer(32 << 20); const a")) == str(100 * (64 << 20))


def test_one_buffer_above_the_limit_is_refused_at_once(small: EngineHarness) -> None:
    err = small.error("new ArrayBuffer(1 << 30)")
    assert (err.name, err.message) == ("RangeError", f"An ArrayBuffer of 1024 MB {REFUSED}")
    assert small.value("new ArrayBuffer(200 << 20).byteLength") == str(200 << 20)  # within the limit: fine


#: Every way to a big buffer we could think of: each is refused at allocation or stopped by the total.
BYPASSES = [
    ("new SharedArrayBuffer(2 ** 30)", f"A SharedArrayBuffer of 1024 MB {REFUSED}"),
    ("new Uint8Array(2 ** 30)", f"A Uint8Array of 1024 MB {REFUSED}"),
    ("new Float64Array(2 ** 27)", f"A Float64Array of 1024 MB {REFUSED}"),
    ("new BigInt64Array(2 ** 27)", f"A BigInt64Array of 1024 MB {REFUSED}"),
    ("new Uint8Array({ length: 2 ** 30 })", f"A Uint8Array of 1024 MB {REFUSED}"),
    ("Uint8Array.from({ length: 2 ** 30 })", f"A Uint8Array of 1024 MB {REFUSED}"),
    ("Object.getPrototypeOf(Int8Array).from.call(Uint8Array, { length: 2 ** 30 })", f"A Uint8Array of 1024 MB {REFUSED}"),
    ("new DataView(new ArrayBuffer(2 ** 30))", f"An ArrayBuffer of 1024 MB {REFUSED}"),
    ("new Uint8Array(new ArrayBuffer(2 ** 30)).subarray(1)", f"An ArrayBuffer of 1024 MB {REFUSED}"),
    ("new (new Uint8Array(1).constructor)(2 ** 30)", f"A Uint8Array of 1024 MB {REFUSED}"),
    ("new (new Uint8Array(1).buffer.constructor)(2 ** 30)", f"An ArrayBuffer of 1024 MB {REFUSED}"),
    ("new (Object.getPrototypeOf(new Float32Array(1)).constructor)(2 ** 28)", f"A Float32Array of 1024 MB {REFUSED}"),
    ("new (Object.getOwnPropertyDescriptor(Uint8Array.prototype, 'constructor').value)(2 ** 30)", f"A Uint8Array of 1024 MB {REFUSED}"),
    ("Reflect.construct(Uint8Array, [2 ** 30], function Other() {})", f"A Uint8Array of 1024 MB {REFUSED}"),
    ("class Big extends Uint8Array {}; new Big(2 ** 30)", f"A Uint8Array of 1024 MB {REFUSED}"),
    ("new __mcp2repl.$.ArrayBuffer(2 ** 30)", f"An ArrayBuffer of 1024 MB {REFUSED}"),
    ("new ArrayBuffer(8).transfer(2 ** 30)", f"Transferring an ArrayBuffer of 1024 MB {REFUSED}"),
    ("new ArrayBuffer(8).transferToFixedLength(2 ** 30)", f"Transferring an ArrayBuffer of 1024 MB {REFUSED}"),
    ("new ArrayBuffer(8, { maxByteLength: 2 ** 30 })", f"A resizable ArrayBuffer of 1024 MB {REFUSED}"),
    ("new SharedArrayBuffer(8, { maxByteLength: 2 ** 30 })", f"A growable SharedArrayBuffer of 1024 MB {REFUSED}"),
    ("Uint8Array.fromBase64('QUFB'.repeat(100 << 20))", f"A Uint8Array of 300 MB {REFUSED}"),
    ("new TextEncoder().encode('\u20ac'.repeat(90 << 20))", f"A Uint8Array of 270 MB {REFUSED}"),
    ("const many = []; for (let i = 0; i < 40; i++) many.push(new SharedArrayBuffer(32 << 20))",
     f"A SharedArrayBuffer of 32 MB refused: SharedArrayBuffers already hold {LIMIT} of the {LIMIT} limit (MCP2REPL_HEAP_LIMIT_MB); set large buffers to null to free them"),
    ("const one = new Uint8Array(128 << 20); const copies = []; for (let i = 0; i < 40; i++) copies.push(structuredClone(one))", STOPPED),
    ("const slices = []; const src = new Uint8Array(128 << 20); for (let i = 0; i < 40; i++) slices.push(src.slice())", STOPPED),
    ("const grown = []; for (let i = 0; i < 40; i++) { const b = new ArrayBuffer(8, { maxByteLength: 128 << 20 }); b.resize(128 << 20); grown.push(b) }", STOPPED),
    ("const moved = []; for (let i = 0; i < 40; i++) moved.push(new ArrayBuffer(8).transfer(128 << 20))", STOPPED),
    # a length that grows after the wrapper read it: V8 allocates, then the total stops the traps' loop
    ("let n = 0; new Uint8Array(new Proxy({}, { get: (t, k) => (k === 'length' ? (n++ ? 2 ** 30 : 8) : undefined) }))", STOPPED),
]


@pytest.mark.parametrize(("code", "message"), BYPASSES, ids=[code[:60] for code, _ in BYPASSES])
def test_no_way_around_the_limit(small: EngineHarness, code: str, message: str) -> None:
    err = small.error(code, timeout=300)
    assert err.name == "RangeError", err.traceback
    assert err.message.startswith(message), err.message
    assert small.value("1 + 1") == "2"
    assert small.value("new Uint8Array(64 << 20).length") == str(64 << 20)  # nothing stays held


#: The wrappers are the constructors a cell knows: everything it does with them still works.
SAME = [
    ("new Uint8Array(4) instanceof Uint8Array && new Uint8Array(4) instanceof Object.getPrototypeOf(Uint8Array)", "true"),
    ("Uint8Array.prototype.constructor === Uint8Array && new ArrayBuffer(1).constructor === ArrayBuffer", "true"),
    ("[Uint8Array.name, Uint8Array.length, Uint8Array.BYTES_PER_ELEMENT, ArrayBuffer.name, typeof ArrayBuffer.isView]", "[ 'Uint8Array', 3, 1, 'ArrayBuffer', 'function' ]"),
    ("Uint8Array.from([1, 2, 3])", "Uint8Array(3) [ 1, 2, 3 ]"),
    ("Float64Array.of(1.5, 2)", "Float64Array(2) [ 1.5, 2 ]"),
    ("const buf = new ArrayBuffer(8); const v = new Uint8Array(buf, 2, 4); v[0] = 7; [v.length, new Uint8Array(buf)[2]]", "[ 4, 7 ]"),
    ("new Uint8Array(new Set([5, 6]))", "Uint8Array(2) [ 5, 6 ]"),
    ("new Uint8Array([1, 2, 3]).map((x) => x * 2).slice(1)", "Uint8Array(2) [ 4, 6 ]"),
    ("class Bytes extends Uint8Array { sum() { return this.reduce((a, b) => a + b, 0) } }; new Bytes([1, 2, 3]).sum()", "6"),
    ("new DataView(new ArrayBuffer(4)).getInt32(0)", "0"),
    ("structuredClone(new Uint16Array([1, 2]))", "Uint16Array(2) [ 1, 2 ]"),
    ("new TextDecoder().decode(new TextEncoder().encode('h\u00e9llo'))", "'h\u00e9llo'"),
    ("new TextEncoder().encode('x'.repeat(100 << 20)).length", str(100 << 20)),
    ("Uint8Array.fromBase64('AQID')", "Uint8Array(3) [ 1, 2, 3 ]"),
    ("const r = new ArrayBuffer(2, { maxByteLength: 16 }); r.resize(16); [r.byteLength, r.resizable]", "[ 16, true ]"),
    ("let e; try { Uint8Array(3) } catch (x) { e = x.message }; e", "\"Constructor Uint8Array requires 'new'\""),
    ("Object.prototype.toString.call(new Uint8ClampedArray(1))", "'[object Uint8ClampedArray]'"),
    ("[typeof WebAssembly, typeof Blob, typeof Response, typeof gc, typeof __mk$gc]", "[ 'undefined', 'undefined', 'undefined', 'undefined', 'undefined' ]"),
    ("__mk$L(2 ** 40) === 256 * 2 ** 20", "true"),  # the limit is set once, before any cell
]


@pytest.mark.parametrize(("code", "shown"), SAME, ids=[code[:60] for code, _ in SAME])
def test_the_wrapped_constructors_behave_as_before(small: EngineHarness, code: str, shown: str) -> None:
    assert small.value(code) == shown


def test_a_memory_stop_leaves_the_servers_and_earlier_globals(tmp_path: Path) -> None:
    s = SessionHarness(tmp_path, {"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}}, heap_limit_mb=256)
    try:
        assert s.value("(await mcp.echo.echo({ text: 'before' }))") == "'before'"
        s.value("globalThis.kept = 'earlier'; 1")
        result, _ = s.run("const bufs = []; for (let i = 0; i < 50; i++) bufs.push(new Uint8Array(64 << 20)); bufs.length", timeout=300)
        assert result.error is not None and result.error.name == "RangeError", result
        assert result.error.message == f"{STOPPED}. Its top-level names (bufs) were set to undefined to free the memory{AFTER}"
        assert s.value("(await mcp.echo.echo({ text: 'after' }))") == "'after'"
        assert s.value("kept") == "'earlier'"
    finally:
        s.close()
