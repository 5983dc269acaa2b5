"""The Python side of a step's ``data`` (stepdata.js): bound as the global ``data`` before the step,
the previous value restored after it.

The value travels as context data (JSON), never pasted into the step's source, and the step waits
for V8's acknowledgement: an inbound item and a cell's start are separate V8 tasks, so without it
the cell could start first.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..engine import CallContext, Engine, JSError

log = logging.getLogger(__name__)


class _NoData:
    def __repr__(self) -> str:
        return "NO_DATA"


#: ``Session.execute(data=NO_DATA)``: the step binds nothing (``None`` would bind ``null``).
NO_DATA: Any = _NoData()
#: Seconds to wait for V8 to acknowledge a binding (it answers within a round trip when idle).
ACK_TIMEOUT = 30.0


class StepData:
    """Binds and unbinds ``data`` through the engine, one step at a time."""

    def __init__(self, engine: Engine, max_output_chars: int = 20000) -> None:
        self.engine = engine
        self.max_output_chars = max_output_chars  # the session's: restored after a step with its own
        self._ack: asyncio.Future[dict[str, Any]] | None = None
        engine.register_note("step.data", self._acknowledged)

    def _acknowledged(self, params: dict[str, Any], ctx: CallContext) -> None:
        if self._ack is not None and not self._ack.done():
            self._ack.set_result(params)

    async def bind(self, cell: str, value: Any, max_output_chars: int | None = None) -> JSError | None:
        """Make ``value`` the global ``data`` (NO_DATA: nothing to do) and ``max_output_chars`` the step's
        output limit (view.js; None: the session's); the step's error when they could not be bound."""
        if value is NO_DATA and not max_output_chars:
            return None
        # a binding of nothing is acknowledged too: the step starts once its limit is in place
        message = {"bind": True, "value": value} if value is not NO_DATA else {"bind": False}
        limits = {"maxOutputChars": max(200, max_output_chars)} if max_output_chars else None
        if (error := await self._send(cell, message, limits)) is None:
            return None
        message = f"the step's data could not be bound: {error}"
        return JSError("Error", message, [f"Error: {message}"])

    async def unbind(self, cell: str, value: Any, max_output_chars: int | None = None) -> None:
        """Restore what ``data`` was before :meth:`bind` of ``value`` (nothing, or the user's own global),
        and the session's output limit if the step had its own."""
        limits = {"maxOutputChars": self.max_output_chars} if max_output_chars else None
        if (value is not NO_DATA or limits) and (error := await self._send(cell, {"bind": False}, limits)) is not None:
            log.warning("the step's data could not be unbound: %s", error)

    async def _send(self, cell: str, message: dict[str, Any], limits: dict[str, Any] | None = None) -> str | None:
        await self.engine.idle()  # an interrupt's recovery drops what is queued
        if limits is not None:  # queued before the message: in place once it is acknowledged
            self.engine.set_data("limits", limits)
        self._ack = asyncio.get_running_loop().create_future()
        self.engine.post(cell, "step.data", message)
        try:
            answer = await asyncio.wait_for(asyncio.shield(self._ack), ACK_TIMEOUT)
        except TimeoutError:
            return f"the JavaScript side did not take it within {ACK_TIMEOUT:g} s"
        finally:
            self._ack = None
        return answer.get("error")
