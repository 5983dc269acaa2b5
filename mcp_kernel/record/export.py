"""``mcp2repl sessions export``: a session's record made into a notebook that runs again from scratch.

The record keeps everything that happened; an export keeps what a person re-runs: the steps that
succeeded, in order, with their outputs. A failed step becomes a markdown note quoting it (or,
with ``keep_errors``, stays a code cell tagged ``raises-exception``, so nbclient and papermill run
on past it), and a step that never finished (the kernel died under it) a note too.

A step given ``data`` read it as its global ``data``; that binding is not in its source, so the
export writes it in: ``globalThis.data = …;`` on a line before the step. With ``parameters`` the
values move to one papermill ``parameters`` cell at the top (``const data_N = …;``, N the step's
execution count) and each step reads its own, so ``papermill -y 'data_3: {…}'`` re-runs the work
on other input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .notebook import KERNELSPEC, LANGUAGE_INFO


@dataclass
class Exported:
    """The clean notebook, and what went into it (for the command's one-line report)."""

    notebook: dict[str, Any]
    steps: int = 0
    failed: list[int] = field(default_factory=list)
    unfinished: int = 0
    parameters: list[str] = field(default_factory=list)


def _js(value: Any) -> str:
    """A JSON value as JavaScript source (JSON is; U+2028/9 are escaped so no line breaks inside)."""
    return json.dumps(value, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source or "")


def export(record: dict[str, Any], *, parameters: bool = False, keep_errors: bool = False) -> Exported:
    """The clean notebook of ``record`` (a session's notebook as read from its JSON)."""
    out = Exported({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    cells: list[dict[str, Any]] = out.notebook["cells"]
    given: list[str] = []
    for n, cell in enumerate(record.get("cells", [])):
        own = (cell.get("metadata") or {}).get("mcp2repl") or {}
        source = _text(cell.get("source"))
        if cell.get("cell_type") != "code":
            if own.get("note") == "trimmed":  # the record's own note: the export lacks those steps too
                cells.append({"cell_type": "markdown", "id": f"note-{n}", "metadata": {}, "source": source})
            continue
        count = cell.get("execution_count")
        status = own.get("status", "ok") if own else "ok"  # a cell another program added counts as a step
        if "status" not in own and own.get("started"):
            status = "unfinished"
        if status != "ok" and not (status == "error" and keep_errors):
            cells.append(_note(n, count, source, status, cell.get("outputs", [])))
            if status == "error":
                out.failed.append(count)
            else:
                out.unfinished += 1
            continue
        if "data" in own:
            if parameters:
                name = f"data_{count if isinstance(count, int) else n + 1}"
                given.append(f"const {name} = {_js(own['data'])};")
                out.parameters.append(name)
                source = f"globalThis.data = {name}; // this step's data, from the parameters cell\n{source}"
            else:
                source = f"globalThis.data = {_js(own['data'])}; // the data this step was given\n{source}"
        elif "dataOmitted" in own:
            source = f"// this step was given data too big to record ({own['dataOmitted']}): set globalThis.data first\n{source}"
        exported: dict[str, Any] = {
            "cell_type": "code",
            "id": str(cell.get("id") or f"step-{n}"),
            "metadata": {"tags": ["raises-exception"]} if status == "error" else {},
            "execution_count": count,
            "source": source,
            "outputs": cell.get("outputs", []),
        }
        cells.append(exported)
        out.steps += 1
    if given:
        cells.insert(0, {"cell_type": "code", "id": "parameters", "metadata": {"tags": ["parameters"]}, "execution_count": None, "source": "\n".join(given), "outputs": []})
    session = ((record.get("metadata") or {}).get("mcp2repl") or {}).get("session")
    out.notebook["metadata"] = {"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)}
    if session:
        out.notebook["metadata"]["mcp2repl"] = {"exportedFrom": session}
    return out


def _note(n: int, count: Any, source: str, status: str, outputs: list[dict[str, Any]]) -> dict[str, Any]:
    """A step left out, as a markdown note quoting it and (for a failure) its error."""
    step = f"Step [{count}]" if count is not None else "A step"
    if status == "error":
        error = next((o for o in outputs if o.get("output_type") == "error"), {})
        why = f"failed with `{error.get('ename', 'an error')}: {error.get('evalue', '')}`".replace("\n", " ")
        head = f"**{step} {why}**; it is left out (export with `--keep-errors` to keep it):"
    else:
        head = f"**{step} had not finished** when the record was read (it was running, or the kernel ended during it); it is left out:"
    fence = "````" if "```" in source else "```"
    return {"cell_type": "markdown", "id": f"left-out-{n}", "metadata": {}, "source": f"{head}\n\n{fence}javascript\n{source}\n{fence}"}
