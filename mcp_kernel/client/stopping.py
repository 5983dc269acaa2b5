"""When a waiting step interrupts its kernel, and when it stops waiting: one rule for every client.

The kernel applies a step's time limit itself; a client only backs it up (a kernel that does not
answer at all) and passes on :meth:`interrupt` requests. The same rule serves the ZMQ client
(client/wire.py), the kernel's own socket steps (kernel/direct.py) and the gateway client
(client/gateway.py), so they cannot drift apart in what an agent is told.
"""

from __future__ import annotations

import threading

from .result import StepError, StepResult
from .result import timed_out as as_timeout

#: Seconds past a step's time limit (which the kernel applies) before the client interrupts it
#: itself: the kernel's limit covers the cell, this one a kernel that does not answer at all.
BACKSTOP = 5.0
#: Seconds a step waits, after interrupting for its time limit, for the kernel's own reply.
INTERRUPT_GRACE = 10.0

#: What :meth:`StopClock.tick` asks of the waiting client.
WAIT = False
INTERRUPT = True


def not_started(timed_out: bool, waited: float) -> StepError:
    """A step stopped before the kernel started it: another client's cell still runs there."""
    why = f"the step waited {waited:.0f} s and was stopped before it started" if timed_out else "interrupted before the step started"
    message = (
        f"{why}: the session's kernel is running a cell another client sent (a person, from JupyterLab or a Jupyter console), "
        "which was left running. This step stays queued in the kernel and runs when that cell ends"
    )
    name = "TimeoutError" if timed_out else "InterruptError"
    return StepError(name, message, f"{name}: {message}")


class StopClock:
    """One step's stop state: asked (time limit or interrupt), interrupt sent, given up.

    Stopping is asked for at the time limit (or on ``asked``), but the interrupt is sent only once
    the step runs: until then the kernel runs a cell of a client that holds no step lock (a
    person's, from JupyterLab), and the interrupt would stop that cell instead of this one.
    """

    def __init__(self, started: float, timeout: float | None, asked: threading.Event) -> None:
        self.started = started
        self.timeout = timeout
        self.deadline = started + timeout + BACKSTOP if timeout else None
        self.asked = asked
        self.stop_asked: float | None = None
        self.stopped_at: float | None = None
        self.timed_out = False

    def tick(self, now: float, running: bool) -> bool | StepError:
        """:data:`INTERRUPT`: interrupt the kernel now; a StepError: stop waiting with it; else :data:`WAIT`."""
        if self.stop_asked is None and (self.asked.is_set() or (self.deadline is not None and now >= self.deadline)):
            self.timed_out = not self.asked.is_set()
            self.stop_asked = now
        if self.stop_asked is None:
            return WAIT
        if self.stopped_at is None:
            if running:
                self.stopped_at = now
                return INTERRUPT
            if now - self.stop_asked > INTERRUPT_GRACE:
                return not_started(self.timed_out, (now - self.started) if self.timed_out else 0)
            return WAIT
        if now - self.stopped_at > INTERRUPT_GRACE:
            return StepError("InterruptError", "the kernel did not stop the step after an interrupt", "")
        return WAIT

    def outcome(self, result: StepResult) -> StepResult:
        """The step's result, shaped as a timeout when its time limit stopped it (here or in the kernel)."""
        limited = self.timed_out or (self.timeout and result.error is not None and result.error.name == "TimeoutError")
        return as_timeout(result, self.timeout or 0) if limited else result
