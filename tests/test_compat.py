"""Every private-API use in mcp_kernel/compat/, pinned: an upgrade that removes one fails here, by name."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SERVERS

from mcp_kernel import compat


def test_v8_function_passes_a_string_as_data() -> None:
    from py_mini_racer import MiniRacer

    async def main() -> object:
        racer = MiniRacer()
        ctx = racer._ctx
        for name in ("_python_to_value_handle", "_value_handle_to_python", "_active_cancelable_mr_task_callbacks", "_next_async_callback_id", "event_loop"):
            assert hasattr(ctx, name), name
        assert hasattr(ctx._dll, "mr_call_function") and hasattr(ctx._dll, "mr_eval") and hasattr(ctx._dll, "mr_cancel_task")
        fn = await racer.eval_cancelable("(function () { 'use strict'; return typeof this + ':' + JSON.parse(this).x; })")
        argv = await racer.eval_cancelable("[]")
        call = compat.V8Function(racer, fn, argv)
        result = await call.call('{"x": "é\\u2028"}')
        racer.close()
        return result

    assert asyncio.run(main()) == "string:é\u2028"


def test_big_strings_leave_v8_whole_without_minis_racers_copy() -> None:
    from py_mini_racer import MiniRacer
    from py_mini_racer._objects import _MiniRacerTypes

    assert _MiniRacerTypes.str_utf8 == compat.mini_racer._STR_UTF8
    big = "é\u2028😀\"x" * (compat.BIG_STRING // 4)  # over the threshold, with 2-, 3- and 4-byte characters

    async def main() -> tuple[object, object, object]:
        racer = MiniRacer()
        same = await racer.eval_cancelable("(function () { 'use strict'; return String(this); })")
        argv = await racer.eval_cancelable("[]")
        call = compat.V8Function(racer, same, argv)
        back = await call.call(big)  # decoded from the library's buffer
        small, empty = await call.call("é"), await call.call("")
        racer.close()
        return back, small, empty

    back, small, empty = asyncio.run(main())
    assert (back == big, small, empty) == (True, "é", "")


def test_v8_tasks_are_plain_futures_that_cancel_in_v8() -> None:
    from py_mini_racer import JSEvalException, MiniRacer

    async def main() -> tuple[object, str, object, int]:
        racer = MiniRacer()
        run = compat.start_eval(racer)
        value = await run("6 * 7")
        try:
            await run("throw new RangeError('no')")
            error = ""
        except JSEvalException as exc:
            error = str(exc)
        spinning = run("while (true) {}")
        await asyncio.sleep(0.2)
        spinning.cancel()  # a future, not a task: cancelling it must still stop the JS in V8
        after = await asyncio.wait_for(run("'alive'"), 30)
        left = len(racer._ctx._active_cancelable_mr_task_callbacks)
        racer.close()
        return value, error, after, left

    value, error, after, left = asyncio.run(main())
    assert (value, after, left) == (42, "alive", 0)
    assert "RangeError: no" in error


def test_a_v8_tasks_arrival_hook_runs_before_anything_waiting_on_it() -> None:
    """``arrived`` sees the finished future in the loop turn its result comes in: before the
    future's done-callbacks and before a coroutine awaiting it resumes (they run a turn later)."""
    from py_mini_racer import MiniRacer

    async def main() -> list[str]:
        racer = MiniRacer()
        seen: list[str] = []
        fn = await racer.eval_cancelable("(function () { 'use strict'; return this + '!'; })")
        argv = await racer.eval_cancelable("[]")
        call = compat.V8Function(racer, fn, argv)
        def arrived(done: asyncio.Future) -> None:
            callers = {frame.function for frame in inspect.stack(0)}  # the handle that brought the result, not a done-callback's
            seen.append(f"arrived {done.result()} in {'_handle_callback_from_v8_on_event_loop' in callers}")

        future = call.call("hi", arrived=arrived)
        future.add_done_callback(lambda done: seen.append("done-callback"))
        seen.append(f"awaited {await future}")
        racer.close()
        return seen

    assert asyncio.run(main()) == ["arrived hi! in True", "done-callback", "awaited hi!"]


