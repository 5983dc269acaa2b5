"""Step clients: drive mcp2repl kernels one step at a time, from the shell (cli/) or from Python.

``KernelSession`` attaches to (or starts) a named session: a detached kernel under
``.mcp2repl/sessions/``, or a kernel behind a Jupyter gateway. It talks the Jupyter protocol
itself (wire.py: pyzmq; gateway.py: REST and websocket) and imports nothing of the kernel.
Names are imported on first use: the command line's warm path reads result.py alone first.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KernelSession", "SessionError", "StartOptions", "StepError", "StepResult"]
_WHERE = {
    "KernelSession": "kernel_session",
    "SessionError": "registry",
    "StartOptions": "registry",
    "StepError": "result",
    "StepResult": "result",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
