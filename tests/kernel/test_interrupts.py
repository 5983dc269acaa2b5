"""Interrupts, limits and responsiveness through a real kernel process and jupyter_client."""

from __future__ import annotations

import os
import signal
import time

import pytest
from conftest import Interrupter, KernelProcess
from jupyter_client.manager import KernelManager

SPINS = [
    "while (true) {}",
    "await null; while (true) {}",
    "await sleep(10); for (;;) {}",
    "await sleep(100000)",
    "setTimeout(() => { while (true) {} }, 10); await sleep(100000)",
    "spinLater()",
]


@pytest.mark.parametrize("how", ["message", "signal"])
@pytest.mark.parametrize("code", SPINS)
def test_interrupt_stops_cell_and_keeps_globals(kernel: KernelProcess, code: str, how: str) -> None:
    kernel.value("const marker = 'alive'; function spinLater() { let n = 0; while (true) { n++ } }; 1")

    send = kernel.km.interrupt_kernel if how == "message" else lambda: kernel.km.signal_kernel(signal.SIGINT)
    interrupter = Interrupter(send, 0.5)
    started = time.monotonic()
    reply, outputs = kernel.execute(code)
    elapsed = time.monotonic() - started
    interrupter.stop()
    assert reply["status"] == "error"
    assert reply["ename"] == "InterruptError"
    assert [o["type"] for o in outputs] == ["error"]
    assert outputs[0]["traceback"][0] == "InterruptError: Execution interrupted"
    assert elapsed < 10, elapsed  # every spin is endless: any bound proves the interrupt landed
    assert kernel.value("marker") == "'alive'"
    assert kernel.km.is_alive()


def test_idle_interrupt_is_harmless(kernel: KernelProcess) -> None:
    kernel.execute("const idle = 41")
    kernel.km.interrupt_kernel()
    kernel.km.signal_kernel(signal.SIGINT)
    time.sleep(0.2)
    assert kernel.value("idle + 1") == "42"


def test_requests_answer_while_a_cell_spins(kernel: KernelProcess) -> None:
    kernel.execute("const answerMe = 1")
    msg_id = kernel.kc.execute("while (true) {}")
    time.sleep(0.3)
    timings = {}
    for name, send in [
        ("kernel_info", lambda: kernel.kc.kernel_info()),
        ("is_complete", lambda: kernel.kc.is_complete("function f() {")),
        ("complete", lambda: kernel.kc.complete("answ", 4)),
    ]:
        started = time.monotonic()
        sent = send()
        reply = kernel.kc.get_shell_msg(timeout=20)
        while reply["parent_header"]["msg_id"] != sent:
            reply = kernel.kc.get_shell_msg(timeout=20)
        timings[name] = time.monotonic() - started
        if name == "is_complete":
            assert reply["content"] == {"status": "incomplete", "indent": "  "}
        if name == "complete":
            assert reply["content"]["matches"] == ["answerMe"]
    interrupter = Interrupter(kernel.km.interrupt_kernel, 0)
    reply = kernel.kc.get_shell_msg(timeout=30)
    interrupter.stop()
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["ename"] == "InterruptError"
    assert max(timings.values()) < 10, timings  # answered while JS spins (it never would otherwise)


def test_shutdown_is_fast_even_while_spinning() -> None:
    session = KernelProcess()
    session.kc.execute("while (true) {}")
    time.sleep(0.3)
    process = session.km.provisioner.process  # type: ignore[union-attr]
    # the request alone, not km.shutdown_kernel (which adds SIGTERM and SIGKILL after 2.5 s):
    # the kernel must answer it while JS spins and then leave by itself
    msg_id = session.kc.shutdown()
    reply = session.kc.control_channel.get_msg(timeout=20)
    assert (reply["parent_header"]["msg_id"], reply["msg_type"], reply["content"]["status"]) == (msg_id, "shutdown_reply", "ok")
    assert process.wait(30) == 0
    session.kc.stop_channels()


def test_sigterm_ends_the_kernel_cleanly() -> None:
    """What clients send when a shutdown takes long: the kernel leaves at once, status 0, run folder gone."""
    session = KernelProcess()
    session.execute("await mcp.demo.list_genres()")
    process = session.km.provisioner.process  # type: ignore[union-attr]
    server = session.server_process("mcp_kernel.demo.server")
    session.kc.execute("while (true) {}")
    time.sleep(0.3)
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0
    server.wait(30)  # its supervisor stops it when the kernel is gone
    session.kc.stop_channels()


