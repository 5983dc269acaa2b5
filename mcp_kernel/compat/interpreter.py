"""Private parts of CPython itself."""

from __future__ import annotations

import atexit
import contextlib
import os
from collections.abc import Iterable
from typing import Any, NoReturn


def run_exit_handlers() -> None:
    """Run the ``atexit`` handlers now, last registered first, as the interpreter does at exit.

    A one-shot run ends with ``os._exit`` once its output is flushed (cli/oneshot.py: ``leave``):
    the interpreter's own teardown of V8's isolate and ~300 modules adds 10-20 ms to every run and
    does nothing anyone sees. What must still happen at exit is registered with ``atexit`` (this
    process's run folder is removed, logging's handlers are flushed), and only CPython's private
    ``atexit._run_exitfuncs`` runs those without exiting. Each handler runs once: the list is
    cleared as it goes, so a later normal exit runs nothing twice.
    """
    atexit._run_exitfuncs()


def exit_now(status: int, streams: Iterable[Any]) -> NoReturn:
    """End the process now: the ``atexit`` handlers (:func:`run_exit_handlers`), then ``streams``
    flushed, then ``os._exit``, with no interpreter teardown (a one-shot run, a kernel that answered
    its shutdown request). A reader gone (``| head``) or a closed stream has nothing more to hear."""
    run_exit_handlers()
    for stream in streams:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(status)
