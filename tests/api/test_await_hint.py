"""A forgotten `await` on a tool call is named where it bites (issue 23, item 8).

`const t = mcp.time.get_current_time({…}); t.datetime` was `undefined` with the step a success,
`r.slice(…)` on a pending call said "r.slice is not a function", and the call's trace record said
`ok: false, error: null` though it succeeded. Reading what a promise lacks now throws a TypeError
that says the value is the call's Promise and `await` is missing; the promise is still a native
one for everything a promise does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ECHO, SessionHarness


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionHarness]:
    harness = SessionHarness(Path(tmp_path_factory.mktemp("await")), {"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}})
    try:
        harness.value("await api.servers({ wait: true }); 1")
        yield harness
    finally:
        harness.close()


def _error(s: SessionHarness, code: str) -> tuple[str, str]:
    result, _ = s.run(code)
    assert result.error is not None, f"expected an error from {code!r}, got {result.data}"
    return result.error.name, result.error.message


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        ("mcp.echo.add({ a: 1, b: 2 })", "mcp.echo.add({…})"),
        ('mcp.call("echo.add", { a: 1, b: 2 })', 'mcp.call("echo.add", {…})'),
        ('api.callTool("echo", "add", { a: 1, b: 2 })', 'api.callTool("echo", "add", {…})'),
        ("tools.add({ a: 1, b: 2 })", "tools.add({…})"),
        ('mcp.tools["echo.add"]({ a: 1, b: 2 })', 'mcp.tools["echo.add"]({…})'),
    ],
)
def test_reading_a_field_of_a_pending_call_says_await_is_missing(s: SessionHarness, call: str, shown: str) -> None:
    assert _error(s, f"const t = {call}; t.sum") == (
        "TypeError",
        f"this is the Promise of {shown}, not its result (it has no .sum): await is missing, e.g. (await {shown}).sum",
    )


def test_a_method_of_a_pending_call_says_await_is_missing(s: SessionHarness) -> None:
    name, message = _error(s, 'const r = mcp.echo.echo({ text: "hi" }); r.slice(0, 1)')
    assert (name, message) == (
        "TypeError",
        "this is the Promise of mcp.echo.echo({…}), not its result (it has no .slice): await is missing, e.g. (await mcp.echo.echo({…})).slice",
    )
    assert _error(s, "const r = mcp.echo.add({ a: 1, b: 2 }); r[0]")[1].endswith("e.g. (await mcp.echo.add({…}))[\"0\"]")


def test_the_promise_still_does_what_promises_do(s: SessionHarness) -> None:
    # instanceof, then/catch/finally, Promise.all, JSON, inspection, symbols, own properties, await
    result, out = s.run(
        """
        const p = mcp.echo.add({ a: 1, b: 2 });
        console.log(p);
        const shown = [p instanceof Promise, typeof p.then, typeof p.catch, typeof p.finally, "sum" in p,
          JSON.stringify(p), JSON.stringify({ p }), Object.prototype.toString.call(p), String(p), `${p}`,
          p[Symbol.toStringTag], p.constructor.name, p.toJSON === undefined, p.nodeType === undefined];
        p.mine = 7;
        const [a, b] = await Promise.all([p, mcp.echo.add({ a: 2, b: 2 })]);
        const c = await mcp.echo.add({ a: 3, b: 3 }).then((r) => r.sum).finally(() => {});
        const d = await mcp.echo.fail({ message: "x" }).catch((e) => e.name);
        const e = await Promise.race([mcp.echo.add({ a: 4, b: 4 })]);
        ({ shown, sums: [a.sum, b.sum, c, e.sum], d, mine: p.mine, again: (await p).sum })
        """
    )
    assert result.error is None, result.error
    assert out.text("stdout") == "Promise { <unknown> }\n"
    assert result.data.get("application/json") == {
        "shown": [True, "function", "function", "function", False, "{}", '{"p":{}}', "[object Promise]",
                  "[object Promise]", "[object Promise]", "Promise", "Promise", True, True],
        "sums": [3, 4, 6, 8],
        "d": "ToolError",
        "mine": 7,
        "again": 3,
    }


def test_a_pending_call_as_a_value_or_printed_is_awaited_as_before(s: SessionHarness) -> None:
    assert s.json("mcp.echo.add({ a: 1, b: 2 })") == {"sum": 3}
    result, out = s.run("api.print(mcp.echo.add({ a: 5, b: 5 })); 1")
    assert result.error is None, result.error


def test_a_call_still_running_when_the_cell_ends_is_unfinished_in_the_trace(s: SessionHarness) -> None:
    result, _ = s.run("mcp.echo.sleep({ ms: 3000 }); 'sent'")
    assert result.error is None
    assert [(c["tool"], c["ok"], c.get("unfinished"), c["error"]) for c in result.calls] == [("sleep", None, True, None)]
    assert s.value("1") == "1"
