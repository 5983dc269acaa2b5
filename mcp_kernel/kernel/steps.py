"""What a step client (``mcp_kernel/client``) asks of one cell, and what that cell's reply tells it.

A step client marks its execute request with ``metadata["mcp2repl"]``: ``value`` (the answer comes
back as data), ``data`` (the step's global ``data``), ``timeout`` and ``max_output_chars`` (limits of
this cell only: an existing session's options cannot change, a step's can) and ``trace`` (send the
call trace). A notebook's request has none of it, and its reply keeps ``calls`` as it always had.
"""

from __future__ import annotations

from typing import Any

from ..session import Result


def execute_options(step: dict[str, Any]) -> dict[str, Any]:
    """``Session.execute`` keywords from a step's request metadata (only what it gave, and valid)."""
    given: dict[str, Any] = {"data": step["data"]} if "data" in step else {}
    timeout = step.get("timeout")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        given["time_limit"] = float(timeout)
    chars = step.get("max_output_chars")
    if isinstance(chars, int) and not isinstance(chars, bool) and chars > 0:
        given["max_output_chars"] = chars
    return given


def reply_metadata(result: Result, step: dict[str, Any]) -> dict[str, Any]:
    """``metadata["mcp2repl"]`` of the cell's reply: the trace for notebooks; the answer for a step.

    A step gets its value (only when it is JSON), the artifacts it saved, the display that already
    shows the answer, and notes (a view's cut, failed or unfinished calls); the trace, with
    timings that differ on every run, only when it asked for it.
    """
    if not step.get("value"):
        return {"calls": result.calls}
    meta: dict[str, Any] = {"artifacts": result.artifacts}
    if result.is_json:
        meta["value"] = result.value
    if result.shown:
        meta["shown"] = result.shown
    if result.notes:
        meta["notes"] = result.notes
    if result.error is not None and result.error.extra.get("code"):
        meta["code"] = result.error.extra["code"]
    if step.get("trace"):
        meta["calls"] = result.calls
    return meta
