"""The JavaScript engine: V8 context, cell rewriting and the JS<->Python bridge. Knows no MCP, API or display.

The names below load with their modules on first use (PEP 562), not with the package: a one-shot
run loads V8 in a thread through ``engine.context`` while the rest of the kernel imports, and that
must not wait for the rewriter, the type stripper and the bridge (see mcp_kernel/early.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bridge import BridgeError, CallContext, JsonPieces, JsonText, Sink
    from .engine import CellOutcome, Engine
    from .errors import JSError

_HOMES = {
    "BridgeError": "bridge",
    "CallContext": "bridge",
    "JsonPieces": "bridge",
    "JsonText": "bridge",
    "Sink": "bridge",
    "CellOutcome": "engine",
    "Engine": "engine",
    "JSError": "errors",
}

__all__ = ["BridgeError", "CallContext", "CellOutcome", "Engine", "JSError", "JsonPieces", "JsonText", "Sink"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:  # a submodule (``from ..engine import nesting``) is imported by the import system itself
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
