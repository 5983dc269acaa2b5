"""Deep and big cells through a real kernel (issue 22, items 4 and 5): every request gets a reply,
and preparing a big cell leaves the kernel answering, interruptible and within its time limit.

Before: a 20,000-deep cell got no execute_reply at all (a RecursionError escaped do_execute), and
a big cell was prepared on the event loop: kernel_info, interrupts and the time limit waited for it.
"""

from __future__ import annotations

import time

from conftest import KernelProcess

DEEP = "{" * 20000 + "1" + "}" * 20000
BIG = "[" + "1," * 2_500_000 + "].length"  # 5 MB: seconds of preparation
TOO_DEEP = "nested too deeply: 20,000 levels of brackets (limit 1,000)"


def _reply(kernel: KernelProcess, msg_id: str, timeout: float = 60) -> dict:
    return kernel.reply(msg_id, timeout)


def test_every_request_about_a_deep_cell_gets_a_reply(kernel: KernelProcess) -> None:
    cell = kernel.run(DEEP, timeout=60)
    assert cell.reply["status"] == "error" and cell.reply["ename"] == "SyntaxError"
    assert cell.reply["evalue"].startswith(TOO_DEEP), cell.reply["evalue"]
    assert cell.error["traceback"][0].startswith(f"SyntaxError: {TOO_DEEP}")
    assert _reply(kernel, kernel.kc.is_complete(DEEP))["status"] in ("complete", "invalid")
    assert _reply(kernel, kernel.kc.complete(DEEP, 20000))["status"] == "ok"
    assert _reply(kernel, kernel.kc.inspect(DEEP, 20000))["status"] == "ok"
    history = _reply(kernel, kernel.kc.history(hist_access_type="tail", n=1))
    assert history["status"] == "ok" and history["history"][-1][2] == DEEP
    assert kernel.value("40 + 2") == "42"


def test_a_big_cell_leaves_the_kernel_answering_and_interruptible(kernel: KernelProcess) -> None:
    msg_id = kernel.kc.execute(BIG)
    deadline = time.monotonic() + 60
    while True:  # the kernel took the cell: it is busy with it
        msg = kernel.kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "execute_input":
            break
        assert time.monotonic() < deadline, "the kernel never started the big cell"
    info = kernel.kc.kernel_info()
    assert _reply(kernel, info, 30)["status"] == "ok"  # answered while the cell is being prepared
    kernel.km.interrupt_kernel()
    reply = _reply(kernel, msg_id, 60)
    assert (reply["status"], reply.get("ename"), reply.get("evalue")) == ("error", "InterruptError", "Execution interrupted")
    assert kernel.value("40 + 2") == "42"


def test_preparing_a_big_cell_counts_against_the_time_limit() -> None:
    kernel = KernelProcess(MCP2REPL_TIMEOUT="1")
    try:
        reply, _ = kernel.execute(BIG, timeout=120)  # preparing it takes longer than the limit: it ends there
        assert (reply["status"], reply["ename"], reply["evalue"]) == ("error", "TimeoutError", "Cell time limit reached")
        assert kernel.value("40 + 2") == "42"
    finally:
        kernel.close()
