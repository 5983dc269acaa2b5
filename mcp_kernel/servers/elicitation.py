"""Elicitation: a server asks the person for input in the middle of a call (MCP ``elicitation/create``).

The kernel has one way to ask a person, Jupyter's ``input_request`` (the approval gate uses it
too); the session hands a connection that way for the running cell. A form becomes one question
per field, each answer is checked against the field's schema (jsonschema) and asked again until
it fits, so the server never sees a value its own schema rejects. Without a person (papermill,
nbclient, ``mcp2repl --json``, or no cell running) the server's ``elicitation`` config decides:
``ask`` declines and says why, ``defaults`` accepts the schema's defaults when every required field
has one, ``decline`` is not even advertised (the capability is fixed when the connection starts).
Everything of the server's that the person reads (message, field names, titles, descriptions,
choices, defaults, links) is shown with its control and bidi characters escaped (:mod:`.shown`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from ..lean_imports import import_jsonschema
from .catalog import local_registry
from .shown import neutral

Ask = Callable[[str], Awaitable[str]]
Notice = Callable[[str], None]  # one line (or several) for the running cell's stderr; the newline is added

#: Wrong answers to one field before the whole request is cancelled (a stuck loop helps no one).
TRIES = 5
YES = ("y", "yes", "")
NO = ("n", "no")
CANCEL = ("c", "cancel")


@dataclass
class Person:
    """Who can answer right now: ``ask`` (None: nobody, no stdin), whether a cell is running, and
    when that cell ends (an interrupted cell must not leave a form waiting for ever).

    An ``ask`` that also has ``elicit(server, params) -> ElicitResult`` (mcp2repl serve's, whose
    MCP client shows forms) is given the server's request whole instead of one question per field.
    """

    ask: Ask | None
    in_cell: bool
    ended: asyncio.Event | None = None


class Invalid(ValueError):
    """An answer that does not fit its field; the message says what would."""


async def answer(
    server: str, params: types.ElicitRequestParams, person: Person, policy: str, notice: Notice, lock: asyncio.Lock
) -> types.ElicitResult:
    """The person's answer to one elicitation request, or the config's when nobody can answer."""
    url = isinstance(params, types.ElicitRequestURLParams)
    if not person.in_cell:
        notice(f'[mcp2repl] MCP server "{server}" asked for input outside any cell ({_quote(params.message)}); declined')
        return types.ElicitResult(action="decline")
    if person.ask is None:
        return _unattended(server, params, policy, notice)
    async with lock:  # one dialog at a time: two forms must not interleave their questions
        whole = getattr(person.ask, "elicit", None)  # a client that shows a form itself (mcp2repl serve's): all of it
        if whole is not None:
            dialog = asyncio.ensure_future(whole(server, params))
        elif url:
            dialog = asyncio.ensure_future(_url(server, params, person.ask, notice))  # type: ignore[arg-type]
        else:
            dialog = asyncio.ensure_future(_form(server, params, person.ask, notice))  # type: ignore[arg-type]
        if person.ended is None:
            return await dialog
        ended = asyncio.ensure_future(person.ended.wait())
        try:
            await asyncio.wait({dialog, ended}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the server withdrew its request (the SDK cancels this handler): the question ends too
            dialog.cancel()
            raise
        finally:
            ended.cancel()
        if dialog.done():
            return dialog.result()
        dialog.cancel()
        notice(f'[mcp2repl] the cell ended before "{server}" got its answer: cancelled')
        return types.ElicitResult(action="cancel")


def _unattended(server: str, params: types.ElicitRequestParams, policy: str, notice: Notice) -> types.ElicitResult:
    asked = f'MCP server "{server}" asked for input ({_quote(params.message)})'
    if policy == "defaults" and isinstance(params, types.ElicitRequestFormParams):
        schema = params.requested_schema or {}
        props: dict[str, Any] = schema.get("properties") or {}
        missing = [n for n in schema.get("required") or [] if "default" not in (props.get(n) or {})]
        if not missing:
            content = {n: p["default"] for n, p in props.items() if isinstance(p, dict) and "default" in p}
            notice(f'[mcp2repl] {asked}; nobody can answer here, so its defaults were sent (elicitation: "defaults"): {json.dumps(content)}')
            return types.ElicitResult(action="accept", content=content)
        notice(f"[mcp2repl] {asked}; nobody can answer here, and {', '.join(missing)} has no default: declined")
        return types.ElicitResult(action="decline")
    if policy == "defaults":
        notice(f"[mcp2repl] {asked} at {neutral(params.url, one_line=True)}; nobody can answer here: declined")  # type: ignore[union-attr]
        return types.ElicitResult(action="decline")
    notice(
        f"[mcp2repl] {asked}, but nobody can answer here (no stdin: papermill, nbclient, --json): declined. "
        f'To send the defaults of its form instead, set "elicitation": "defaults" for "{server}" in the config.'
    )
    return types.ElicitResult(action="decline")


async def _url(server: str, params: types.ElicitRequestURLParams, ask: Ask, notice: Notice) -> types.ElicitResult:
    url = neutral(params.url, one_line=True)
    notice(f'[mcp2repl] MCP server "{server}" asks you to open a link: {neutral(params.message, server)}\n  {url}')
    reply = (await ask(f"Open {url} , then answer: done? [y]es / [n]o (decline) / [c]ancel: ")).strip().lower()
    return types.ElicitResult(action=_choice(reply))


async def _form(server: str, params: types.ElicitRequestFormParams, ask: Ask, notice: Notice) -> types.ElicitResult:
    schema = params.requested_schema or {}
    props: dict[str, Any] = {k: v for k, v in (schema.get("properties") or {}).items() if isinstance(v, dict)}
    required = set(schema.get("required") or [])
    lines = [f'[mcp2repl] MCP server "{server}" asks: {neutral(params.message, server)}']
    lines += [f"  {describe(name, prop, name in required)}" for name, prop in props.items()]
    notice("\n".join(lines))
    reply = await ask(f'Answer "{server}"? [y]es / [n]o (decline) / [c]ancel: ')
    action = _choice(reply.strip().lower())
    if action != "accept":
        return types.ElicitResult(action=action)
    content: dict[str, Any] = {}
    for name, prop in props.items():
        for _ in range(TRIES):
            text = await ask(prompt(name, prop, name in required))
            try:
                value = parse(text, prop, name in required)
            except Invalid as exc:
                notice(neutral(f"[mcp2repl] {name}: {exc}; try again", one_line=True))
                continue
            if value is not _OMIT:
                content[name] = value
            break
        else:
            notice(f"[mcp2repl] {neutral(name, one_line=True)}: {TRIES} answers that do not fit; the request was cancelled")
            return types.ElicitResult(action="cancel")
    return types.ElicitResult(action="accept", content=content)


def _choice(reply: str) -> Any:
    if reply in CANCEL:
        return "cancel"
    return "decline" if reply in NO or reply not in YES else "accept"


def _quote(text: str) -> str:
    return neutral(json.dumps(text if len(text) <= 120 else text[:119] + "…", ensure_ascii=False), one_line=True)


# ---- one field ----------------------------------------------------------------------------------

_OMIT = object()


def choices(prop: dict[str, Any]) -> list[Any] | None:
    """The allowed values of a single- or multi-select field (``enum``, or ``oneOf``/``anyOf`` of ``const``)."""
    source = prop.get("items") if prop.get("type") == "array" else prop
    if not isinstance(source, dict):
        return None
    if isinstance(source.get("enum"), list):
        return list(source["enum"])
    options = source.get("oneOf") or source.get("anyOf")
    if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
        return [o["const"] for o in options]
    return None


def _labels(prop: dict[str, Any]) -> list[str]:
    """Each choice as typed, with its title when the schema gives one (``snake = Python snake species``)."""
    source = prop.get("items") if prop.get("type") == "array" else prop
    options = (source or {}).get("oneOf") or (source or {}).get("anyOf") or []
    titles = {str(o["const"]): o["title"] for o in options if isinstance(o, dict) and "const" in o and o.get("title")}
    return [f"{c} = {titles[str(c)]}" if str(c) in titles and titles[str(c)] != str(c) else str(c) for c in choices(prop) or []]


def kind(prop: dict[str, Any]) -> str:
    """The field's type as the person reads it: ``integer 0–150``, ``one of: a, b``, ``yes/no``…"""
    allowed = choices(prop)
    if prop.get("type") == "array":
        return "any of: " + ", ".join(_labels(prop)) + " (comma-separated)"
    if allowed is not None:
        return "one of: " + ", ".join(_labels(prop))
    if prop.get("type") == "boolean":
        return "yes/no"
    text = str(prop.get("type") or "string")
    if prop.get("format"):
        text += f", {prop['format']}"
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None or high is not None:
        text += f" {'' if low is None else low}–{'' if high is None else high}"
    return text


