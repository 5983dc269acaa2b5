"""Start-up work a one-shot run is sure to need, begun in a thread before the imports that come first.

``mcp2repl -e CODE`` spends most of its time importing the kernel, then ~35 ms loading V8: the
dlopen of mini-racer's 30 MB library and V8's process-wide init, both in C with the GIL released.
Begun here, in a thread, they run on the second core while the main thread imports the rest.
Nothing is decided early: the flags are the engine's (``configure_v8``), and when the Session
calls it the call waits for this one (mini-racer's init lock), or, if this one failed, does the
work again and raises in the main thread as it always did.

Import safety: the thread imports only ``engine.context`` and what it needs (mini-racer, compat),
and the standard modules those need are imported here first, in the caller's thread, so the
thread never waits for a module the main thread is in the middle of importing (no lock cycle).
"""

from __future__ import annotations

import asyncio  # noqa: F401 - for the thread's imports (see above)
import contextlib
import ctypes  # noqa: F401
import datetime  # noqa: F401
import json  # noqa: F401
import queue  # noqa: F401
import threading
import traceback  # noqa: F401
from importlib import resources  # noqa: F401


def _load_v8() -> None:
    with contextlib.suppress(Exception):  # the Session's own call does it again and reports why
        from .engine.context import configure_v8

        configure_v8()


def start_v8() -> threading.Thread:
    """Load V8 in the background (daemon: a run that ends first does not wait for it)."""
    thread = threading.Thread(target=_load_v8, name="mcp2repl-v8-load", daemon=True)
    thread.start()
    return thread
