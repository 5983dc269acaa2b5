"""What the kernel face tells a named session's record (mcp_kernel/record) about each step.

The kernel sees every step, whoever sent it: ``mcp2repl --session`` (``cli``), ``KernelSession``
(``step-api``), ``mcp2repl serve`` (``serve``) or any Jupyter client (``jupyter``: a request
without our metadata). So the record is fed here, below every client, with what went out on
IOPub after masking and bounds; numbered cells only (silent and unstored requests are not steps).
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from ..record.notebook import Notebook
from ..record.writer import Writer

#: How long a step's reply waits for its cell to be written (the record then lags, nothing is lost).
END_WAIT = 2.0
#: Tool calls kept in a cell's metadata, and the largest step ``data`` recorded with it (JSON characters).
MAX_CALLS = 50
MAX_DATA = 64_000
CLIENT = re.compile(r"^[a-z][a-z0-9-]{0,31}$")


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="milliseconds")


def client_of(parent: dict[str, Any]) -> str:
    """Who sent the request: the step client's own word, else ``jupyter``."""
    own = (parent.get("metadata") or {}).get("mcp2repl") or {}
    client = own.get("client") if isinstance(own, dict) else None
    return client if isinstance(client, str) and CLIENT.match(client) else "jupyter"


def short_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A step's tool calls as the record keeps them: which tool, whether it worked, how long (and how many)."""
    kept = []
    for call in calls[:MAX_CALLS]:
        row: dict[str, Any] = {"tool": f"{call.get('server')}.{call.get('tool')}", "ok": bool(call.get("ok")), "ms": call.get("ms")}
        if call.get("count"):
            row["count"] = call["count"]
        kept.append(row)
    return kept


class Recording:
    """The record of this kernel's steps, at ``path`` (the kernel's ``--MCPKernel.record``)."""

    def __init__(self, path: str, redact: Any) -> None:
        target = Path(path)
        name = target.name.removesuffix(".ipynb")
        self.writer = Writer(target, Notebook(name))
        self.redact = redact  # the Session's redactor: sources and data are masked as outputs are

    def begin(self, parent: dict[str, Any], code: str, count: int) -> str:
        key = str(parent.get("header", {}).get("msg_id") or f"step-{count}")
        meta: dict[str, Any] = {"client": client_of(parent), "started": _now()}
        own = (parent.get("metadata") or {}).get("mcp2repl") or {}
        if isinstance(own, dict) and "data" in own:
            data = self.redact.data(own["data"])  # JSON as the request brought it: kept as is, measured
            text = json.dumps(data)
            if len(text) <= MAX_DATA:
                meta["data"] = data
            else:
                meta["dataOmitted"] = f"{len(text):,} characters of JSON, more than the record keeps ({MAX_DATA:,})"
        self.writer.begin(key, self.redact.text(code), count, meta)
        return key

    def output(self, key: str, msg_type: str, content: dict[str, Any]) -> None:
        self.writer.output(key, msg_type, content)

    async def end(self, key: str, count: int, ok: bool, calls: list[dict[str, Any]]) -> None:
        done = self.writer.end(key, count, {"ended": _now(), "status": "ok" if ok else "error", "calls": short_calls(calls)})
        try:
            await asyncio.wait_for(asyncio.wrap_future(done), END_WAIT)
        except TimeoutError:
            pass

    def close(self) -> None:
        self.writer.close()
