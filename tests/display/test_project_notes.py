"""What api.project says when part of a projection matches nothing, in a raw V8 context.

``__mcp2repl.project(value, spec, notes)`` fills ``notes`` with one line per ``$path`` or field that
matched nothing anywhere, saying where the walk stopped and what was there; api.project and
api.print write those lines on stderr (tests/display/test_display_kernel.py shows them in a kernel).
The projected value itself never changes: notes are the only difference.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import load_v8
from py_mini_racer import MiniRacer

SCRIPTS = ["engine/js/intrinsics.js", "engine/js/inspect.js", "display/js/project.js"]
RECORDS = "[{id: 1, title: 'a', meta: {score: 5, lang: 'en'}}, {id: 2, title: 'b', meta: {score: 7}}, {id: 3, title: 'c'}]"


@pytest.fixture(scope="module")
def mr() -> Iterator[MiniRacer]:
    ctx = load_v8(*SCRIPTS)
    ctx.eval(
        "var N = (v, p) => { const notes = []; const r = __mcp2repl.project(v, p, notes);"
        " return JSON.stringify([r === undefined ? '<undefined>' : r, notes]); };"
    )
    yield ctx
    ctx.close()


def noted(ctx: MiniRacer, value: str, spec: str) -> tuple[Any, list[str]]:
    result, notes = json.loads(ctx.eval(f"N({value}, {spec})"))
    return result, notes


NOTES = [
    # the case: a $path into data without it
    (
        "{a: 1, b: 2, c: 3}",
        "{$path: 'n.x'}",
        "<undefined>",
        ['$path "n.x" matched nothing: no key "n" at the top level; keys there: a, b, c'],
    ),
    ("{a: {b: 1, c: 2}}", "{$path: 'a.zz'}", "<undefined>", ['$path "a.zz" matched nothing: no key "zz" in a; keys there: b, c']),
    (
        "{a: {rows: [{id: 1}]}}",
        "{$path: 'a.rows.0.x'}",
        "<undefined>",
        ['$path "a.rows.0.x" matched nothing: no key "x" in a.rows[0]; keys there: id'],
    ),
    ("{a: [1]}", "{$path: 'a.5'}", "<undefined>", ['$path "a.5" matched nothing: a has 1 item, no index 5']),
    ("{a: [1, 2, 3]}", "{$path: 'a.x'}", "<undefined>", ['$path "a.x" matched nothing: a is an array of 3 items; "x" is not an index']),
    ("{a: {b: 1}}", "{$path: 'a.b.c'}", "<undefined>", ['$path "a.b.c" matched nothing: a.b is a number (1), which has no key "c"']),
    ("{a: {b: null}}", "{$path: 'a.b.c'}", "<undefined>", ['$path "a.b.c" matched nothing: a.b is null, which has no key "c"']),
    ("'text'", "{$path: 'n'}", "<undefined>", ['$path "n" matched nothing: the value is a string, which has no key "n"']),
    ("{}", "{$path: 'a'}", "<undefined>", ['$path "a" matched nothing: no key "a" at the top level; it has no keys']),
    ("{'a b': 1, c: 2}", "{$path: 'x'}", "<undefined>", ['$path "x" matched nothing: no key "x" at the top level; keys there: "a b", c']),
    (
        "{m: new Map([['k', {v: 1}]])}",
        "{$path: 'm.k.w'}",
        "<undefined>",
        ['$path "m.k.w" matched nothing: no key "w" in m.k; keys there: v'],
    ),
    # nested specs say where they are
    (
        "{x: {a: 1}, y: 2}",
        "{x: {$path: 'a'}, y: {$path: 'nope'}}",
        {"x": 1},
        ['$path "nope" at projection.y matched nothing: y is a number (2), which has no key "nope"'],
    ),
    (
        RECORDS,
        "{$items: {$path: 'meta.x'}}",
        [None, None, None],
        ['$path "meta.x" at projection.$items matched nothing (in 3 values): no key "x" in [*].meta; keys there: score, lang'],
    ),
    # fields and $pick: a misspelt name is named, with the keys there are
    (
        RECORDS,
        "{id: true, titel: true}",
        [{"id": 1}, {"id": 2}, {"id": 3}],
        ['field "titel" matched nothing (in 3 records); keys there: id, title, meta'],
    ),
    ("{a: 1}", "{$pick: ['a', 'zz']}", {"a": 1}, ['field "zz" matched nothing; keys there: a']),
    ("{meta: {score: 5}}", "{meta: {lang: true}}", {"meta": {}}, ['field "lang" at projection.meta matched nothing; keys there: score']),
    # two misses, two lines, in spec order
    ("{a: 1}", "{b: true, c: {$path: 'x'}}", {}, ['field "b" matched nothing; keys there: a', 'field "c" matched nothing; keys there: a']),
]


@pytest.mark.parametrize(("value", "spec", "result", "notes"), NOTES)
def test_notes_say_where_the_walk_stopped_and_what_was_there(mr: MiniRacer, value: str, spec: str, result: Any, notes: list[str]) -> None:
    assert noted(mr, value, spec) == (result, notes)


@pytest.mark.parametrize(
    ("value", "spec"),
    [
        (RECORDS, "{$items: {$path: 'meta.score'}}"),  # missing in one item: data, not a mistake
        (RECORDS, "{id: true, meta: {lang: true}}"),  # lang is in one record
        ("{a: {b: [1, 2]}}", "{$path: 'a.b.-1'}"),
        ("{a: 1, b: 2}", "{$omit: ['zz']}"),  # nothing to drop is not a miss
        ("[1, 2, 3]", "{$slice: 2}"),
        ("{a: 1}", "true"),
    ],
)
def test_no_note_when_something_matched(mr: MiniRacer, value: str, spec: str) -> None:
    assert noted(mr, value, spec)[1] == []


def test_long_key_lists_are_cut(mr: MiniRacer) -> None:
    value = "Object.fromEntries(Array.from({length: 30}, (_, i) => ['k' + i, i]))"
    keys = ", ".join(f"k{i}" for i in range(20))
    assert noted(mr, value, "{$path: 'x'}")[1] == [
        f'$path "x" matched nothing: no key "x" at the top level; keys there: {keys}, … (10 more)'
    ]


def test_notes_never_break_on_odd_values(mr: MiniRacer) -> None:
    hostile = "new Proxy({}, { ownKeys() { throw new Error('no') } })"
    assert noted(mr, hostile, "{$path: 'x'}")[1] == ['$path "x" matched nothing: no key "x" at the top level; its keys could not be read']
    big_map = "new Map(Array.from({length: 25}, (_, i) => [i, i]))"
    keys = ", ".join(f'"{i}"' for i in range(20))
    assert noted(mr, big_map, "{$path: 'x'}")[1] == [f'$path "x" matched nothing: no key "x" at the top level; keys there: {keys}, … (5 more)']
    assert noted(mr, "{n: 5n}", "{$path: 'n.x'}")[1] == ['$path "n.x" matched nothing: n is a bigint (5), which has no key "x"']


def test_without_a_notes_list_nothing_changes(mr: MiniRacer) -> None:
    assert mr.eval("__mcp2repl.project({a: 1}, {$path: 'n.x'}) === undefined") is True
