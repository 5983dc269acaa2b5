"""A ``run`` whose step asks a 2026-07-28 client mid-step: multi round-trip requests (MRTR).

A 2025-11-25 client is asked inside the request (``elicitation/create`` on its stream, asking.py).
A 2026-07-28 client cannot be sent a request mid-request: the question travels as the *result* of
``tools/call``, an ``InputRequiredResult`` with one elicitation input request and a ``requestState``,
and the client retries the same call with its answer. The step does not end in between: it stays
suspended in its session (its JS state, in-flight calls and time limit intact) awaiting the answer;
:class:`Suspended` keeps it under a random key, the ``requestState``. The SDK's
``RequestStateBoundary`` (installed by app.py) seals that key per request (encrypted, bound to the
tool and its arguments, expiring), so a handler only ever sees keys it minted; a key is used once.

One :class:`Running` follows a step across its rounds, whichever era: each request waits until the
step ends (its result) or asks (an input request). A cancelled request interrupts the step like
Ctrl-C, as it always did. A step whose client never answers is interrupted after
``ServeOptions.answer_wait`` seconds with its question answered "no"; its session stays usable.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext

from ..client.result import StepError, StepResult
from .asking import ClientAsker
from .content import Images, error_result, step_result
from .progress import StepProgress

log = logging.getLogger(__name__)

#: Seconds a cancelled step gets to stop after its interrupt before the request is let go anyway.
STOP_GRACE = 30.0
#: The key of the one input request a round carries.
ASK = "ask"
Question = tuple[types.ElicitRequest, "asyncio.Future[types.ElicitResult]"]


def asks_by_rounds(session: Any) -> bool:
    """A client with a person to ask (elicitation declared) that cannot be sent a request mid-request."""
    caps = session.client_capabilities
    return bool(caps is not None and caps.elicitation is not None and not session.can_send_request)


class Running:
    """One ``run``'s step, followed across the requests of its rounds."""

    def __init__(self, backend: Any, images: Images) -> None:
        self.backend = backend
        self.images = images
        self.ticket = object()
        self.step: asyncio.Future[StepResult] | None = None
        self.progress: StepProgress | None = None  # the current round's (its request's progress token)
        self.questions: asyncio.Queue[Question] = asyncio.Queue()
        self.pending: asyncio.Future[types.ElicitResult] | None = None  # the answer the step awaits

    def listen(self, kind: str, content: dict[str, Any]) -> None:
        self.images.listen(kind, content)
        if self.progress is not None:
            self.progress.listen(kind, content)

    async def ask_client(self, request: types.ElicitRequest) -> types.ElicitResult:
        """The step's side: put the question to the current round, wait for the next round's answer."""
        answer: asyncio.Future[types.ElicitResult] = asyncio.get_running_loop().create_future()
        self.questions.put_nowait((request, answer))
        return await answer

    async def round(self) -> StepResult | types.ElicitRequest:
        """Wait for the step's result, or its next question (then it stays suspended, :attr:`pending`)."""
        assert self.step is not None
        asked = asyncio.ensure_future(self.questions.get())
        try:
            await asyncio.wait({self.step, asked}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # notifications/cancelled, or the client went away: like Ctrl-C
            asked.cancel()
            self.interrupt()
            with anyio.CancelScope(shield=True):
                await asyncio.wait({self.step}, timeout=STOP_GRACE)
            raise
        if asked.done() and not self.step.done():
            request, self.pending = asked.result()
            return request
        asked.cancel()
        try:
            return self.step.result()
        except Exception as exc:  # a broken step must still answer, with what happened
            log.error("a step failed inside mcp2repl", exc_info=exc)
            return StepResult(error=StepError("InternalError", f"mcp2repl could not run the step: {type(exc).__name__}: {exc}", ""))

    def interrupt(self) -> None:
        assert self.step is not None
        if self.backend.running is self.ticket:
            self.backend.interrupt()
        else:  # still waiting for an earlier step of its session: it never starts
            self.step.cancel()

    def answer(self, result: types.ElicitResult) -> None:
        if self.pending is not None and not self.pending.done():
            self.pending.set_result(result)
        self.pending = None


class RoundAsker(ClientAsker):
    """The Session's ``ask`` for a 2026-07-28 client: each question is an input request of a round."""

    def __init__(self, session: Any, running: Running, redact: Any) -> None:
        super().__init__(session, None, redact)
        self.running = running

    async def form(self, message: str, schema: dict[str, Any]) -> types.ElicitResult:
        return await self.running.ask_client(types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema)))

    async def url(self, message: str, url: str, elicitation_id: str) -> types.ElicitResult:
        params = types.ElicitRequestURLParams(message=message, url=url, elicitation_id=elicitation_id)
        return await self.running.ask_client(types.ElicitRequest(params=params))


