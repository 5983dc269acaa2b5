"""Questions from a step to the person behind the MCP client, as ``elicitation/create``.

A Session asks through one hook, ``ask(prompt) -> answer`` (the approval gate for destructive tools,
and an upstream server's elicitation field by field); in a notebook that is Jupyter's input request.
Here it becomes an elicitation of the client (when it declared the capability and the request can
carry one): a ``[y/N]`` question as a yes/no field, the approval gate's ``[y/N/a/s]`` as yes/no and
how far the yes reaches (this call, the step, the session), other choices as one of their letters, anything
else as a text field. An upstream server's own elicitation is forwarded whole (:meth:`elicit`), its
form as the server wrote it, so the person sees one form, not a question per field.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.session import ServerSession

#: A prompt that ends in its choices: ``… [y/N] `` (the capital letter is the default).
CHOICES = re.compile(r"\[([A-Za-z](?:/[A-Za-z])+)\]\s*:?\s*$")
#: The approval gate's ``[y/N/a/s]``: a yes, and how far it reaches (api/approvals.py); its legend line is the form's fields.
REMEMBER = {"this call": "y", "all its calls in this step": "a", "all its calls in this session": "s"}
LEGEND = re.compile(r"\n[^\n]*\[y/N/a/s\]\s*$")


def can_ask(session: ServerSession) -> bool:
    """Has the client a person to ask (the elicitation capability), and can this request ask now?"""
    caps = session.client_capabilities
    return bool(caps is not None and caps.elicitation is not None and session.can_send_request)


def question_schema(prompt: str) -> tuple[dict[str, Any], Callable[[dict[str, Any]], str]]:
    """The form for one prompt, and how its content becomes the answer text the Session expects."""
    found = CHOICES.search(prompt)
    letters = found.group(1).split("/") if found else []
    default = next((c.lower() for c in letters if c.isupper()), None)
    if sorted(c.lower() for c in letters) == ["n", "y"]:
        schema = {"type": "object", "properties": {"yes": {"type": "boolean", "title": "Yes", "default": default == "y"}}, "required": ["yes"]}
        return schema, lambda content: "y" if content.get("yes") is True else "n"
    if sorted(c.lower() for c in letters) == ["a", "n", "s", "y"]:  # the approval gate: yes, and for how many of the tool's calls
        props = {
            "yes": {"type": "boolean", "title": "Yes", "default": False},
            "for": {"type": "string", "title": "For", "enum": list(REMEMBER), "default": "this call"},
        }
        return {"type": "object", "properties": props, "required": ["yes"]}, lambda content: (
            REMEMBER.get(str(content.get("for")), "y") if content.get("yes") is True else "n"
        )
    if letters:
        prop: dict[str, Any] = {"type": "string", "title": "Answer", "enum": [c.lower() for c in letters]}
        if default:
            prop["default"] = default
        return {"type": "object", "properties": {"answer": prop}, "required": ["answer"]}, lambda content: str(content.get("answer", ""))
    schema = {"type": "object", "properties": {"answer": {"type": "string", "title": "Answer"}}, "required": ["answer"]}
    return schema, lambda content: str(content.get("answer", ""))


class ClientAsker:
    """The Session's ``ask`` for one ``run`` request, answered through the MCP client (form mode)."""

    def __init__(self, session: ServerSession, request_id: types.RequestId | None, redact: Callable[[str], str]) -> None:
        self.session = session
        self.request_id = request_id  # the question rides the run request's stream (HTTP: its SSE response)
        self.redact = redact

    async def __call__(self, prompt: str) -> str:
        schema, answer = question_schema(prompt)
        text = self.redact(CHOICES.sub("", LEGEND.sub("", prompt)).strip() or prompt)
        result = await self.form(text, schema)
        if result.action != "accept":
            return ""  # declined or cancelled: the default answer, which never runs a destructive tool
        return answer(result.content or {})

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        """An upstream server's elicitation, put to the client as the server asked it."""
        message = self.redact(f'MCP server "{server}" asks: {params.message}')
        if isinstance(params, types.ElicitRequestURLParams):
            caps = self.session.client_capabilities
            if caps is None or caps.elicitation is None or caps.elicitation.url is None:
                return types.ElicitResult(action="decline")  # the client cannot open links for its person
            return await self.url(message, params.url, params.elicitation_id)
        return await self.form(message, params.requested_schema)

    # How a question reaches the client: here a request inside the run request (2025-11-25);
    # rounds.RoundAsker sends it as the run's InputRequiredResult instead (2026-07-28).

    async def form(self, message: str, schema: dict[str, Any]) -> types.ElicitResult:
        return await self.session.elicit_form(message, schema, related_request_id=self.request_id)

    async def url(self, message: str, url: str, elicitation_id: str) -> types.ElicitResult:
        return await self.session.elicit_url(message, url, elicitation_id, related_request_id=self.request_id)
