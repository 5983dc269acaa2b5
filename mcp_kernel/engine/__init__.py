"""The JavaScript engine: V8 context, cell rewriting and the JS<->Python bridge. Knows no MCP, API or display."""

from .bridge import BridgeError, CallContext, JsonPieces, JsonText, Sink
from .engine import CellOutcome, Engine
from .errors import JSError

__all__ = ["BridgeError", "CallContext", "CellOutcome", "Engine", "JSError", "JsonPieces", "JsonText", "Sink"]