def test_time_limit_and_heap_limit_from_environment() -> None:
    # the hog must reach 128 MB before the time limit, on a busy machine too: 8 MB per step, 3 s
    session = KernelProcess(env={"MCP2REPL_TIMEOUT": "3", "MCP2REPL_HEAP_LIMIT_MB": "128"})
    try:
        session.execute("const before = 'kept'")
        reply, outputs = session.execute("await null; while (true) {}")
        assert (reply["ename"], reply["evalue"]) == ("TimeoutError", "Cell time limit reached")
        reply, outputs = session.execute("const hog = []; while (true) hog.push(new Array(1e6).fill(1.5))")
        assert reply["ename"] == "RangeError"
        assert "heap out of memory" in reply["evalue"]
        assert session.value("before") == "'kept'"
    finally:
        session.close()


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (None, "the cell needed more than the 2048 MB heap limit and was stopped"),
        ("4096", "the cell needed more than the 3584 MB heap limit and was stopped (the 4096 MB asked for is more than this V8 build can hold)"),
    ],
    ids=["default", "4GB"],
)
def test_runaway_allocation_fails_the_cell_not_the_kernel(limit: str | None, expected: str) -> None:
    """Regression: V8's own ~1.4 GB old-space limit used to abort the process below the 2 GB default."""
    session = KernelProcess(env={"MCP2REPL_HEAP_LIMIT_MB": limit} if limit else {})
    try:
        session.execute("const small = 41")
        reply, _ = session.execute("const hog = []; while (true) hog.push(new Array(1e6).fill(1.5))", timeout=300)
        assert reply["ename"] == "RangeError"
        assert f"JavaScript heap out of memory: {expected}" in reply["evalue"]
        assert session.value("small + 1") == "42"
        assert session.value("typeof hog") == "'undefined'"
    finally:
        session.close()


def test_kernel_info_is_honest(kernel: KernelProcess) -> None:
    kernel.kc.kernel_info()
    reply = kernel.kc.get_shell_msg(timeout=60)["content"]
    info = reply["language_info"]
    assert info["name"] == "javascript"
    assert info["mimetype"] == "text/javascript"
    assert info["file_extension"] == ".js"
    # cells may be TypeScript: highlighted as such (a superset), while the language stays JavaScript
    assert info["codemirror_mode"] == info["pygments_lexer"] == "typescript"
    assert info["version"].count(".") >= 2
    assert reply["supported_features"] == []
    assert reply["implementation"] == "mcp2repl"
    assert "JavaScript (V8" in reply["banner"]


def test_stop_on_error_aborts_queued_cells(kernel: KernelProcess) -> None:
    # The failing cell runs long enough that the second request is surely queued behind
    # it, as in "Run All"; a request that arrives after the error was handled runs.
    first = kernel.kc.execute("await new Promise(r => setTimeout(r, 1500)); throw new Error('first')")
    second = kernel.kc.execute("globalThis.ranSecond = true")
    replies = {}
    while len(replies) < 2:
        msg = kernel.kc.get_shell_msg(timeout=10)
        replies[msg["parent_header"]["msg_id"]] = msg["content"]["status"]
    assert replies == {first: "error", second: "aborted"}
    assert kernel.value("typeof ranSecond") == "'undefined'"  # sent right after the replies: it runs


def test_a_cell_sent_right_after_an_error_reply_runs(kernel: KernelProcess) -> None:
    """An agent sends its next step the moment a failed one is answered: that step must run.

    ipykernel queues its "stop aborting" marker only after sending the error's reply, so under load
    a request sent at once could land ahead of the marker and be aborted (seen in full runs, after
    interrupted cells); the kernel now queues the marker before the reply exists.
    """
    statuses = []
    for _ in range(20):
        failing = kernel.kc.execute("throw new Error('step failed')")
        while kernel.kc.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != failing:
            pass
        following = kernel.kc.execute("1")
        while (reply := kernel.kc.get_shell_msg(timeout=30))["parent_header"].get("msg_id") != following:
            pass
        statuses.append(reply["content"]["status"])
    assert statuses == ["ok"] * 20


def test_kernelspec_runs_with_installing_interpreter() -> None:
    spec = KernelManager(kernel_name="mcp2repl").kernel_spec
    assert spec.display_name == "JavaScript (mcp2repl)"
    assert spec.language == "javascript"
    assert spec.interrupt_mode == "message"
    assert os.path.samefile(spec.argv[0], os.sys.executable)


def test_completion_offsets_count_code_points(kernel: KernelProcess) -> None:
    code = "const 𝒳 = 'é'; Math.P"
    msg_id = kernel.kc.complete(code, len(code))
    reply = kernel.kc.get_shell_msg(timeout=60)
    while reply["parent_header"]["msg_id"] != msg_id:
        reply = kernel.kc.get_shell_msg(timeout=60)
    content = reply["content"]
    assert content["matches"] == ["PI"]
    assert (content["cursor_start"], content["cursor_end"]) == (len(code) - 1, len(code))
