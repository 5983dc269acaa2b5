"""Kernels of tests/api beyond conftest's KernelProcess: one started on a module's own config, and a
cell run as a person at a terminal runs it, its stdin prompts answered in order.

Every module that asks a person (the approval gate, approvals, elicitation, a server's words in a
dialog) answers the same way, so a change to how the kernel asks is met in one place.
"""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import CELL_OUTPUTS, Cell, KernelProcess


@contextmanager
def configured(cwd: Path, config: dict[str, Any], file: str = "mcp.json", **env: str) -> Iterator[KernelProcess]:
    """A kernel in ``cwd`` whose ``file`` holds ``config``, once its servers are up; shut down after."""
    (cwd / file).write_text(json.dumps(config), encoding="utf-8")
    kernel = KernelProcess(cwd, **env)
    try:
        kernel.wait_for_servers()
        yield kernel
    finally:
        kernel.close()


class Talk(Cell):
    """A cell run with stdin allowed: what :class:`Cell` holds, the prompts it asked, its tool calls."""

    def __init__(self, reply: dict[str, Any], everything: list[dict[str, Any]], seconds: float, prompts: list[str]) -> None:
        super().__init__(reply, everything, seconds)
        self.prompts = prompts
        self.calls: list[dict[str, Any]] = (self.metadata.get("mcp2repl") or {}).get("calls", [])

    @property
    def value(self) -> Any:
        """The cell's value as JSON (numbers and strings from their text)."""
        data = self.result
        return data["application/json"] if "application/json" in data else json.loads(data["text/plain"].replace("'", '"'))


def converse(k: KernelProcess, code: str, answers: list[str], *, rest: str | None = None, timeout: float = 180) -> Talk:
    """Execute ``code`` with stdin allowed, answering each input request with the next of ``answers``.

    Once they are used up, ``rest`` answers every further request (answers left unused are fine
    then). Without ``rest`` the cell must ask exactly as many questions as there are answers: one
    more interrupts the cell (so the kernel does not wait on stdin), and either way the test fails
    once the cell has ended.
    """
    started = time.monotonic()
    msg_id = k.kc.execute(code, allow_stdin=True)
    left = list(answers)
    prompts: list[str] = []
    deadline = started + timeout
    reply = None
    while reply is None:
        assert time.monotonic() < deadline, f"no reply to the cell within {timeout:g} s; prompts so far: {prompts}"
        try:
            request = k.kc.get_stdin_msg(timeout=0.2)
        except queue.Empty:
            pass
        else:
            if request["msg_type"] == "input_request":
                prompts.append(request["content"]["prompt"])
                if left or rest is not None:
                    k.kc.input(left.pop(0) if left else rest)
                else:  # one question too many: stop the cell, and fail once it has ended (the kernel stays usable)
                    k.km.interrupt_kernel()
            continue
        try:
            msg = k.kc.get_shell_msg(timeout=0.2)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            reply = msg
    if rest is None:
        assert len(prompts) == len(answers), f"the cell asked {len(prompts)} questions for the {len(answers)} answers {answers}: {prompts}"
    outputs: list[dict[str, Any]] = []
    while True:
        msg = k.kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
        if msg["msg_type"] in CELL_OUTPUTS:
            outputs.append({"type": msg["msg_type"], **msg["content"]})
    return Talk(reply, outputs, time.monotonic() - started, prompts)