def test_quiet_results_wait_for_release_and_never_get_lost() -> None:
    from py_mini_racer import MiniRacer

    async def main() -> tuple[bool, object, object, object, bool, object, int]:
        racer = MiniRacer()
        ctx = racer._ctx
        assert hasattr(ctx, "_wrap_raw_handle") and callable(ctx.handle_callback_from_v8)
        quiet = compat.QuietResults(racer)
        run = compat.start_eval(racer)
        first = run("globalThis.n = 1; 'first'", quiet)
        second = await run("n + 1")  # V8 answers in order: the quiet result is in by now
        waited = first.done()  # but nobody was told
        quiet.release(first)
        released = await first
        late = run("const t = Date.now(); while (Date.now() - t < 300) {} 'late'", quiet)
        quiet.release(late)  # released before it arrived: it comes the usual way
        came = await asyncio.wait_for(late, 30)
        spinning = run("while (true) {}", quiet)
        await asyncio.sleep(0.2)
        spinning.cancel()  # a quiet task is cancelled in V8 like any other
        after = await asyncio.wait_for(run("'alive'"), 30)
        left = len(ctx._active_cancelable_mr_task_callbacks) + len(quiet._waiting)
        racer.close()
        return waited, second, released, came, spinning.cancelled(), after, left

    assert asyncio.run(main()) == (False, 2, "first", "late", True, "alive", 0)


def test_terminated_exception_is_minis_racers() -> None:
    import py_mini_racer

    assert issubclass(compat.terminated_exception(), py_mini_racer.JSEvalException)
    assert compat.terminated_exception().__name__ == "JSTerminatedException"


def test_v8_version_without_a_context() -> None:
    assert compat.v8_version().split(".")[0].isdigit()


def test_session_closed_sees_a_dead_stdio_server() -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError

    async def main() -> tuple[bool, bool]:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVERS / "crashing_server.py")])
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write), ClientSession(read, write) as session:  # noqa: ASYNC230
            await session.initialize()
            assert hasattr(session, "_dispatcher") and hasattr(session._dispatcher, "_closed")
            before = compat.session_closed(session)
            with contextlib.suppress(MCPError):
                await session.call_tool("crash", {}, read_timeout_seconds=10)
            for _ in range(100):
                if compat.session_closed(session):
                    break
                await asyncio.sleep(0.05)
            return before, compat.session_closed(session)

    assert asyncio.run(main()) == (False, True)


def test_ipykernel_private_names_still_exist() -> None:
    from ipykernel.iostream import OutStream
    from ipykernel.kernelbase import Kernel

    assert compat.protocol_version().startswith("5.")
    from jupyter_client.session import Session

    made = Session().msg("execute_request", {})["header"]
    assert compat.made_by_jupyter_client(made), made
    assert not compat.made_by_jupyter_client({"session": "abc", "msg_id": "0f1e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b"})
    assert "_execute_sleep" in Kernel.class_traits()
    assert compat.no_reply_sleep().default_value == 0.0
    for name in ("_get_shell_context_var", "_publish_status", "_input_request", "get_parent", "set_parent", "dispatch_shell"):
        assert callable(getattr(Kernel, name, None)), name
    assert "_shell_parent_ident" in Kernel.__annotations__, "_shell_parent_ident"
    names = OutStream.__init__.__code__.co_names
    assert "_buffers" in names and "_buffer_lock" in names, "OutStream keeps its buffers in _buffers under _buffer_lock"


def test_the_kernel_apps_threads_and_exit_handlers_are_where_end_kernel_process_looks() -> None:
    """compat.end_kernel_process stops ipykernel's control and shell-channel threads, then IOPub, and
    unregisters the ``atexit`` handlers (``app.close``, ``iopub_thread.stop``) that would race them."""
    import inspect

    from ipykernel.iostream import IOPubThread
    from ipykernel.kernelapp import IPKernelApp
    from ipykernel.thread import BaseThread

    assert {"control_thread", "iopub_thread", "shell_channel_thread"} <= set(IPKernelApp.class_traits()) | set(vars(IPKernelApp))
    assert "atexit.register(self.close)" in inspect.getsource(IPKernelApp)
    assert "atexit.register(self.stop)" in inspect.getsource(IOPubThread.start)
    assert callable(BaseThread.stop) and callable(IOPubThread.stop)


