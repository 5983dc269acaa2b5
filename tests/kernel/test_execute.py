"""execute_request as the messaging spec has it: user_expressions, store_history and the counter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import KernelProcess


def _execute(kernel: KernelProcess, code: str, **options: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The reply content, and the execute_input messages of this request."""
    msg_id = kernel.kc.execute(code, **options)
    reply = kernel.reply(msg_id)
    inputs = []
    while True:
        msg = kernel.kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "execute_input":
            inputs.append(msg["content"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return reply, inputs


def test_user_expressions_are_evaluated_after_the_cell_each_with_its_outcome(kernel: KernelProcess) -> None:
    """Regression: user_expressions were ignored (``{}``)."""
    expressions = {"s": "JSON.stringify(stats)", "sum": "stats.n + 1", "bad": "nope.x", "stmt": "const z = 1", "none": "undefined"}
    reply, _ = _execute(kernel, "globalThis.stats = {n: 41}", user_expressions=expressions)
    found = reply["user_expressions"]
    assert found["s"] == {"status": "ok", "data": {"text/plain": "'{\"n\":41}'"}, "metadata": {}}
    assert found["sum"]["data"]["text/plain"] == "42"
    assert (found["bad"]["status"], found["bad"]["ename"], found["bad"]["evalue"]) == ("error", "ReferenceError", "nope is not defined")
    assert found["stmt"]["status"] == "error" and found["stmt"]["ename"] == "SyntaxError"
    assert found["none"] == {"status": "ok", "data": {"text/plain": "undefined"}, "metadata": {}}
    # expressions declare nothing and show nothing
    assert kernel.value("typeof z") == "'undefined'"


def test_user_expressions_of_a_silent_request_and_of_a_failed_cell(kernel: KernelProcess) -> None:
    reply, inputs = _execute(kernel, "globalThis.k = 7", silent=True, user_expressions={"k": "k * 6"})
    assert reply["user_expressions"]["k"]["data"]["text/plain"] == "42"
    assert inputs == []
    reply, _ = _execute(kernel, "throw new Error('x')", user_expressions={"k": "k"})
    assert reply["status"] == "error" and reply["user_expressions"] == {}


def test_store_history_false_does_not_count(kernel: KernelProcess) -> None:
    """Regression: store_history=False still incremented execution_count."""
    first, _ = _execute(kernel, "1")
    count = first["execution_count"]
    hidden, inputs = _execute(kernel, "2", store_history=False)
    assert inputs[0]["execution_count"] == count + 1  # shown as the number the next cell will get
    assert hidden["execution_count"] == count  # the reply carries the last stored one, as IPython does
    after, inputs = _execute(kernel, "3")
    assert after["execution_count"] == inputs[0]["execution_count"] == count + 1


def test_an_idle_kernel_has_not_loaded_psutil(kernel: KernelProcess) -> None:
    """Its connection file names the ip, so no interface scan (compat.FileIpFirst): ~3 MB of every kernel."""
    assert kernel.run("1 + 1").reply["status"] == "ok"
    maps = Path(f"/proc/{kernel.pid}/maps").read_text()
    assert "libmini_racer" in maps and "psutil" not in maps
