"""The Python side of ``api.saveArtifact``, ``api.readArtifact`` and ``api.artifacts``.

Values are serialised in JS (JSON text, plain text, or base64 for bytes) so only strings cross
the bridge; the store (mcp_kernel/artifacts.py) owns names, safety and atomic writes.
"""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path
from typing import Any

from ..artifacts import ArtifactError, ArtifactStore, Handle
from ..engine import BridgeError, CallContext, Engine
from .textview import records_table


def handle_json(handle: Handle) -> dict[str, Any]:
    """The handle as JS sees it, plus a path relative to the notebook for JupyterLab links."""
    data = handle.to_json()
    try:
        data["relPath"] = os.path.relpath(handle.path, Path.cwd())
    except ValueError:  # another drive on Windows
        pass
    return data


def register(engine: Engine, store: ArtifactStore) -> None:
    async def save(params: dict[str, Any], ctx: CallContext) -> Any:
        fmt = params.get("format", "json")
        data: str | bytes = params["data"]
        if fmt == "bytes":
            data = base64.b64decode(params["data"])
        name = params.get("name") or store.unique_name(f"result-{_cell_stem(ctx.cell)}", fmt)
        try:
            # in a thread: a 50 MB artifact must not stall the kernel's loop, and an interrupt
            # that cancels this task leaves the atomic write to finish or vanish on its own
            return handle_json(await asyncio.to_thread(store.save, name, data, fmt))
        except ArtifactError as exc:
            raise BridgeError("ArtifactError", str(exc)) from None

    async def read(params: dict[str, Any], ctx: CallContext) -> Any:
        try:
            fmt, content = await asyncio.to_thread(store.read, params["name"])
        except ArtifactError as exc:
            raise BridgeError("ArtifactError", str(exc)) from None
        if isinstance(content, bytes):
            return {"format": "bytes", "data": base64.b64encode(content).decode("ascii")}
        return {"format": fmt, "data": content}

    async def listing(params: Any, ctx: CallContext) -> Any:
        return [handle_json(h) for h in store.list()]

    async def text_table(params: dict[str, Any], ctx: CallContext) -> Any:
        return records_table(params["rows"])

    engine.register("api.textTable", text_table)
    engine.register("api.saveArtifact", save)
    engine.register("api.readArtifact", read)
    engine.register("api.artifacts", listing)


def _cell_stem(cell: str) -> str:
    return cell.replace("[", "").replace("]", "").replace("-", "s") or "value"
