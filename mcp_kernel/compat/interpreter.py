"""Private parts of CPython itself."""

from __future__ import annotations

import atexit


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
