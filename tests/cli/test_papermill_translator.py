"""The JavaScript parameter translator in-process: refused names, and values that round-trip through V8."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import load_v8
from hypothesis import given, settings
from hypothesis import strategies as st
from papermill.exceptions import PapermillException

from mcp_kernel.cli.papermill import JavaScriptTranslator, ParameterError

T = JavaScriptTranslator

#: JS that describes a value with its type, so that 1, true and 1n stay apart, and -0, NaN, the
#: infinities and BigInts (which must not cross into Python: a BigInt hangs mini-racer) become text
DESCRIBE = r"""
function describe(v) {
  if (typeof v === "bigint") return { bigint: v.toString() };
  if (typeof v === "number") return { number: Object.is(v, -0) ? "-0" : Number.isFinite(v) ? v : String(v) };
  if (typeof v === "string" || typeof v === "boolean" || v === null) return { [v === null ? "null" : typeof v]: v };
  if (Array.isArray(v)) return { array: v.map(describe) };
  if (Object.getPrototypeOf(v) !== Object.prototype) return { odd: String(v) };
  return { object: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, describe(x)])) };
}
"""


def described(value: Any) -> Any:
    """What :data:`DESCRIBE` says of ``value`` once translated, if the translation is right."""
    if value is None:
        return {"null": None}
    if isinstance(value, bool):
        return {"boolean": value}
    if isinstance(value, int):
        return {"bigint": str(value)} if abs(value) > 2**53 - 1 else {"number": value}
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"number": "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"}
        return {"number": "-0" if value == 0 and math.copysign(1, value) < 0 else value}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, list | tuple):
        return {"array": [described(v) for v in value]}
    return {"object": {str(k): described(v) for k, v in value.items()}}


def evaluate(ctx: Any, value: Any) -> Any:
    """Translate ``value``, evaluate the literal in a real V8, and return what V8 built, described.

    JSON numbers are read as floats: V8 writes a large double such as 5.378930653001473e16 as the
    integer digits 53789306530014730, which Python would otherwise read as a different (exact) int.
    """
    return json.loads(ctx.eval(f"JSON.stringify(describe({T.translate(value)}))"), parse_int=float)


@pytest.fixture
def roundtrip(v8: Callable[..., Any]) -> Callable[[Any], Any]:
    ctx = v8(preamble=DESCRIBE)
    return lambda value: evaluate(ctx, value)


# ---- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("class", "'class' is a reserved word in JavaScript; rename it, e.g. class_"),
        ("await", "'await' is a reserved word in JavaScript; rename it, e.g. await_"),
        ("enum", "'enum' is a reserved word in JavaScript; rename it, e.g. enum_"),
        ("null", "'null' is a reserved word in JavaScript; rename it, e.g. null_"),
        ("let", "'let' is a reserved word in strict-mode JavaScript; rename it, e.g. let_"),
        ("package", "'package' is a reserved word in strict-mode JavaScript; rename it, e.g. package_"),
        ("arguments", "'arguments' cannot be declared in strict-mode JavaScript, and a cell would not see it; rename it, e.g. arguments_"),
        ("undefined", "'undefined' is a read-only global in JavaScript, so the value would be lost; rename it, e.g. undefined_"),
        ("NaN", "'NaN' is a read-only global in JavaScript, so the value would be lost; rename it, e.g. NaN_"),
        (
            "__proto__",
            "'__proto__' is the global object's prototype, not a variable, so the value would be lost; rename it, e.g. __proto___",
        ),
        (
            "my-param",
            "'my-param' is not a JavaScript identifier (letters, digits, _ and $, not starting with a digit); rename it, e.g. my_param",
        ),
        ("2nd", "'2nd' is not a JavaScript identifier (letters, digits, _ and $, not starting with a digit); rename it, e.g. _2nd"),
        ("a b", "'a b' is not a JavaScript identifier (letters, digits, _ and $, not starting with a digit); rename it, e.g. a_b"),
        ("", "'' is not a JavaScript identifier (letters, digits, _ and $, not starting with a digit)"),
        (1, "1 is not a JavaScript identifier (letters, digits, _ and $, not starting with a digit); rename it, e.g. _1"),
    ],
)
def test_names_that_cannot_be_js_variables_are_refused(name: Any, why: str) -> None:
    with pytest.raises(ParameterError) as caught:
        T.codify({"ok": 1, name: 2})
    assert str(caught.value) == f"parameter {name!r} cannot be injected into a JavaScript notebook: {why}"
    assert isinstance(caught.value, PapermillException)


@pytest.mark.parametrize("name", ["limit", "$", "_", "$el", "_private", "été", "π", "a\u200db", "async", "of", "get", "static_", "Class"])
def test_identifiers_are_accepted(name: str, v8: Callable[..., Any]) -> None:
    code = T.codify({name: 5})
    assert code == f"// Parameters\nconst {name} = 5;\n"
    ctx = v8()
    assert ctx.eval(f"(() => {{ {code} return {name}; }})()") == 5


# ---- values ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (2**53 - 1, "9007199254740991"),
        (-(2**53 - 1), "-9007199254740991"),
        (2**53, "9007199254740992n"),
        (-(2**53), "-9007199254740992n"),
        (12345678901234567890, "12345678901234567890n"),
        ([1, 2**64], "[1, 18446744073709551616n]"),
        ({"id": 2**70, "n": [2**53]}, '{"id": 1180591620717411303424n, "n": [9007199254740992n]}'),
        (math.nan, "NaN"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (-0.0, "-0.0"),
        (1e300, "1e+300"),
        (5e-324, "5e-324"),
        ("line\u2028para\u2029end", '"line\\u2028para\\u2029end"'),
        ('quote " backslash \\ newline \n tab \t', '"quote \\" backslash \\\\ newline \\n tab \\t"'),
        ("é 🐉", '"é 🐉"'),
        ("\ud800", '"\\ud800"'),
        ({"__proto__": 1, "a": None}, '{["__proto__"]: 1, "a": null}'),
        ({1: True}, '{"1": true}'),
        ((1, "a"), '[1, "a"]'),
        ([], "[]"),
        ({}, "{}"),
    ],
)
def test_values_become_js_literals(value: Any, literal: str, roundtrip: Callable[[Any], Any]) -> None:
    assert T.translate(value) == literal
    assert roundtrip(value) == described(value)


json_like = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats()
    | st.text(st.characters(exclude_categories=()), max_size=12)
    | st.sampled_from(["\u2028", "\u2029", "</script>", "${x}", "`", "\\u0041"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6) | st.just("__proto__"), inner, max_size=4),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def shared_v8() -> Iterator[Any]:
    """One context for every generated example (a fixture per example would be rebuilt each time)."""
    ctx = load_v8(preamble=DESCRIBE)
    yield ctx
    ctx.close()


@settings(max_examples=300, deadline=None)
@given(value=json_like)
def test_every_parameter_value_round_trips_through_v8(shared_v8: Any, value: Any) -> None:
    assert evaluate(shared_v8, value) == described(value)
