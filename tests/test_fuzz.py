"""Fuzzing, small in the suite and large in ``scripts/fuzz.sh``: random cells, configs and tool results.

Properties, whatever the input: a cell ends with a value or an error a JS user knows (never an
internal exception type), the next cell still runs, a config never stops the kernel (problems are
messages) and no configured secret appears in them, and any tool result a server can send is
unwrapped, shown or refused cleanly. Sizes come from FUZZ_CELLS, FUZZ_CONFIGS and FUZZ_RESULTS.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from conftest import SERVERS, SessionHarness
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_kernel.servers.config import load_config
from mcp_kernel.servers.secrets import Redactor

CELLS = int(os.environ.get("FUZZ_CELLS", "40"))
CONFIGS = int(os.environ.get("FUZZ_CONFIGS", "150"))
RESULTS = int(os.environ.get("FUZZ_RESULTS", "30"))
#: Errors a cell may end with: JavaScript's own, and the runtime's documented ones.
USER_ERRORS = {
    "Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError", "URIError", "EvalError", "AggregateError",
    "ToolError", "TimeoutError", "InterruptError", "ArtifactError", "PermissionError", "DataCloneError", "Uncaught",
    "InvalidCharacterError", "NotSupportedError",
}  # fmt: skip
def fuzz(examples: int) -> settings:
    """Fixed seeds in the suite (reproducible); FUZZ_RANDOM=1 for fresh inputs at scale."""
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), derandomize=os.environ.get("FUZZ_RANDOM") != "1")

# ---- cells ---------------------------------------------------------------------------------------

VALUES = st.sampled_from(
    [
        "1", "-0", "NaN", "Infinity", "1e400", "12345678901234567890n", "'x'", "'\\ud800'", "'a\\nb\"c'", "''",
        "'é😀'.repeat(3)", "'x'.repeat(100000)", "null", "undefined", "true", "[]", "[1, , 3]", "{}", "({ __proto__: null })",
        "({ ['__proto__']: 1 })", "new Map([[{}, 1]])", "new Set([1, 'a'])", "new Date(NaN)", "new Date(0)", "/a+/g",
        "Symbol('s')", "() => 1", "class A {}", "new (class B { get x() { throw 1 } })()", "new Uint8Array(5)",
        "new ArrayBuffer(3)", "new Error('e')", "Object.create(null)", "new Proxy({}, { ownKeys() { throw 1 } })",
        "new Proxy([], { get() { throw 2 } })", "(() => { const o = {}; o.o = o; return o })()",
        "(() => { let a = []; for (let i = 0; i < 300; i++) a = [a]; return a })()",
        "Array.from({ length: 3000 }, (_, i) => ({ i, s: 'w'.repeat(i % 50) }))", "Promise.resolve(1)", "globalThis",
        "({ toJSON() { throw 3 } })", "({ [Symbol.for('Jupyter.display')]() { return { 'text/html': 1 } } })",
        "({ [Symbol.for('Jupyter.display')]() { throw 4 } })", "new WeakMap()", "function* g() {}",
    ]
)  # fmt: skip
STATEMENTS = st.one_of(
    VALUES.map(lambda v: f"console.log({v})"),
    VALUES.map(lambda v: f"console.table({v})"),
    VALUES.map(lambda v: f"console.error('%o %s %d %j', {v}, {v}, {v}, {v})"),
    st.tuples(VALUES, st.integers(0, 3000)).map(lambda t: f"await api.print({t[0]}, {{ maxChars: {t[1]} }})"),
    VALUES.map(lambda v: f"api.project({v}, {{ $slice: 2, $path: 'a.0' }})"),
    VALUES.map(lambda v: f"emit({v})"),
    VALUES.map(lambda v: f"api.display({v})"),
    VALUES.map(lambda v: f"await api.saveArtifact('fuzz/x.json', {v})"),
    VALUES.map(lambda v: f"JSON.stringify({v})"),
    VALUES.map(lambda v: f"structuredClone({v})"),
    VALUES.map(lambda v: f"throw {v}"),
    VALUES.map(lambda v: f"Promise.reject({v})"),
    VALUES.map(lambda v: f"setTimeout(() => {{ throw {v} }}, 0)"),
    VALUES.map(lambda v: f"new URL(String({v}), 'https://a.b/')"),
    VALUES.map(lambda v: f"btoa(String({v}))"),
    VALUES.map(lambda v: "new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff]))"),
    st.integers(-5, 1 << 40).map(lambda n: f"await sleep({n} % 50)"),
    st.sampled_from(["while (true) {}", "for (;;) { await null }", "const f = () => queueMicrotask(f); f()", "await new Promise(() => {})"]),
    st.sampled_from(
        [
            "Object.prototype.toJSON = () => 1", "JSON.stringify = () => 'x'", "Array.prototype.push = null",
            "Promise.prototype.then = () => { throw 1 }", "globalThis.__mcp2repl = null", "String.prototype.split = null",
            "delete globalThis.console", "globalThis.api = 1", "Object.freeze(Object.prototype)", "Error.captureStackTrace = null",
            "Object.prototype.then = function (resolve) { resolve(13) }", "Array.prototype[Symbol.iterator] = function* () {}",
            "Object.defineProperty(Object.prototype, 'then', { get() { throw 5 }, configurable: true })",
            "Object.getPrototypeOf(Promise.prototype).then = function () {}", "Object.prototype.get = function () {}",
        ]
    ),
    st.text(alphabet="{}()[];,.=+-*/!?:'\"`$x1 \n", max_size=20),
    st.sampled_from(["const k = 1", "let k", "var k = [k]", "class K {}", "function k() {}", "label: { break label }", "import x from 'y'"]),
)  # fmt: skip
CELL_CODE = st.lists(STATEMENTS, min_size=1, max_size=4).map(lambda parts: ";\n".join(parts))


@pytest.fixture(scope="module")
def fuzz_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    harness = SessionHarness(tmp_path_factory.mktemp("fuzz"), {"mcpServers": {}}, timeout=5.0, max_output_chars=3000)
    yield harness
    harness.close()


@fuzz(CELLS)
@given(code=CELL_CODE)
def test_any_cell_ends_cleanly_and_the_next_one_runs(fuzz_session: SessionHarness, code: str) -> None:
    result, _ = fuzz_session.run(code, timeout=120)
    if result.error is not None:
        assert result.error.name in USER_ERRORS, (code, result.error.traceback)
        assert result.error.traceback and result.error.traceback[0].startswith(result.error.name), code
    after, _ = fuzz_session.run("40 + 2", timeout=120)
    assert after.error is None and after.data == {"text/plain": "42"}, (code, after.error and after.error.traceback)


# ---- deep and big cells -------------------------------------------------------------------------------

DEEP = int(os.environ.get("FUZZ_DEEP", "12"))
#: The largest cell the deep-and-big fuzzer writes (the suite's is small; scripts/fuzz.sh asks for megabytes).
BIG_BYTES = int(os.environ.get("FUZZ_BIG_BYTES", "200000"))
#: (opening, innermost, closing) of one level: brackets, and what nests without them (functions, if, ?:, chains).
LEVELS = [
    ("(", "1", ")"), ("[", "1", "]"), ("{", "1", "}"), ("({a:", "1", "})"), ("`${", "1", "}`"), ("f(", "1", ")"),
    ("() => {", "", "}"), ("if (1) ", "1", ""), ("1 ? ", "1", " : 0"), ("!", "1", ""), ("(", "x", " as any)"),
    ("-", "1", ""), ("a<b>", "c", ""), ("1 + ", "1", ""), ("o.", "o", ""), ("await ", "1", ""),
]  # fmt: skip
ITEMS = st.sampled_from(["1", "'s'", '"t"', "{ a: 1 }", "[1, 2]", "null", "f(1)", "x => x", "`t${1}`", "/re/g", "1 < 2"])
NESTED = st.tuples(st.sampled_from(LEVELS), st.integers(0, 25000)).map(lambda t: t[0][0] * t[1] + t[0][1] + t[0][2] * t[1])
WIDE = st.tuples(ITEMS, st.integers(1, BIG_BYTES)).map(lambda t: "[" + ",".join([t[0]] * max(1, t[1] // (len(t[0]) + 1))) + "].length")


@fuzz(DEEP)
@given(code=st.one_of(NESTED, WIDE), prefix=st.sampled_from(["", "const f = (x) => x, o = {}; o.o = o; let a = 1, b = 1, c = 1;\n"]))
def test_any_deep_or_big_cell_ends_cleanly_and_the_next_one_runs(fuzz_session: SessionHarness, code: str, prefix: str) -> None:
    """Nesting of every kind up to 25,000 levels and literals up to BIG_BYTES: a value or a clear
    error (a SyntaxError for nesting too deep, a TimeoutError past the session's 5 s), never a hang."""
    result, _ = fuzz_session.run(prefix + code, timeout=120)
    if result.error is not None:
        assert result.error.name in USER_ERRORS, (code[:200], result.error.traceback)
        assert "bridge.js" not in "\n".join(result.error.traceback), (code[:200], result.error.traceback)
    after, _ = fuzz_session.run("40 + 2", timeout=120)
    assert after.error is None and after.data == {"text/plain": "42"}, (code[:200], after.error and after.error.traceback)


# ---- configs ----------------------------------------------------------------------------------------

SECRET = "fuzz-secret-" + uuid.uuid4().hex[:8]
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats(allow_nan=False) | st.text(max_size=30)
    | st.sampled_from(["${FUZZ_SECRET}", "{env:FUZZ_SECRET}", "${NOPE:-d}", "{file:missing.txt}", "{file:secret.txt}", "https://[::1/x",
                       "http://u:${FUZZ_SECRET}@h/mcp?k=${FUZZ_SECRET}", "npx -y srv", "", " ", "🚀", "\x00"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip
KEYS = st.sampled_from(["command", "args", "env", "environment", "url", "headers", "type", "cwd", "timeout", "enabled", "disabled",
                        "blocked_tools", "description", "envFile", "confirm_destructive", "allow_destructive", "confirm"])  # fmt: skip
ENTRY = st.dictionaries(KEYS, JSONISH, max_size=6) | JSONISH
CONFIG = st.fixed_dictionaries(
    {},
    optional={
        "mcpServers": st.dictionaries(st.text(max_size=10), ENTRY, max_size=4) | JSONISH,
        "servers": st.dictionaries(st.text(max_size=10), ENTRY, max_size=3),
        "presets": JSONISH | st.dictionaries(st.sampled_from(["default", "p"]), st.dictionaries(st.text(max_size=5), JSONISH, max_size=3)),
        "allow_connect": JSONISH,
        "confirm_destructive": JSONISH,
    },
) | JSONISH


@fuzz(CONFIGS)
@given(config=CONFIG, as_yaml=st.booleans(), profile=st.sampled_from([None, "p", "nope"]), only=st.sampled_from([None, "a", ""]))
def test_any_config_loads_into_messages_without_secrets(tmp_path_factory: pytest.TempPathFactory, config: Any, as_yaml: bool, profile: str | None, only: str | None) -> None:
    folder = tmp_path_factory.mktemp("cfg")
    (folder / "secret.txt").write_text(SECRET)
    path = folder / ("c.yaml" if as_yaml else "c.json")
    path.write_text(yaml.safe_dump(config) if as_yaml else json.dumps(config))
    loaded = load_config(explicit=str(path), cwd=folder, profile=profile, only=only, environ={"FUZZ_SECRET": SECRET, "HOME": str(folder)})
    messages = [*loaded.problems, *loaded.warnings, *(s.error or "" for s in loaded.available.values())]
    assert all(isinstance(m, str) for m in messages)
    shown = Redactor(loaded.secrets).text("\n".join(messages))
    assert SECRET not in shown


# ---- tool results ------------------------------------------------------------------------------------

ITEM = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=50) | st.sampled_from(["{\"a\": 1}", "[1,", "null", "1e999", "\"s\""])}),
    st.fixed_dictionaries({"type": st.just("image"), "data": st.sampled_from(["iVBORw0KGgo=", "!!notbase64", ""]), "mimeType": st.sampled_from(["image/png", "image/svg+xml", "x/y"])}),
    st.fixed_dictionaries({"type": st.just("audio"), "data": st.just("AAAA"), "mimeType": st.just("audio/wav")}),
    st.fixed_dictionaries({"type": st.just("resource_link"), "uri": st.sampled_from(["file:///x", "javascript:alert(1)", "https://e.x"]), "name": st.text(max_size=10)}),
    st.fixed_dictionaries({"type": st.just("resource"), "resource": st.fixed_dictionaries({"uri": st.just("demo://x"), "text": st.text(max_size=30), "mimeType": st.sampled_from(["text/markdown", "text/html", "x/y"])})}),
    st.dictionaries(st.sampled_from(["type", "text", "data"]), JSONISH, max_size=3),
)  # fmt: skip
RESULT = st.fixed_dictionaries(
    {"content": st.lists(ITEM, max_size=4)},
    optional={"structuredContent": st.dictionaries(st.text(max_size=6), JSONISH, max_size=4), "isError": st.booleans(), "_meta": JSONISH},
)


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    config = {"mcpServers": {"scripted": {"command": sys.executable, "args": [str(SERVERS / "scripted_server.py")]}}}
    harness = SessionHarness(tmp_path_factory.mktemp("results"), config, timeout=20.0, max_output_chars=2000)
    harness.run("await api.servers({ wait: true })")
    yield harness
    harness.close()


@fuzz(RESULTS)
@given(result=RESULT, raw=st.booleans())
def test_any_tool_result_is_shown_or_refused_cleanly(scripted: SessionHarness, result: dict[str, Any], raw: bool) -> None:
    payload = json.dumps(json.dumps(result))
    code = f"const r = await mcp.scripted.reply({{ result: JSON.parse({payload}) }}, {{ raw: {'true' if raw else 'false'} }});\napi.display(r); r"
    outcome, _ = scripted.run(code, timeout=60)
    if outcome.error is not None:
        assert outcome.error.name in USER_ERRORS, (result, outcome.error.traceback)
    after, _ = scripted.run("40 + 2", timeout=60)
    assert after.data == {"text/plain": "42"}, result
