"""How one field of an elicitation form is shown and how an answer becomes its value (servers/elicitation.py).

The whole dialog, through a real kernel's stdin channel, is in tests/api/test_protocol_kernel.py.
"""

from __future__ import annotations

import asyncio

import mcp_types as types
import pytest

from mcp_kernel.servers.elicitation import Invalid, Person, answer, describe, parse, prompt

AGE = {"type": "integer", "description": "Age in years", "minimum": 0, "maximum": 150, "default": 30}
TITLED = {"type": "string", "title": "Clarification", "oneOf": [{"const": "programming", "title": "Python"}, {"const": "snake", "title": "Snake"}]}
TAGS = {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}


def test_fields_are_described_with_type_bounds_choices_and_default() -> None:
    assert describe("age", AGE, False) == "age (integer 0–150): Age in years [default: 30]"
    assert describe("topic", TITLED, True) == "topic “Clarification” (one of: programming = Python, snake = Snake, required)"
    assert describe("ok", {"type": "boolean", "default": False}, False) == "ok (yes/no) [default: no]"
    assert prompt("tags", TAGS, False) == "tags (any of: a, b, c (comma-separated)): "
    assert prompt("email", {"type": "string", "format": "email"}, True) == "email (string, email, required): "


@pytest.mark.parametrize(
    ("text", "prop", "required", "value"),
    [
        ("", AGE, False, 30),
        ("41", AGE, False, 41),
        ("Snake", TITLED, True, "snake"),
        ("yes", {"type": "boolean"}, True, True),
        ("0", {"type": "boolean"}, True, False),
        ("2.5", {"type": "number"}, True, 2.5),
        ("a, c", TAGS, False, ["a", "c"]),
        ("  Ada ", {"type": "string"}, True, "Ada"),
    ],
)
def test_answers_become_values(text: str, prop: dict, required: bool, value: object) -> None:
    assert parse(text, prop, required) == value


@pytest.mark.parametrize(
    ("text", "prop", "required", "message"),
    [
        ("", {"type": "string"}, True, "an answer is required"),
        ("old", AGE, False, '"old" is not an integer'),
        ("-1", AGE, False, "-1 is less than the minimum of 0"),
        ("maybe", {"type": "boolean"}, True, '"maybe" is not yes or no'),
        ("x", TITLED, True, '"x" is not one of: programming, snake'),
        ("a, d", TAGS, False, '"d" is not one of: a, b, c'),
        ("A", {"type": "string", "minLength": 2}, True, "'A' is too short"),
    ],
)
def test_answers_that_do_not_fit_say_why(text: str, prop: dict, required: bool, message: str) -> None:
    with pytest.raises(Invalid) as caught:
        parse(text, prop, required)
    assert str(caught.value) == message


def test_a_request_outside_any_cell_is_declined_with_a_notice() -> None:
    notices: list[str] = []
    params = types.ElicitRequestFormParams(message="Who?", requested_schema={"type": "object", "properties": {}})
    result = asyncio.run(answer("srv", params, Person(None, in_cell=False), "ask", notices.append, asyncio.Lock()))
    assert result.action == "decline"
    assert notices == ['[mcp2repl] MCP server "srv" asked for input outside any cell ("Who?"); declined']


def test_a_request_withdrawn_by_the_server_ends_its_question() -> None:
    """The SDK cancels the handler when the server withdraws its request; the question must not outlive it.

    Left waiting, the question held the kernel's stdin: the next cell's question was never sent
    (seen once in a full run: an interrupt while a form waited, then a new form that never asked).
    """
    params = types.ElicitRequestFormParams(message="Who?", requested_schema={"type": "object", "properties": {"name": {"type": "string"}}})
    asked = asyncio.Event()
    abandoned: list[bool] = []

    async def ask(prompt: str) -> str:
        asked.set()
        try:
            await asyncio.Event().wait()  # nobody answers
        except asyncio.CancelledError:
            abandoned.append(True)
            raise
        return ""

    async def main() -> None:
        person = Person(ask, in_cell=True, ended=asyncio.Event())
        handler = asyncio.ensure_future(answer("srv", params, person, "ask", lambda text: None, asyncio.Lock()))
        await asyncio.wait_for(asked.wait(), 10)
        handler.cancel()  # what the SDK does on notifications/cancelled for this request
        await asyncio.wait({handler}, timeout=10)
        for _ in range(10):
            await asyncio.sleep(0)
        assert abandoned == [True]  # here, while the loop runs: asyncio.run's clean-up would cancel it anyway

    asyncio.run(main())


def test_an_answer_is_checked_without_fetching_a_remote_ref(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's field schema may name a remote ``$ref``: checking the person's answer must not fetch it."""
    import urllib.request

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the kernel fetched a URL named by a server's schema")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    prop = {"type": "string", "allOf": [{"$ref": "http://127.0.0.1:9/evil.json"}]}
    assert parse("hello", prop, True) == "hello"
