"""A cell's output as IOPub messages, sent with the parent of the request that started the cell.

Everything a cell shows goes through :meth:`ParentOutput.publish`, so a named session's record
(recording.py) is given exactly what went out: the messages after masking and bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .kernel import MCPKernel

#: Hears every message a cell's output sent: (step key, msg_type, content).
Tee = Callable[[str, str, dict[str, Any]], None]


def lighten(request: dict[str, Any]) -> None:
    """Drop an ended cell's code and step data from its request, which outlives it.

    ipykernel keeps the request in a context variable, and every timer and task the cell's request
    made holds that context: asyncio keeps a cancelled timer (a timeout that was not needed) queued
    until its time. Whole, the requests of the last seconds to minutes stayed in memory: a few KB
    a step, 4 MB a step of a 4 MB cell. Nothing reads them after the cell (the reply uses the
    header; the record took its copy when the cell began).
    """
    content, metadata = request.get("content"), request.get("metadata")
    if isinstance(content, dict) and "code" in content:
        content["code"] = ""
    own = metadata.get("mcp2repl") if isinstance(metadata, dict) else None
    if isinstance(own, dict):
        own.pop("data", None)


class ParentOutput:
    """A cell's output as IOPub messages with the parent of the request that started the cell."""

    def __init__(self, kernel: MCPKernel, parent: dict[str, Any], tee: Tee | None = None, key: str = "") -> None:
        self.kernel = kernel
        self.parent = parent
        self.tee = tee
        self.key = key
        self.published = False  # the reply then waits for IOPub to send it (compat.iopub_sent)

    def settle(self, tee: Tee | None) -> None:
        """The cell ended: keep only what its late output needs (a timer's), not the whole request.

        The Session keeps a cell's Output for its late output long after the cell (KEPT_OUTPUTS),
        and the request held its code — a 4 MB cell kept 4 MB, hundreds of them. Late output needs
        only the parent's header, and the tee of the record (a finished direct step hears nothing).
        """
        self.parent = {"header": self.parent.get("header", {})}
        self.tee = tee

    def publish(self, msg_type: str, content: dict[str, Any]) -> None:
        k = self.kernel
        k.session.send(k.iopub_socket, msg_type, content, parent=self.parent, ident=k._topic(msg_type))
        self.published = True
        if self.tee is not None:
            self.tee(self.key, msg_type, content)

    def stream(self, name: str, text: str) -> None:
        self.publish("stream", {"name": name, "text": text})

    def display(self, data: dict[str, Any], metadata: dict[str, Any], display_id: str | None, update: bool) -> None:
        msg_type = "update_display_data" if update and display_id else "display_data"
        self.publish(msg_type, {"data": data, "metadata": metadata, "transient": {"display_id": display_id} if display_id else {}})

    def clear_output(self, wait: bool) -> None:
        self.publish("clear_output", {"wait": wait})