def test_submit_shell_calls_the_main_shell_as_ipykernels_shell_channel_does() -> None:
    """kernel/direct.py hands the step socket's steps to the shell the way ipykernel 7.4's shell-channel thread does:
    ``shell_main(None, frames)`` on the kernel's loop, frames as ``zmq.Frame`` (it receives with ``copy=False``)."""
    import threading

    import zmq
    from ipykernel.kernelbase import Kernel
    from ipykernel.subshell_manager import SubshellManager
    from tornado.ioloop import IOLoop

    assert list(inspect.signature(Kernel.shell_main).parameters) == ["self", "subshell_id", "msg"]
    assert "partial(on_recv_callback, None)" in inspect.getsource(SubshellManager.set_on_recv_callback)
    assert "copy=False" in inspect.getsource(Kernel.dispatch_shell) and "io_loop" in inspect.getsource(Kernel.start)

    class Shell:
        def __init__(self) -> None:
            self.io_loop = IOLoop()
            self.got: list[tuple[str | None, list[bytes], bool]] = []

        async def shell_main(self, subshell_id: str | None, msg: list[Any]) -> None:
            on_loop = threading.current_thread() is thread
            self.got.append((subshell_id, [frame.bytes for frame in msg if isinstance(frame, zmq.Frame)], on_loop))

    shell = Shell()
    thread = threading.Thread(target=shell.io_loop.start, daemon=True)
    thread.start()
    try:
        compat.submit_shell(shell, [b"ident", b"<IDS|MSG>", b"sig"]).result(timeout=30)
    finally:
        shell.io_loop.add_callback(shell.io_loop.stop)
        thread.join(30)
    assert shell.got == [(None, [b"ident", b"<IDS|MSG>", b"sig"], True)]


def test_iopub_sent_waits_for_what_the_iopub_thread_had_queued() -> None:
    """jupyter console printed the next prompt before a cell's console.log line on a busy machine: the
    reply overtook output still queued for ipykernel's IOPub thread. The reply now waits for the queue."""
    import threading

    import zmq
    from ipykernel.iostream import BackgroundSocket, IOPubThread

    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    pub.bind("inproc://iopub-sent-test")
    thread = IOPubThread(pub)
    thread.start()
    socket = BackgroundSocket(thread)
    gate, sent = threading.Event(), []
    thread.schedule(lambda: gate.wait(30))  # the IOPub thread is busy (a loaded machine)
    thread.schedule(lambda: sent.append("the cell's output"))

    async def reply() -> None:
        waiting = asyncio.ensure_future(compat.iopub_sent(socket))
        await asyncio.sleep(0.3)
        assert not waiting.done() and sent == [], "the reply went ahead of output still queued"
        gate.set()
        await asyncio.wait_for(waiting, 30)
        assert sent == ["the cell's output"]

    try:
        asyncio.run(reply())
    finally:
        gate.set()
        thread.stop()
        thread.close()
        ctx.term()

    async def after_shutdown() -> None:  # the thread is gone: nothing to wait for
        await asyncio.wait_for(compat.iopub_sent(socket), 5)

    asyncio.run(after_shutdown())


def test_ipykernels_tcp_warning_is_dropped_for_loopback_kernels_only() -> None:
    """Issue 23, item 12: kernel/app.py filters ipykernel's TCP warning by its text and logger: both pinned here."""
    import logging

    from ipykernel import kernelapp

    from mcp_kernel.kernel.app import APP_LOGGER, TCP_WARNING, LoopbackTcpWarning

    assert f'"{TCP_WARNING}."' in inspect.getsource(kernelapp.IPKernelApp.init_sockets)
    assert kernelapp.IPKernelApp.__name__ == APP_LOGGER  # traitlets names an app's logger after its class

    def passes(ip: str, message: str) -> bool:
        record = logging.LogRecord(APP_LOGGER, logging.WARNING, __file__, 1, message, None, None)
        return LoopbackTcpWarning(lambda: ip).filter(record)

    warning = f"{TCP_WARNING}. All communication (including code and outputs) is sent in plain text"
    assert [passes(ip, warning) for ip in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "10.1.2.3", "")] == [False, False, False, True, True, True]
    assert passes("127.0.0.1", "Starting the kernel at pid: 1")