def describe(name: str, prop: dict[str, Any], required: bool) -> str:
    """One line of the form: ``name (type, required): description [default: x]``."""
    title = f" “{prop['title']}”" if prop.get("title") and prop["title"] != name else ""
    text = f"{name}{title} ({kind(prop)}{', required' if required else ''})"
    if prop.get("description"):
        text += f": {prop['description']}"
    if "default" in prop:
        text += f" [default: {_shown(prop['default'])}]"
    return neutral(text, one_line=True)


def prompt(name: str, prop: dict[str, Any], required: bool) -> str:
    default = f" [{_shown(prop['default'])}]" if "default" in prop else ""
    return neutral(f"{name} ({kind(prop)}{', required' if required else ''}){default}: ", one_line=True)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def parse(text: str, prop: dict[str, Any], required: bool) -> Any:
    """The value an answer means for this field, checked against the field's schema; raises Invalid."""
    text = text.strip()
    if not text:
        if "default" in prop:
            return prop["default"]
        if required:
            raise Invalid("an answer is required")
        return _OMIT
    value = _convert(text, prop)
    errors = sorted(import_jsonschema().Draft202012Validator(prop, registry=local_registry()).iter_errors(value), key=lambda e: list(e.path))
    if errors:
        raise Invalid(errors[0].message)
    return value


def _convert(text: str, prop: dict[str, Any]) -> Any:
    kind_ = prop.get("type")
    allowed = choices(prop)
    if kind_ == "array":
        items = [part.strip() for part in text.split(",") if part.strip()]
        return [_pick(item, allowed) for item in items] if allowed is not None else items
    if allowed is not None:
        return _pick(text, allowed)
    if kind_ == "boolean":
        low = text.lower()
        if low in ("y", "yes", "true", "1"):
            return True
        if low in ("n", "no", "false", "0"):
            return False
        raise Invalid(f"{json.dumps(text)} is not yes or no")
    if kind_ == "integer":
        try:
            return int(text)
        except ValueError:
            raise Invalid(f"{json.dumps(text)} is not an integer") from None
    if kind_ == "number":
        try:
            number = float(text)
        except ValueError:
            raise Invalid(f"{json.dumps(text)} is not a number") from None
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    return text


def _pick(text: str, allowed: list[Any]) -> Any:
    for option in allowed:
        if str(option) == text:
            return option
    for option in allowed:
        if str(option).lower() == text.lower():
            return option
    raise Invalid(f"{json.dumps(text)} is not one of: {', '.join(map(str, allowed))}")
