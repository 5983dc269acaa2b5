"""The one stop rule every client follows while it waits for a step (client/stopping.py)."""

from __future__ import annotations

import threading

from mcp_kernel.client.result import StepResult
from mcp_kernel.client.stopping import BACKSTOP, INTERRUPT, INTERRUPT_GRACE, WAIT, StopClock


def test_the_interrupt_waits_until_the_step_runs_and_is_sent_once() -> None:
    clock = StopClock(100.0, 2, threading.Event())
    assert clock.tick(100.0 + 2 + BACKSTOP - 0.1, running=True) is WAIT  # the kernel's own limit comes first
    assert clock.tick(100.0 + 2 + BACKSTOP, running=False) is WAIT  # another client's cell runs: not this one's to stop
    assert clock.tick(100.0 + 2 + BACKSTOP + 1, running=True) is INTERRUPT
    assert clock.tick(100.0 + 2 + BACKSTOP + 2, running=True) is WAIT  # sent once
    gave_up = clock.tick(100.0 + 2 + BACKSTOP + 1 + INTERRUPT_GRACE + 0.1, running=True)
    assert gave_up.message == "the kernel did not stop the step after an interrupt"
    assert clock.timed_out


def test_a_step_that_never_started_is_told_what_holds_the_kernel() -> None:
    asked = threading.Event()
    clock = StopClock(0.0, None, asked)
    assert clock.tick(50.0, running=False) is WAIT  # no time limit: waits for good
    asked.set()
    assert clock.tick(51.0, running=False) is WAIT
    err = clock.tick(51.0 + INTERRUPT_GRACE + 0.1, running=False)
    assert (err.name, err.message.split(":")[0]) == ("InterruptError", "interrupted before the step started")
    assert not clock.timed_out
    assert clock.outcome(StepResult()) == StepResult()  # an interrupt is not a timeout
