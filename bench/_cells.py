"""What the benchmarks share: run a cell on a kernel client and get its text/plain result."""

from __future__ import annotations

from typing import Any


async def cell_value(kc: Any, code: str, timeout: float = 600) -> str:
    """The cell's execute_result text; a JS error raises with its traceback."""
    out: list[str] = []

    def hook(msg: dict) -> None:
        if msg["msg_type"] == "execute_result":
            out.append(msg["content"]["data"]["text/plain"])
        elif msg["msg_type"] == "error":
            raise RuntimeError("\n".join(msg["content"]["traceback"]))

    await kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    return out[-1]
