"""A cell result's value as data, beside its MIME bundle.

Steps run from the shell or from Python want the value itself (``"abc"``, ``42``), not its Node-style
text (``'abc'``). Objects and arrays already carry ``application/json``; a primitive's JSON rides
along under a private key (display/js/result.js) that is taken out here, so notebooks never see it.
"""

from __future__ import annotations

from typing import Any

VALUE_MIME = "application/vnd.mcp2repl.value+json"


def split_value(data: dict[str, Any] | None) -> tuple[dict[str, Any] | None, Any]:
    """The bundle without the private key, and the value as JSON data (None when it is not JSON)."""
    if data is None:
        return None, None
    if VALUE_MIME in data:
        data = dict(data)
        return data, data.pop(VALUE_MIME)
    return data, data.get("application/json")
