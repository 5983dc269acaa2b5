"""The quick yes for arguments: said to plainly valid arguments of flat schemas, and never to anything
jsonschema (with the catalog's unknown-key rule) would refuse."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from mcp_kernel.servers.catalog import bounded_validator
from mcp_kernel.servers.plain_check import plain_check

ECHO = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"message": {"type": "string", "description": "Message to echo"}}, "required": ["message"]}

FLAT = [
    ECHO,
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "number", "title": "B"}}, "required": ["a"], "additionalProperties": False},
    {"type": "object", "properties": {"on": {"type": "boolean"}, "tags": {"type": "array"}, "meta": {"type": "object"}, "any": {}, "none": {"type": "null"}}},
    {"type": "object"},
    {},
]
NOT_FLAT = [
    {"type": "object", "properties": {"mode": {"type": "string", "enum": ["a", "b"]}}},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}},
    {"type": "object", "properties": {"x": {"type": ["string", "null"]}}},
    {"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}, "$defs": {"X": {"type": "string"}}},
    {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
    {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"type": "array"},
    "not a schema",
]
VALUES: list[Any] = ["x", "", 1, 0, -3, 2.0, 1.5, True, False, None, [], [1], {}, {"k": 1}]


def _catalog_accepts(schema: dict[str, Any], args: dict[str, Any]) -> bool:
    """What check_arguments accepts: jsonschema, plus no unknown keys when properties are listed (and not allowed)."""
    props = schema.get("properties") or {}
    if props and schema.get("additionalProperties") in (None, False) and set(args) - set(props):
        return False
    return bounded_validator(schema).is_valid(args)


@pytest.mark.parametrize("schema", FLAT, ids=range(len(FLAT)))
def test_a_yes_is_never_wrong(schema: dict[str, Any]) -> None:
    check = plain_check(schema)
    assert check is not None
    keys = [*(schema.get("properties") or {}), "typo"]
    said_yes = 0
    for count in range(3):
        for names in itertools.combinations(keys, count):
            for values in itertools.product(VALUES, repeat=count):
                args = dict(zip(names, values, strict=True))
                if check(args):
                    said_yes += 1
                    assert _catalog_accepts(schema, args), args
    assert said_yes > 0


@pytest.mark.parametrize("schema", NOT_FLAT, ids=range(len(NOT_FLAT)))
def test_other_schemas_get_no_quick_check(schema: Any) -> None:
    assert plain_check(schema) is None


def test_the_usual_calls_are_plainly_valid_and_the_rest_goes_to_jsonschema() -> None:
    echo = plain_check(ECHO)
    assert echo is not None
    assert (echo({"message": "hi"}), echo({}), echo({"message": 1}), echo({"message": "hi", "mesage": "typo"})) == (True, False, False, False)
    numbers = plain_check(FLAT[1])
    assert numbers is not None
    # JSON Schema's integer includes 2.0 and excludes True: jsonschema decides the first, the quick check refuses the second
    assert (numbers({"a": 1, "b": 2.5}), numbers({"a": 2.0}), numbers({"a": True})) == (True, False, False)
    assert bounded_validator(FLAT[1]).is_valid({"a": 2.0})
