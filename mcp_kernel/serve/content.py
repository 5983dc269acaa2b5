"""A step's result as MCP content: the one place the shared envelope becomes what a client reads.

``structuredContent`` is the step's envelope (``StepResult.envelope()``, what ``mcp2repl --json``
prints); the text block is for the model and never repeats the envelope: the value (its JSON, else
its text), then what the step printed, displayed and saved, or the error as the JS error name,
message and the user's frames. Images a tool returned or the code displayed (``api.png``) become
image content. When the envelope changes shape, this module is what follows it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import mcp_types as types

from ..client.envelope import read_with
from ..client.result import TRACE_PREFIX, StepResult

#: Images a step may return as image content, and their base64 characters in all (more is left out).
MAX_IMAGES = 8
MAX_IMAGE_CHARS = 8 << 20
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: An image inside a rich bundle's HTML (display/js/render.js writes MCP image items as data URLs).
_DATA_URL = re.compile(r'<img src="data:(image/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=]+)"')


class Images:
    """The images of one step, collected from its output messages (displays and the result)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []
        self.left_out = 0
        self._chars = 0

    def listen(self, kind: str, content: dict[str, Any]) -> None:
        if kind not in ("display_data", "execute_result"):
            return
        if ((content.get("transient") or {}).get("display_id") or "").startswith(TRACE_PREFIX):
            return
        data = content.get("data") or {}
        direct = [(mime, data[mime]) for mime in IMAGE_MIMES if isinstance(data.get(mime), str)]
        html = data.get("text/html")
        for mime, b64 in direct[:1] or (_DATA_URL.findall(html) if isinstance(html, str) else []):
            if len(self.found) >= MAX_IMAGES or self._chars + len(b64) > MAX_IMAGE_CHARS:
                self.left_out += 1
                continue
            self._chars += len(b64)
            self.found.append((mime, b64))


def step_result(result: StepResult, images: Images | None = None) -> types.CallToolResult:
    """``run``'s answer: a short text for the model, the envelope as structured content, images."""
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=step_text(result, images))]
    for mime, data in images.found if images else []:
        content.append(types.ImageContent(type="image", data=data, mime_type=mime))
    return types.CallToolResult(content=content, structured_content=result.envelope(), is_error=not result.ok)


def step_text(result: StepResult, images: Images | None = None) -> str:
    """What the model reads: the envelope's answer once (its JSON, else its text), then output,
    displays, artifacts and notes; or the error. Never the envelope itself, never a timing."""
    env = result.envelope()
    parts: list[str] = []
    if "value" in env:
        parts.append(json.dumps(env["value"], ensure_ascii=False, default=str, separators=(",", ":")))
    elif "text" in env:
        parts.append(env["text"])
    if "stdout" in env:
        parts.append(env["stdout"].rstrip("\n"))
    if "stderr" in env:
        parts.append("stderr: " + env["stderr"].rstrip("\n"))
    for shown in env.get("displays", []):
        text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
        if text and not (images and images.found and text.startswith("<image/")):
            parts.append(text)
    parts += [_artifact(h) for h in env.get("artifacts", []) if "name" in h]
    parts += env.get("notes", [])
    if images and images.left_out:
        parts.append(f"({images.left_out} more image{'s' if images.left_out > 1 else ''} left out)")
    if result.error is not None:
        e = result.error
        parts.append(e.stack if e.stack.startswith(f"{e.name}: ") else f"{e.name}: {e.message}\n{e.stack}".rstrip())
    return "\n".join(parts) if parts else "undefined"


def _artifact(handle: dict[str, Any]) -> str:
    size = handle.get("bytes")
    shown = f"{size:,} B" if isinstance(size, int) else "?"
    return f"artifact {handle.get('name')} ({shown}, {handle.get('format')}): {read_with(handle)}"


def data_result(structured: dict[str, Any], text: str) -> types.CallToolResult:
    """A discovery tool's answer: its data, and a few lines for the model."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def error_result(message: str) -> types.CallToolResult:
    """A tool call that did not run (bad arguments, an unknown tool path): one clear sentence."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def search_text(found: dict[str, Any]) -> str:
    items = found.get("items") or []
    lines = [f"{i['path']}: {i['description']}" if i.get("description") else i["path"] for i in items]
    more = f"; more from offset {found.get('nextOffset')}" if found.get("hasMore") else ""
    lines.append(f"({len(items)} of {found.get('total', len(items))}{more})" if items else "no tool matches")
    return "\n".join(lines)


def describe_text(found: dict[str, Any]) -> str:
    lines = [f"{found.get('path')}(args: {found.get('inputTypeScript')})"]
    if found.get("inputGuidance"):
        lines.append(str(found["inputGuidance"]))
    output = found.get("observedOutput")
    if output:
        lines.append(f"returns ({output.get('target')}): {output.get('typeScript')}")
    if found.get("annotations"):
        lines.append("annotations: " + json.dumps(found["annotations"], ensure_ascii=False))
    return "\n".join(lines)


def servers_text(rows: list[dict[str, Any]]) -> str:
    lines = []
    for r in rows:
        line = f"{r.get('name')} ({r.get('transport') or '-'}): {r.get('state')}, {r.get('tools', 0)} tools"
        if r.get("description"):
            line += f"; {r['description']}"
        if r.get("lastError"):
            line += f"; last error: {r['lastError']}"
        lines.append(line)
    return "\n".join(lines) or "no MCP servers"
