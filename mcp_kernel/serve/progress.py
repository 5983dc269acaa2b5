"""``notifications/progress`` for a long ``run``: what the step's call display says, a few times a second.

The Session's call trace (display/calltrace.py) already turns a step's tool calls into one live
line (calls so far, the ones in flight, a tool's own progress message); it reaches serve as
display messages of the step's output. A client that sent a ``progressToken`` gets that line as
the progress message, at most :data:`PER_SECOND` times a second, and a keepalive at least every
:data:`KEEPALIVE` seconds while nothing changes, so clients that end idle requests keep waiting.
The progress number counts notifications: it must grow with each one, and a step has no total.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..client.result import TRACE_PREFIX

PER_SECOND = 2
KEEPALIVE = 10.0

Send = Callable[[float, str], Awaitable[None]]


class StepProgress:
    """Progress of one step, sent by :meth:`run` (a task beside the step) through ``send``."""

    def __init__(self, send: Send, keepalive: float = KEEPALIVE) -> None:
        self.send = send
        self.keepalive = keepalive
        self.started = time.monotonic()
        self.line: str | None = None
        self.sent = 0
        self._changed = asyncio.Event()

    def listen(self, kind: str, content: dict[str, Any]) -> None:
        """An output message of the step: the call display's text is the news."""
        if kind not in ("display_data", "update_display_data"):
            return
        display_id = (content.get("transient") or {}).get("display_id") or ""
        text = (content.get("data") or {}).get("text/plain")
        if display_id.startswith(TRACE_PREFIX) and isinstance(text, str):
            self.line = " · ".join(part.strip() for part in text.splitlines() if part.strip())
            self._changed.set()

    async def run(self) -> None:
        """Send news when there is some (at most PER_SECOND a second), else a keepalive; until cancelled."""
        gap = 1 / PER_SECOND
        while True:
            try:
                await asyncio.wait_for(self._changed.wait(), max(gap, self.keepalive - gap))
            except TimeoutError:
                pass
            self._changed.clear()
            await self._send()
            await asyncio.sleep(gap)

    async def _send(self) -> None:
        self.sent += 1
        elapsed = time.monotonic() - self.started
        await self.send(float(self.sent), self.line or f"running, {elapsed:.0f} s")
