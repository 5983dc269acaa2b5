"""The envelope of a step: what an agent reads, the same from ``--json``, the step API and ``mcp2repl serve``.

``{"ok":true,"value":V}`` when the answer is JSON, ``{"ok":true,"text":"…"}`` when it is not,
``{"ok":true}`` for undefined, ``{"ok":false,"error":{"name","message","code"?,"stack"}}`` with only
the stack's frames (its first line would repeat name and message) and a ToolError's ``code``. Other keys only when they say
something: ``stdout``, ``stderr``, ``displays`` (each once, as JSON data when it had JSON),
``artifacts`` (compact handles), ``notes`` (a view's cut, failed or unfinished calls), and with a
trace only, ``calls`` and ``elapsed_ms``. Without a trace nothing in it varies between runs of the
same step. Every field is bounded here, by :func:`bounded`: an agent reads every byte of it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .result import DEFAULT_OUTPUT_LIMIT, TEXT_ROOM

if TYPE_CHECKING:
    from .result import StepError, StepResult

#: What a step reports of an artifact: its path is relative to the session's working folder.
HANDLE_KEYS = ("name", "format", "bytes", "path")


def artifact_handle(handle: dict[str, Any]) -> dict[str, Any]:
    """The one shape of an artifact handle a step reports (a cell's handle also has readWith, kind, created)."""
    return {key: handle[key] for key in HANDLE_KEYS if key in handle}


def read_with(handle: dict[str, Any]) -> str:
    """How a cell reads the artifact back (said in the human output's line, not in the envelope)."""
    return f"await api.readArtifact({json.dumps(handle.get('name'), ensure_ascii=False)})"


def frames(error: StepError) -> str:
    """The stack without its first line when that line is the error's name and message again."""
    head = f"{error.name}: {error.message}"
    if error.stack == head or error.stack == error.name:
        return ""
    return error.stack[len(head) :].lstrip("\n") if error.stack.startswith(head + "\n") else error.stack


def envelope(result: StepResult, limit: int = DEFAULT_OUTPUT_LIMIT, trace: bool = False) -> dict[str, Any]:
    """The step's envelope, bounded by ``limit`` (the session's output limit)."""
    out: dict[str, Any] = {"ok": result.ok}
    artifacts = list(result.artifacts)
    if result.error is not None:
        e = result.error
        out["error"] = {"name": e.name, "message": e.message, **({"code": e.code} if e.code else {}), "stack": frames(e)}
    elif result.is_json:
        value = result.value
        if _is_handle(value):  # the answer is an artifact's handle: said once, as the compact one
            value = artifact_handle(value)
            artifacts = [a for a in artifacts if a.get("name") != value.get("name")]
        out["value"] = value
    elif result.text is not None:
        out["text"] = result.text
    for key in ("stdout", "stderr"):
        if text := getattr(result, key):
            out[key] = text
    displays = [_display(result, i) for i in range(len(result.displays)) if i != result.answered_by]
    if displays:
        out["displays"] = displays
    if artifacts:
        out["artifacts"] = artifacts
    if result.notes:
        out["notes"] = list(result.notes)
    if trace:
        out["calls"] = result.calls
        out["elapsed_ms"] = round(result.elapsed_ms, 1)
    return bounded(out, limit, result.text)


def _display(result: StepResult, index: int) -> Any:
    data = result.display_data[index] if index < len(result.display_data) else None
    return data if data is not None else result.displays[index]


def _is_handle(value: Any) -> bool:
    return isinstance(value, dict) and value.get("kind") == "artifact" and isinstance(value.get("name"), str) and "readWith" in value


def bounded(envelope: dict[str, Any], limit: int, text: str | None = None) -> dict[str, Any]:
    """Every field of ``envelope`` within ``limit`` characters (in place; returned).

    A value whose JSON is longer is replaced by its text form (``text``, else its JSON, cut in
    turn) with a note of why and where the whole value is, if the step saved it: the answer is
    said once, as ``value`` or as ``text``. Texts are cut with a note of what was left out; the
    displays share one budget; notes, calls and artifacts are kept while they fit.
    """
    dumped = _json(envelope["value"]) if "value" in envelope else ""
    size = len(dumped)
    if size > limit:
        del envelope["value"]
        whole = text if text is not None else dumped
        cut = whole[: limit + TEXT_ROOM]
        left = f", {len(whole) - len(cut):,} more characters left out" if len(cut) < len(whole) else ""
        where = _artifact(envelope.get("artifacts") or [])
        where = f"; the full value is in the step's artifact {where}" if where else ""
        envelope["text"] = (
            f"{cut}\n[mcp2repl: the value's JSON has {size:,} characters, more than the output limit of {limit:,}: "
            f"this is its text form{left}{where}]"
        )
    elif isinstance(envelope.get("text"), str):
        envelope["text"] = _cut(envelope["text"], limit + TEXT_ROOM)
    for key in ("stdout", "stderr"):
        if isinstance(envelope.get(key), str):
            envelope[key] = _cut(envelope[key], limit)
    if isinstance(envelope.get("error"), dict):
        for key in ("message", "stack"):
            envelope["error"][key] = _cut(str(envelope["error"].get(key, "")), limit)
    if "displays" in envelope:
        envelope["displays"] = _displays(envelope["displays"], limit)
    for key in ("notes", "calls", "artifacts"):
        if key in envelope:
            envelope[key] = _fit(envelope[key] or [], limit)
    return envelope


#: Notes, calls and artifacts are the step's record, not its output: an artifact's handle is how its
#: value is read back, so a small output limit does not drop them; their lists share this floor.
LIST_FLOOR = DEFAULT_OUTPUT_LIMIT


def _displays(items: list[Any], limit: int) -> list[Any]:
    """The displays within one budget: JSON data that does not fit becomes its cut JSON text."""
    budget, shown = limit, []
    for index, item in enumerate(items):
        if budget <= 0:
            rest = len(items) - index
            shown.append(f"[mcp2repl: {rest:,} more display{'s' if rest > 1 else ''} left out]")
            break
        text = item if isinstance(item, str) else _json(item)
        shown.append(item if not isinstance(item, str) and len(text) <= budget else _cut(text, budget))
        budget -= len(text)
    return shown


def _json(value: Any) -> str:
    """JSON as the envelope is printed (compact): what its size is measured by."""
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[mcp2repl: {len(text) - limit:,} more characters left out]"


def _fit(items: list[Any], limit: int) -> list[Any]:
    """The leading items (their texts cut) while their JSON fits the budget, then ``{"omitted": N}``."""
    budget, size, kept = max(limit, LIST_FLOOR), 0, []
    for index, item in enumerate(items):
        if isinstance(item, dict):
            item = {k: _cut(v, limit) if isinstance(v, str) else v for k, v in item.items()}
        elif isinstance(item, str):
            item = _cut(item, limit)
        size += len(_json(item)) + 1
        if size > budget:
            return [*kept, {"omitted": len(items) - index}]
        kept.append(item)
    return kept


def _artifact(handles: list[dict[str, Any]]) -> str:
    """Where the step saved its value (the artifact the result formatter names ``result-…``)."""
    for handle in handles:
        if isinstance(handle, dict) and str(handle.get("name", "")).startswith("result-"):
            return str(handle.get("path") or handle.get("name"))
    return ""
