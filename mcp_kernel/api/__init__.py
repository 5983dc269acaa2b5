"""The runtime API seen from JavaScript (``api.*``, ``mcp.*``, ``tools.*``): readable JS files with
JSDoc, plus their thin Python side (tools.py, discovery.py, completion.py, guide.py, types.py).

The JS files are loaded into every V8 context after the engine runtime and the display layer, in
this order.
"""

from __future__ import annotations

from importlib import resources

SCRIPTS = ("core.js", "display.js", "artifacts.js", "print.js", "agent.js", "mcp.js", "plan.js", "discovery.js", "types.js", "stepdata.js")


def scripts() -> list[tuple[str, str]]:
    """``(name, source)`` of every API script, for :meth:`Engine.add_script`."""
    root = resources.files("mcp_kernel.api")
    return [(f"api/{name}", (root / name).read_text(encoding="utf-8")) for name in SCRIPTS]
