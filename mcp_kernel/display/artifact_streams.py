"""Artifacts written a piece at a time: a big value's JSON never exists as one string.

display/js/artifacts.js serialises a big value in pieces of a few million characters and sends
them one request each: ``artifacts.open`` (name and format, checked at once), ``artifacts.write``
per piece, then ``artifacts.close``, which makes the artifact appear whole (the same atomic rename
as a one-piece save) and applies the folder's cap; ``artifacts.abort`` drops it. Each piece is
masked for configured secrets before it is written: JS cuts only between array elements and object
members, so no string value, and no secret in one, is ever split across two pieces.

A stream whose cell stopped before closing it (an interrupt, an error in the serialiser) is dropped
after :data:`IDLE` seconds without a piece, when the next stream opens or a piece arrives.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..engine import BridgeError, CallContext, Engine
from .artifact_cap import Eviction, Room
from .artifacts import ArtifactError, ArtifactStore, AtomicFile, Handle, cell_stem, check_name, utf8_pieces, with_extension

#: Seconds a stream may wait for its next piece before it is dropped as abandoned.
IDLE = 120.0
#: Streams open at once; a cell that opens more without closing them is refused.
MAX_OPEN = 16


@dataclass
class _Stream:
    name: str
    format: str
    file: AtomicFile
    auto: bool
    room: Room  # what the artifact may take of the folder's cap: a stream past it is dropped at once
    touched: float = field(default_factory=time.monotonic)


class ArtifactStreams:
    """The open streams of one artifact store. Called from worker threads: two saves may run at once."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store
        self._open: dict[int, _Stream] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def open(self, name: str, format: str, cell: str, auto: bool) -> int:
        self._drop_idle()
        if format not in ("json", "ndjson", "text"):
            raise ArtifactError(f"artifact format {format!r} cannot be written in pieces; use json, ndjson or text")
        name = with_extension(check_name(name), format) if name else self.store.unique_name(f"result-{cell_stem(cell)}", format)
        room = self.store.check_room(name, 0)
        with self._lock:
            if len(self._open) >= MAX_OPEN:
                raise ArtifactError(f"{MAX_OPEN} artifacts are being written at once already; await each api.saveArtifact")
            stream = next(self._ids)
            self._open[stream] = _Stream(name, format, self.store.create(name), auto, room)
        return stream

    def format(self, stream: int) -> str:
        """The format of an open stream's artifact (json, ndjson or text)."""
        return self._get(stream).format

    def write(self, stream: int, text: str) -> None:
        entry = self._get(stream)
        entry.file.write(utf8_pieces(text))
        entry.touched = time.monotonic()
        if problem := self.store.cap.refusal(entry.name, entry.file.size, entry.room, more=True):
            self.abort(stream)
            raise ArtifactError(problem)

    def close(self, stream: int) -> tuple[Handle, Eviction]:
        entry = self._take(stream)
        try:  # the folder may have filled meanwhile (other saves)
            self.store.check_room(entry.name, entry.file.size)
        except ArtifactError:
            entry.file.discard()
            raise
        return self.store.within_cap(self.store.commit(entry.name, entry.file), entry.auto)

    def abort(self, stream: int) -> None:
        with self._lock:
            entry = self._open.pop(stream, None)
        if entry is not None:
            entry.file.discard()

    def _get(self, stream: int) -> _Stream:
        self._drop_idle()
        with self._lock:
            entry = self._open.get(stream)
        if entry is None:
            raise ArtifactError(f"no artifact is being written as stream {stream!r} (it was closed, aborted or left idle for {IDLE:g} s)")
        return entry

    def _take(self, stream: int) -> _Stream:
        entry = self._get(stream)
        with self._lock:
            del self._open[stream]
        return entry

    def _drop_idle(self) -> None:
        now = time.monotonic()
        with self._lock:
            idle = [s for s, e in self._open.items() if now - e.touched > IDLE]
        for stream in idle:
            self.abort(stream)


def register(engine: Engine, store: ArtifactStore, redact: Callable[[str], str], redact_json: Callable[[str], str] | None = None) -> None:
    """Serve ``artifacts.open``, ``.write``, ``.close`` and ``.abort`` for display/js/artifacts.js (pieces of
    JSON masked by ``redact_json``, which keeps them JSON; text by ``redact``)."""
    streams = ArtifactStreams(store)
    masks = {"json": redact_json or redact, "ndjson": redact_json or redact}

    async def open_stream(params: dict[str, Any], ctx: CallContext) -> Any:
        name, fmt = params.get("name") or "", params.get("format", "json")
        return {"stream": await _artifact_call(streams.open, name, fmt, ctx.cell, params.get("auto") is True)}

    async def write(params: dict[str, Any], ctx: CallContext) -> Any:
        stream = params["stream"]
        mask = masks.get(await _artifact_call(streams.format, stream), redact)
        await _artifact_call(streams.write, stream, mask(params["data"]))

    async def close(params: dict[str, Any], ctx: CallContext) -> Any:
        handle, eviction = await _artifact_call(streams.close, params["stream"])
        if eviction.message():
            engine.sink.note(ctx.cell, eviction.message())
        return store.handle_json(handle)

    async def abort(params: dict[str, Any], ctx: CallContext) -> Any:
        await _artifact_call(streams.abort, params["stream"])

    engine.register("artifacts.open", open_stream)
    engine.register("artifacts.write", write)
    engine.register("artifacts.close", close)
    engine.register("artifacts.abort", abort)


async def _artifact_call(fn: Callable[..., Any], *args: Any) -> Any:
    """In a thread (files, fsync: never on the loop), with the store's errors as the cell's ArtifactError."""
    try:
        return await asyncio.to_thread(fn, *args)
    except ArtifactError as exc:
        raise BridgeError("ArtifactError", str(exc)) from None