def test_the_kernel_apps_logger_makes_no_debug_record_unless_asked() -> None:
    """traitlets sets an app's logger to DEBUG and its handler to the app's level, so each of ipykernel's debug
    lines (four a cell) was made into a record and dropped; kernel/app.py lifts the logger to its handlers' level."""
    import logging

    from traitlets.config import Application

    from mcp_kernel.kernel.app import no_unheard_records

    class ProbeApp(Application):
        pass

    for level, heard in ((logging.WARNING, False), (logging.DEBUG, True)):
        app = ProbeApp(log_level=level)
        assert app.log.level == logging.DEBUG and app.log.isEnabledFor(logging.DEBUG)  # what traitlets does
        no_unheard_records(app.log)
        assert app.log.isEnabledFor(logging.DEBUG) is heard and app.log.isEnabledFor(logging.WARNING)
        ProbeApp.clear_instance()


def test_the_kernel_app_takes_the_connection_files_ip_without_scanning_interfaces() -> None:
    """compat.FileIpFirst: jupyter_client still works out ``_ip_default()`` while loading a file that
    names the ip (so the override matters), and with the override psutil is never imported for it;
    a file without an ip still gets jupyter_client's default."""
    from jupyter_client.connect import ConnectionFileMixin

    assert 'info.get("ip", self._ip_default())' in inspect.getsource(ConnectionFileMixin.load_connection_info)
    probe = """
import sys
from ipykernel import kernelapp
from mcp_kernel import compat
class IPKernelApp(compat.FileIpFirst, kernelapp.IPKernelApp):
    pass
app = IPKernelApp()
app.load_connection_info({"transport": "tcp", "ip": "127.0.0.1", "shell_port": 5})
print(app.ip, app.shell_port, "psutil" in sys.modules)
bare = IPKernelApp()
bare.load_connection_info({"transport": "tcp"})
print(bare.ip)
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split("\n")[:2] == ["127.0.0.1 5 False", "127.0.0.1"]


def test_shell_busy_reads_the_private_lock() -> None:
    from ipykernel.kernelbase import Kernel

    assert "_main_asyncio_lock" in Kernel.__annotations__, "ipykernel serialises shell requests with _main_asyncio_lock"

    async def main() -> tuple[bool, bool]:
        class Holder:
            _main_asyncio_lock = asyncio.Lock()

        holder = Holder()
        idle = compat.shell_busy(holder)
        async with holder._main_asyncio_lock:
            return idle, compat.shell_busy(holder)

    assert asyncio.run(main()) == (False, True)


def test_send_unvalidated_returns_what_send_request_would_reject() -> None:
    """A tools/call with a task is answered by a CreateTaskResult, which send_request refuses as a CallToolResult."""
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from pydantic import ValidationError

    def request() -> types.CallToolRequest:
        params = types.CallToolRequestParams(name="research", arguments={"seconds": 0.01}, task=types.TaskMetadata(ttl=1000))
        return types.CallToolRequest(params=params)

    async def main() -> tuple[dict, bool]:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVERS / "protocol_server.py")])
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write), ClientSession(read, write) as session:  # noqa: ASYNC230
            await session.initialize()
            assert hasattr(session, "_stamp") and hasattr(session._dispatcher, "send_raw_request")
            raw = await compat.send_unvalidated(session, request())
            try:
                await session.send_request(request(), types.CreateTaskResult)
            except ValidationError:
                refused = True
            else:
                refused = False
            return raw, refused

    raw, refused = asyncio.run(main())
    assert types_of(raw) == ["task"] and raw["task"]["status"] == "working"
    assert refused  # if the SDK starts accepting it, tasks.py can use send_request


#: A server that answers each tools/call with the next of the results given as its argument, unchecked.
RAW_SERVER = """
import json, sys
results = json.loads(sys.argv[1])
tool = {"name": "reply", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, answer = msg["method"], {}
    if method == "initialize":
        answer = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "1"}}
    elif method == "tools/list":
        answer = {"tools": [tool]}
    elif method == "tools/call":
        answer = results.pop(0)
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": answer}), flush=True)
"""


def test_call_tool_answers_as_the_sdks_call_tool_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lean tools/call (compat.call_tool) against ClientSession.call_tool, each result sent to
    both: the same results, and the same errors for the results the SDK refuses; a stdio server's
    requests go by compat's send_request, unless a tracer is configured."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client import session as sdk
    from mcp.client.stdio import stdio_client

    for name in ("_clamp_inbound_ttl", "_later_revision_fields", "_input_required_unexpected"):
        assert callable(getattr(sdk, name, None)), name
    sent = [
        {"content": [{"type": "text", "text": "hi"}], "structuredContent": {"n": 1}},
        {"content": [], "structuredContent": {"n": "one"}},  # not what the output schema says
        {"content": [{"type": "text", "text": "no"}], "isError": True},  # errors are not checked against it
        {"content": []},  # an output schema, and no structured content
        {"content": "not a list"},
        {"content": [], "structuredContent": {"n": 2}, "ttlMs": -5},
        {"resultType": "input_required", "inputRequests": {}},
    ]

    def outcome(done: object) -> object:
        if isinstance(done, BaseException):
            return type(done).__name__, str(done).split("\n")[0]
        return done.model_dump()  # type: ignore[attr-defined]

    async def run(call: object) -> object:
        try:
            return outcome(await call)  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - the outcome is compared
            return outcome(exc)

    async def main(how: str) -> list[object]:
        params = StdioServerParameters(command=sys.executable, args=["-c", RAW_SERVER, json.dumps(sent)])
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write), ClientSession(read, write) as session:  # noqa: ASYNC230
            await session.initialize()
            await session.list_tools()  # as the kernel does: the output schema is known
            if how == "sdk":
                return [await run(session.call_tool("reply", {})) for _ in sent]
            return [await run(compat.call_tool(session, "reply", {}, None, None, stdio=how != "dispatcher")) for _ in sent]

    sent_by_compat: list[str] = []
    send_request = compat.mcp_sdk.send_request
    monkeypatch.setattr(compat.mcp_sdk, "send_request", lambda session, method, *rest: (sent_by_compat.append(method), send_request(session, method, *rest))[1])
    theirs, ours, lean = asyncio.run(main("sdk")), asyncio.run(main("dispatcher")), asyncio.run(main("stdio"))
    assert ours == theirs and lean == theirs
    assert sent_by_compat == ["tools/call"] * len(sent)  # the stdio calls, and only those
    monkeypatch.setattr(compat.mcp_sdk, "_tracing", lambda: True)
    assert asyncio.run(main("stdio")) == theirs and sent_by_compat == ["tools/call"] * len(sent)  # traced: the SDK's path
    kinds = [o[0] if isinstance(o, tuple) else "result" for o in ours]
    assert kinds == ["result", "RuntimeError", "result", "RuntimeError", "ValidationError", "result", "ValidationError"], ours


def test_send_request_keeps_the_sdks_contract_for_timeouts_cancels_and_closed_connections(tmp_path: Path) -> None:
    """compat.mcp_sdk.send_request against the dispatcher's send_raw_request on the same server: the same
    answer, the same timeout error and courtesy cancel, the same cancel for a cancelled caller, the
    same error once the server is gone; and no pending request left behind by either."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared import jsonrpc_dispatcher as jd
    from mcp.shared.exceptions import MCPError

    assert callable(jd._plan_outbound) and jd._ABANDON_WRITE_TIMEOUT > 0 and {"send", "receive", "on_progress"} <= set(jd._Pending.__slots__)
    for name in ("_allocate_id", "_write", "_final_write", "_cancel_outbound"):
        assert callable(getattr(jd.JSONRPCDispatcher, name, None)), name

    async def main(lean: bool) -> tuple[list[object], list[dict]]:
        record = tmp_path / f"record-{lean}.jsonl"
        params = StdioServerParameters(command=sys.executable, args=[str(SERVERS / "protocol_server.py"), "--record", str(record)])
        seen: list[object] = []

        async def send(method: str, params: dict, opts: dict) -> object:
            try:
                if lean:
                    return await compat.mcp_sdk.send_request(session, method, params, opts)
                return await session._dispatcher.send_raw_request(method, params, opts)
            except MCPError as exc:
                return "MCPError", exc.error.code, exc.error.message

        async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write), ClientSession(read, write) as session:  # noqa: ASYNC230
            await session.initialize()
            answer = await send("tools/call", {"name": "touch", "arguments": {"uri": "memo://x"}}, {})
            seen.append(answer["content"])  # type: ignore[index]
            seen.append(await send("tools/call", {"name": "wait", "arguments": {}}, {"timeout": 0.5}))
            waiting = asyncio.ensure_future(send("tools/call", {"name": "wait", "arguments": {}}, {}))
            await asyncio.sleep(0.5)
            waiting.cancel()
            seen.append([type(e).__name__ for e in await asyncio.gather(waiting, return_exceptions=True)])
            seen.append(len(session._dispatcher._pending))
            await asyncio.sleep(0.5)  # the cancels are written down
            session._dispatcher._closed = True  # as after the server's end of stream
            seen.append(await send("ping", {}, {}))
            session._dispatcher._closed = False
        events = [json.loads(line) for line in record.read_text().splitlines()]
        waited = [e["id"] for e in events if e["event"] == "waiting"]
        cancels = [e for e in events if e["event"] == "notifications/cancelled"]
        assert [e["requestId"] for e in cancels] == waited  # each cancel names the request it abandons
        return seen, [{k: v for k, v in e.items() if k != "requestId"} for e in cancels]

    theirs, ours = asyncio.run(main(False)), asyncio.run(main(True))
    assert ours == theirs
    seen, cancels = ours
    assert seen == [
        [{"type": "text", "text": "touched"}],
        ("MCPError", -32001, "Request 'tools/call' timed out"),
        ["CancelledError"],
        0,  # nothing left pending
        ("MCPError", -32000, "Connection closed"),
    ]
    assert cancels == [
        {"event": "notifications/cancelled", "reason": "timed out after 0.5s"},
        {"event": "notifications/cancelled", "reason": "caller cancelled"},
    ]


