"""V8's count of memory outside its heap (ArrayBuffer backing stores), read from any thread.

mini-racer's hard memory limit compares V8's *heap* to the limit after each collection; the bytes of
``ArrayBuffer``s, typed arrays and WebAssembly memories live outside it, so 3 GB of ``Uint8Array``s
passed a 256 MB limit until the host's OOM killer came. V8 counts those bytes itself: this reads the
count through V8's exported C++ API in mini-racer's library (private to mini-racer, so here), which
is a single atomic load and safe while JS runs. The isolate pointer is taken once, on V8's own
thread, inside a result callback (mini-racer's message-pump thread keeps the isolate entered).
Collection is asked for inside V8 (buffers.js), not from here: see engine/memory.py.
"""

from __future__ import annotations

import ctypes
from typing import Any

_CURRENT = "_ZN2v87Isolate13TryGetCurrentEv"
_EXTERNAL = "_ZN2v823ExternalMemoryAccounter49GetTotalAmountOfExternalAllocatedMemoryForTestingEPKNS_7IsolateE"


class ExternalMemory:
    """Bytes held outside V8's heap by one context."""

    def __init__(self, racer: Any) -> None:
        dll = racer._ctx._dll
        self._current = getattr(dll, _CURRENT)
        self._current.restype, self._current.argtypes = ctypes.c_void_p, []
        self._external = getattr(dll, _EXTERNAL)
        self._external.restype, self._external.argtypes = ctypes.c_int64, [ctypes.c_void_p]
        self.isolate: int | None = None

    async def attach(self, racer: Any) -> None:
        """Learn the context's isolate: on V8's thread, while one eval's result is handed over."""
        ctx = racer._ctx
        loud = ctx.handle_callback_from_v8

        def grab(callback_id: int, raw: Any) -> None:
            if self.isolate is None:
                self.isolate = self._current()
            loud(callback_id, raw)

        object.__setattr__(ctx, "handle_callback_from_v8", grab)  # a frozen dataclass
        try:
            await racer.eval_cancelable("0")
        finally:
            object.__setattr__(ctx, "handle_callback_from_v8", loud)

    def bytes(self) -> int:
        """External bytes now (0 before :meth:`attach`)."""
        return int(self._external(self.isolate)) if self.isolate else 0
