"""How values leave the kernel: MIME bundles, fitted views, artifacts and the live call trace.

The JS files shape and render values inside V8 and are loaded after the engine's runtime and
before the runtime API, in this order; ``result.js`` installs the engine's cell result formatter.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from ..engine import Engine
from . import artifact_streams, artifacts
from .artifacts import ArtifactStore

SCRIPTS = ("render.js", "project.js", "fit.js", "artifacts.js", "view.js", "result.js")


def scripts() -> list[tuple[str, str]]:
    """``(name, source)`` of every display script, for :meth:`Engine.add_script`."""
    root = resources.files("mcp_kernel.display") / "js"
    return [(f"display/{name}", (root / name).read_text(encoding="utf-8")) for name in SCRIPTS]


def serve_artifacts(engine: Engine, store: ArtifactStore, redact: Callable[[str], str], redact_json: Callable[[str], str] | None = None) -> None:
    """The bridge handlers of artifacts: whole saves, reads and listings, and big values in pieces.

    ``redact`` masks secrets in text saved; ``redact_json`` in JSON and NDJSON, keeping them JSON.
    """
    artifacts.register(engine, store, redact, redact_json or redact)
    artifact_streams.register(engine, store, redact, redact_json or redact)