class Suspended:
    """Steps waiting for their client's answer, by the key their ``requestState`` carries."""

    def __init__(self, wait: float) -> None:
        self.wait = wait
        self.parked: dict[str, tuple[Running, asyncio.TimerHandle]] = {}

    async def follow(self, ctx: ServerRequestContext[Any], running: Running) -> types.CallToolResult | types.InputRequiredResult:
        """One request's part of the step: its result, or its next question as an InputRequiredResult."""
        token = _progress_token(ctx)
        running.progress = StepProgress(lambda n, text: ctx.session.report_progress(n, None, text)) if token is not None else None
        ticker = asyncio.ensure_future(_quietly(running.progress.run())) if running.progress is not None else None
        try:
            outcome = await running.round()
        finally:
            running.progress = None
            if ticker is not None:
                ticker.cancel()
        if isinstance(outcome, StepResult):
            return step_result(outcome, running.images)
        key = secrets.token_urlsafe(24)
        self.parked[key] = (running, asyncio.get_running_loop().call_later(self.wait, self._abandon, key))
        return types.InputRequiredResult(input_requests={ASK: outcome}, request_state=key)

    async def resume(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        """A retry: hand its answer to the suspended step and follow it (the state was unsealed by the SDK)."""
        found = self.parked.pop(params.request_state or "", None)
        if found is None:
            return error_result(
                "run: this answer's question is no longer waiting: it was answered already, or its step waited "
                f"longer than {self.wait:g} s and was interrupted (its session keeps its state); run the step again"
            )
        running, timer = found
        timer.cancel()
        answer = (params.input_responses or {}).get(ASK)
        running.answer(answer if isinstance(answer, types.ElicitResult) else types.ElicitResult(action="cancel"))
        return await self.follow(ctx, running)

    def _abandon(self, key: str) -> None:
        found = self.parked.pop(key, None)
        if found is None:
            return
        running, _ = found
        log.warning("a step waited %g s for its client's answer and is interrupted; its question counts as declined", self.wait)
        running.interrupt()
        running.answer(types.ElicitResult(action="cancel"))  # the default answer: never runs a destructive tool
        assert running.step is not None
        running.step.add_done_callback(_consumed)  # nobody reads its result now

    def close(self) -> None:
        for key in list(self.parked):
            self._abandon(key)


def _consumed(step: asyncio.Future[StepResult]) -> None:
    if not step.cancelled() and step.exception() is not None:
        log.warning("the interrupted step of an unanswered question failed", exc_info=step.exception())


def _progress_token(ctx: ServerRequestContext[Any]) -> Any:
    meta: Any = ctx.meta or {}
    return meta.get("progressToken", meta.get("progress_token")) if isinstance(meta, dict) else getattr(meta, "progress_token", None)


async def _quietly(ticking: Any) -> None:
    """Progress is a courtesy: a client that cannot take it (gone, or a closed stream) must not end the step."""
    try:
        await ticking
    except asyncio.CancelledError:
        raise
    except Exception:
        log.debug("progress notification failed", exc_info=True)