def test_a_configured_tracer_keeps_the_sdks_request_path() -> None:
    """Requests skip the SDK's span only while nobody set a tracer provider (a process-wide, once-only
    setting: checked in a child process)."""
    import subprocess

    code = (
        "from opentelemetry import trace\n"
        "from mcp_kernel.compat import mcp_sdk\n"
        "before = mcp_sdk._tracing()\n"
        "trace.set_tracer_provider(trace.NoOpTracerProvider())\n"
        "print(before, mcp_sdk._tracing())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "True"]


def types_of(raw: dict) -> list[str]:
    return sorted(k for k in raw if not k.startswith("_") and k != "resultType")


def test_ipykernel_starts_aborting_only_after_the_error_reply() -> None:
    """What AbortBeforeReply works around, and the names it uses: if ipykernel ever queues its
    marker before the reply, the mixin is no longer needed (and this fails to say so)."""
    import inspect

    from ipykernel.kernelbase import Kernel

    source = inspect.getsource(Kernel.execute_request)
    assert hasattr(Kernel, "_abort_queues") and hasattr(Kernel, "_post_dummy_stop_aborting_message")
    assert source.index('"execute_reply"') < source.index("self._abort_queues(")
    from mcp_kernel.kernel.kernel import MCPKernel

    assert MCPKernel._abort_queues is compat.AbortBeforeReply._abort_queues


def test_pipe_closing_sees_a_failed_write_to_a_server_that_stopped_reading() -> None:
    import subprocess

    import anyio

    async def main() -> tuple[bool, bool]:
        code = "import os, time; os.close(0); print('closed', flush=True); time.sleep(30)"
        async with await anyio.open_process([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
            assert proc.stdin is not None and proc.stdout is not None and hasattr(proc.stdin, "_stream")
            before = compat.pipe_closing(proc.stdin)
            await proc.stdout.receive()  # its stdin is closed now
            with contextlib.suppress(anyio.BrokenResourceError):
                await proc.stdin.send(b"lost\n")
            after = compat.pipe_closing(proc.stdin)
            proc.kill()
            return before, after

    assert anyio.run(main) == (False, True)


def test_v8s_thread_keeps_its_python_thread_state() -> None:
    """ctypes enters Python from V8's thread with a new thread state per result unless one is kept."""
    import threading

    from py_mini_racer import MiniRacer

    async def main() -> list[tuple[int, object]]:
        racer = MiniRacer()
        ctx = racer._ctx
        compat.QuietResults(racer)
        kept = ctx.handle_callback_from_v8
        local = threading.local()  # per thread state: gone with the state it was set in
        seen: list[tuple[int, object]] = []

        def arrived(callback_id: int, raw: object) -> None:
            seen.append((threading.get_ident(), getattr(local, "mark", None)))
            local.mark = len(seen)
            kept(callback_id, raw)

        object.__setattr__(ctx, "handle_callback_from_v8", arrived)
        run = compat.start_eval(racer)
        for i in range(3):
            assert await run(f"{i} + 1") == i + 1
        racer.close()
        return seen

    seen = asyncio.run(main())
    assert len({ident for ident, _ in seen}) == 1 and seen[0][0] != threading.get_ident()
    assert [mark for _, mark in seen] == [None, 1, 2]


def test_send_now_writes_without_a_loop_turn_and_fails_on_a_closed_pipe() -> None:
    import subprocess

    import anyio
    import pytest

    async def main() -> tuple[bytes, type[BaseException] | None]:
        code = "import os, sys, time; print(sys.stdin.readline().strip().upper(), flush=True); os.close(0); print('closed', flush=True); time.sleep(30)"
        async with await anyio.open_process([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            step = compat.send_now(proc.stdin, b"hello\n").__await__()
            with pytest.raises(StopIteration):  # done at the first step: it never waited on the loop
                next(step)
            out = b""
            while not out.endswith(b"closed\n"):
                out += await proc.stdout.receive()
            failed: type[BaseException] | None = None
            try:
                for _ in range(3):  # the first write finds the pipe broken, the next ones say so
                    await compat.send_now(proc.stdin, b"lost\n")
            except OSError as exc:
                failed = type(exc)
            proc.kill()
            return out, failed

    out, failed = anyio.run(main)
    assert out == b"HELLO\nclosed\n"
    assert failed is not None and issubclass(failed, OSError)


def test_external_memory_counts_array_buffers_and_frees_them_after_a_collection() -> None:
    """compat.ExternalMemory reads V8's own count of bytes outside its heap (mini-racer's exported V8 API)."""
    from py_mini_racer import MiniRacer

    async def main() -> tuple[int, int, int, int]:
        racer = MiniRacer()
        memory = compat.ExternalMemory(racer)
        before = memory.bytes()
        await memory.attach(racer)
        assert memory.isolate
        start = memory.bytes()
        await racer.eval_cancelable("globalThis.keep = [new Uint8Array(64 << 20), new ArrayBuffer(32 << 20)]; 0")
        held = memory.bytes()
        await racer.eval_cancelable("keep = null; 0")
        racer.low_memory_notification()
        freed = memory.bytes()
        racer.close()
        return before, start, held, freed

    before, start, held, freed = asyncio.run(main())
    assert before == 0 and held - start >= 96 << 20 and freed < held - (90 << 20)


def test_negotiate_settles_the_newest_revision_each_server_speaks() -> None:
    """negotiate (the SDK's private auto policy): 2026-07-28 with an MCPServer, initialize's 2025-11-25 with a server
    that does not know server/discover; drive_input_required answers an InputRequiredResult through the session's
    elicitation callback and retries through compat.call_tool; set_modern_log_level re-stamps the session's _meta;
    absorb_listing teaches a session a list it did not fetch."""
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.session import ClientRequestContext
    from mcp.client.stdio import stdio_client

    from mcp_kernel.servers import tasks_ext

    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def connect(script: str, check: Any) -> Any:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVERS / script)])
        async with (
            stdio_client(params, errlog=open(os.devnull, "w")) as (read, write),  # noqa: ASYNC230
            ClientSession(read, write, elicitation_callback=elicit, **tasks_ext.session_options()) as session,
        ):
            await compat.negotiate(session)
            return await check(session)

    async def modern(session: ClientSession) -> Any:
        kept = types.Tool(name="kept", input_schema={"type": "object"}, output_schema={"type": "object"})
        compat.absorb_listing(session, [kept])  # a list kept by its ttlMs: the session learns it without listing
        assert session._tool_output_schemas == {"kept": {"type": "object"}}
        await session.list_tools()
        first = await compat.call_tool(session, "greet", {}, 30, None, stdio=True, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)

        async def dispatch(key: str, request: Any) -> Any:
            return await session.dispatch_input_request(ClientRequestContext(session=session, request_id=key), request)

        async def retry(responses: Any, state: Any) -> Any:
            return await compat.call_tool(session, "greet", {}, 30, None, stdio=True, input_responses=responses, request_state=state, allow_input_required=True)

        done = await compat.drive_input_required(first, dispatch, retry, 3)
        task = await compat.call_tool(session, "research", {"topic": "t", "seconds": 0}, 30, None, stdio=True, allow_claimed=True)
        assert isinstance(task, tasks_ext.CreateTaskResult) and task.status == "working"  # an extension's shape, when allowed
        compat.set_modern_log_level(session, "info")
        data: dict[str, Any] = {"method": "tools/call", "params": {"name": "add"}}
        session._stamp(data, {})
        return session.protocol_version, done.structured_content, data["params"]["_meta"]["io.modelcontextprotocol/logLevel"]

    async def legacy(session: ClientSession) -> Any:
        return session.protocol_version, session.discover_result

    assert asyncio.run(connect("modern_server.py", modern)) == ("2026-07-28", {"result": "Hello, Ada!"}, "info")
    assert asked == ["What is your name?"]
    assert asyncio.run(connect("protocol_server.py", legacy)) == ("2025-11-25", None)


def test_exit_handlers_run_once_last_first_without_exiting() -> None:
    """CPython's private ``atexit._run_exitfuncs`` (cli/oneshot.py's fast exit): each handler runs now, in
    reverse order, and not again when the process then exits normally."""
    script = (
        "import atexit, sys\n"
        "from mcp_kernel import compat\n"
        "atexit.register(lambda: print('first registered'))\n"
        "atexit.register(lambda: print('last registered'))\n"
        "compat.run_exit_handlers()\n"
        "print('still running')\n"
    )
    import subprocess

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert (done.returncode, done.stdout, done.stderr) == (0, "last registered\nfirst registered\nstill running\n", "")


def test_share_icu_data_maps_v8s_copy_of_the_file_and_intl_answers_the_same() -> None:
    code = """
from mcp_kernel.engine.context import configure_v8
configure_v8()
from py_mini_racer import MiniRacer
from mcp_kernel import compat
def anon_kb():
    return int(next(l for l in open("/proc/self/status") if l.startswith("RssAnon")).split()[1])
ctx = MiniRacer()
js = ("[new Intl.DateTimeFormat('de-DE', {timeZone: 'UTC'}).format(new Date(0)), 'ﬀé'.normalize('NFKD').length,"
      " /\\\\p{L}+/u.test('é'), 'ä'.localeCompare('z', 'de'), (1234567.891).toLocaleString('en-IN'), 'İ'.toLocaleLowerCase('tr')].join('|')")
before, anon = ctx.eval(js), anon_kb()
mapped = compat.share_icu_data()
print(before, ctx.eval(js), mapped > 10_000_000, anon - anon_kb() > 8_000, compat.share_icu_data())
ctx.close()
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    said = "1.1.1970|4|true|-1|12,34,567.891|i"
    assert (out.returncode, out.stdout, out.stderr) == (0, f"{said} {said} True True 0\n", "")
