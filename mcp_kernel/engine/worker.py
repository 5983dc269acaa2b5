"""Big preparations run in a child process: the kernel's event loop must not wait for a tree to be freed.

Preparation (tree-sitter parses, the type strip, the rewrite) runs off the loop, in a thread, and
parses let go of the GIL often (treewalk.parse). But py-tree-sitter frees a tree in one C call
that holds the GIL: for a 1.5 MB array literal (about a million nodes) two to three seconds on a
loaded machine, once for each pass, and for that long the loop answered nothing (kernel_info,
interrupts, other requests). A child process has a GIL of its own. So work on an input of
:data:`THRESHOLD` characters or more runs there: the function and its arguments go to the child
pickled (a module-level function pickles by name), the result (the rewritten text and its source
map: plain data) comes back the same way, and the child ends with ``os._exit`` without freeing
anything. The ~0.2 s a child costs to start is nothing next to what such a cell costs anyway.
A stopped preparation (interrupt, time limit) kills the child.

Smaller inputs stay in a thread (the smallest on the loop: prepare.INLINE_CHARS): their trees are freed in milliseconds.
"""

from __future__ import annotations

import asyncio
import copyreg
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from . import treewalk

T = TypeVar("T")

#: Characters (or bytes) of input from which preparation runs in a child process.
THRESHOLD = 256 * 1024
#: Seconds between looks at the stop event while the child works.
_LOOK = 0.05


def size(args: tuple[Any, ...]) -> int:
    """The input's size: the longest text (or bytes) among the arguments."""
    return max((len(a) for a in args if isinstance(a, str | bytes)), default=0)


async def in_process(stop: threading.Event | None, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a child process (``fn`` at module level); raises what it raised, or
    :class:`treewalk.Stopped` once ``stop`` is set (the child is killed)."""
    import pickle  # only for a big cell: a session of small ones never loads it

    child = await asyncio.create_subprocess_exec(
        sys.executable, "-P", "-m", __name__,  # -P: nothing from the working folder shadows the kernel's modules
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # an interrupt signalled to the kernel's process group is the kernel's to handle
    )
    talk = asyncio.ensure_future(child.communicate(pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)))
    try:
        while not (await asyncio.wait({talk}, timeout=_LOOK))[0]:
            if stop is not None and stop.is_set():
                raise treewalk.Stopped()
        out, err = talk.result()
    finally:
        if child.returncode is None:
            child.kill()
            talk.add_done_callback(lambda t: t.cancelled() or t.exception())
    if child.returncode != 0 or not out:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
        raise RuntimeError(f"the preparation process failed: {tail[0]}")
    ok, value = pickle.loads(out)
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def rebuilt(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    """An exception as it was in the child, whatever its ``__init__`` asks for (CellSyntaxError, BridgeError)."""
    exc = cls.__new__(cls)
    BaseException.__init__(exc, *args)
    exc.__dict__.update(state)
    return exc


def reduced(exc: BaseException) -> tuple[Any, ...]:
    return (rebuilt, (type(exc), exc.args, dict(exc.__dict__)))


def _child() -> None:
    """In the child: read the call, write its outcome, and leave without freeing a thing."""
    import pickle

    from mcp_kernel.engine import worker  # this module under its own name: the parent finds `rebuilt` there
    from mcp_kernel.engine.rewrite import CellSyntaxError

    copyreg.pickle(CellSyntaxError, worker.reduced)  # inside a result (prepare._ForV8)
    fn, args = pickle.load(sys.stdin.buffer)
    try:
        outcome: tuple[bool, Any] = (True, fn(*args))
    except Exception as exc:  # noqa: BLE001 - sent back, raised in the kernel
        copyreg.pickle(type(exc), worker.reduced)
        outcome = (False, exc)
    sys.stdout.buffer.write(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()
    os._exit(0)


if __name__ == "__main__":
    _child()
