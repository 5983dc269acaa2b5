"""The runtime API seen from JavaScript (``api.*``): readable JS files plus their Python side.

The JS files are loaded into every V8 context after the engine runtime, in this order.
"""

from __future__ import annotations

from importlib import resources

SCRIPTS = ("core.js", "render.js", "display.js", "artifacts.js", "shape.js", "print.js", "mcp.js", "discovery.js")


def scripts() -> list[tuple[str, str]]:
    """``(name, source)`` of every API script, for :meth:`Engine.add_script`."""
    root = resources.files("mcp_kernel.api")
    return [(f"api/{name}", (root / name).read_text(encoding="utf-8")) for name in SCRIPTS]
