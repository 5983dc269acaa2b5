"""The JavaScript engine: V8 context, cell rewriting and the JS<->Python bridge. No Jupyter imports."""

from .errors import JSError
from .runtime import BridgeError, CallContext, CellOutcome, Engine, Sink

__all__ = ["BridgeError", "CallContext", "CellOutcome", "Engine", "JSError", "Sink"]
