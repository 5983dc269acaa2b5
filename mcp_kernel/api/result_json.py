"""A tool result as the JSON text JS receives, with its big strings set apart.

A text result of 50 MB (a file, an export) would otherwise be escaped into the JSON text by
Python, copied into V8 and unescaped there by ``JSON.parse``: three copies in two heaps, and the
kernel's peak memory many times the payload. A string this large goes to V8 as itself instead
(see ``JsonPieces`` in the engine's bridge); the JSON text holds ``null`` in its place.
"""

from __future__ import annotations

import json
from typing import Any

#: Strings at least this long travel beside the JSON text.
APART_MIN_CHARS = 256 * 1024


def result_json(result: Any, lean: bool) -> tuple[str, list[tuple[list[str | int], str]]]:
    """``(JSON text, [(path, text)])`` for a ``CallToolResult``; ``lean`` leaves out ``content``.

    Only the places a big text has in practice are looked at (a text content item, a top-level
    string of ``structuredContent``): anything else stays inside the JSON text, which is correct,
    only larger.
    """
    content = [] if lean else result.content
    structured = result.structured_content
    big = any(getattr(item, "type", None) == "text" and len(item.text) >= APART_MIN_CHARS for item in content) or (
        isinstance(structured, dict) and any(isinstance(v, str) and len(v) >= APART_MIN_CHARS for v in structured.values())
    )
    if not big:
        return result.model_dump_json(by_alias=True, exclude_none=True, exclude={"content"} if lean else None), []
    data: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"content"} if lean else None)
    apart: list[tuple[list[str | int], str]] = []
    for i, item in enumerate(data.get("content") or []):
        text = item.get("text") if item.get("type") == "text" else None
        if isinstance(text, str) and len(text) >= APART_MIN_CHARS:
            apart.append((["content", i, "text"], text))
            item["text"] = None
    found = data.get("structuredContent")
    if isinstance(found, dict):
        for key, value in found.items():
            if isinstance(value, str) and len(value) >= APART_MIN_CHARS:
                apart.append((["structuredContent", key], value))
                found[key] = None
    return json.dumps(data, ensure_ascii=False), apart
