"""Private parts of anyio's process streams and of the MCP SDK's client session, and its package layout."""

from __future__ import annotations

import asyncio
import functools
import importlib
import importlib.util
import sys
import threading
from types import ModuleType, SimpleNamespace
from typing import Any

# ---- the SDK's packages -----------------------------------------------------------------------

#: Packages whose ``__init__`` the kernel runs only when a name of theirs is asked for.
DEFERRED_PACKAGES = ("mcp", "mcp.client")
_deferred_lock = threading.Lock()


def defer_package_inits() -> None:
    """Let ``import mcp.client.session`` load that module alone, not the SDK's whole server side.

    ``mcp/__init__.py`` and ``mcp/client/__init__.py`` import ``mcp.client.client``, which imports
    ``mcp.server`` for its in-memory transport: starlette, uvicorn, sse_starlette, httpx2, click,
    cryptography and OpenTelemetry's tracer, ~330 modules and ~17 MB of an idle kernel's memory that
    a client of stdio servers never uses. Here both packages are made without running their
    ``__init__`` (the import system finds submodules through ``__path__`` alone); the first name
    asked of either that is not a submodule runs its ``__init__`` then, so ``mcp.ClientSession``
    and ``from mcp.client import Client`` still work, at the old cost. Only the kernel's own
    process calls this, before anything imports the SDK; elsewhere it does nothing.
    """
    if "mcp" in sys.modules:
        return
    for name in DEFERRED_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return  # not the layout this expects: import the SDK the usual way
        module = importlib.util.module_from_spec(spec)
        module.__getattr__ = functools.partial(_first_name, module)  # type: ignore[attr-defined]
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)


def _first_name(module: ModuleType, attr: str) -> Any:
    """A name the deferred package has not got yet: a submodule's is imported, any other runs ``__init__``."""
    if not attr.startswith("__") and importlib.util.find_spec(f"{module.__name__}.{attr}") is not None:
        return importlib.import_module(f"{module.__name__}.{attr}")
    with _deferred_lock:
        if "__getattr__" in module.__dict__:
            del module.__dict__["__getattr__"]
            module.__spec__.loader.exec_module(module)  # type: ignore[union-attr]
    try:
        return module.__dict__[attr]
    except KeyError:
        raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}") from None


# ---- anyio ------------------------------------------------------------------------------------


def pipe_closing(stream: Any) -> bool:
    """Has the pipe under anyio's process stdin stream been closed by a failed write?

    A write to a pipe nobody reads fails inside asyncio's transport, which then closes itself; the
    writer learns of it only two loop turns later, and anyio's ``send`` may return normally before
    that. A line written then is lost, and the request behind it would wait for its whole timeout.
    """
    writer = getattr(stream, "_stream", None)
    return writer is not None and writer.is_closing()


async def send_now(stream: Any, data: bytes) -> None:
    """``stream.send(data)`` for anyio's process stdin, without a loop turn when nothing has to wait.

    anyio's ``send`` ends with a checkpoint, a turn of the event loop, on every message (one per
    tool call: ~15-25 µs on a 2-core machine). Here the bytes go to the asyncio writer under it
    and ``drain`` waits only when the pipe is full, as anyio's does. A pipe that is closing, before
    the write or because of it (:func:`pipe_closing`), raises ``BrokenPipeError``: the bytes are lost.
    """
    writer = getattr(stream, "_stream", None)
    if writer is None:
        await stream.send(data)
        return
    if not pipe_closing(stream):
        writer.write(data)
        if not pipe_closing(stream):
            await writer.drain()
            return
    raise BrokenPipeError("the server's stdin is closed")


# ---- MCP SDK ---------------------------------------------------------------------------------


def session_closed(session: Any) -> bool:
    """Has the SDK's reader noticed that the server went away?

    ``ClientSession`` records end-of-stream only on its private dispatcher; without this a crashed
    server looks alive until the next call fails.
    """
    dispatcher = getattr(session, "_dispatcher", None)
    return bool(getattr(dispatcher, "_closed", False))


async def send_unvalidated(session: Any, request: Any) -> dict[str, Any]:
    """Send a typed request and return its raw result, skipping the SDK's per-method result check.

    A ``tools/call`` with ``task`` is answered by a ``CreateTaskResult``, but ``send_request``
    checks every ``tools/call`` answer against ``CallToolResult`` and rejects it (mcp 2.3 has task
    types and no client support for them). The caller validates the result itself. Done as
    ``send_request`` does it: the session's stamp (protocol-version header), then its dispatcher.
    """
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    opts: dict[str, Any] = {}
    session._stamp(data, opts)
    return dict(await session._dispatcher.send_raw_request(data["method"], data.get("params"), opts))


@functools.cache
def _sdk() -> SimpleNamespace:
    """What :func:`call_tool` and :func:`send_request` use of anyio, the SDK and OpenTelemetry,
    imported once (the SDK is loaded off the start-up path)."""
    import anyio
    import mcp_types as types
    from mcp.client import session
    from mcp.client.extension import UnexpectedClaimedResult
    from mcp.shared import jsonrpc_dispatcher
    from mcp.shared.exceptions import MCPError
    from mcp.shared.inbound import MCP_NAME_HEADER, encode_header_value
    from mcp_types import methods
    from opentelemetry import trace

    return SimpleNamespace(
        anyio=anyio,
        types=types,
        session=session,
        UnexpectedClaimedResult=UnexpectedClaimedResult,
        jsonrpc_dispatcher=jsonrpc_dispatcher,
        MCPError=MCPError,
        MCP_NAME_HEADER=MCP_NAME_HEADER,
        encode_header_value=encode_header_value,
        methods=methods,
        trace=trace,
    )


class _Answer:
    """Where the dispatcher puts the answer to one request: it calls ``send_nowait``, as on the stream it expects."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[Any]) -> None:
        self.future = future

    def send_nowait(self, outcome: Any) -> None:
        if not self.future.done():
            self.future.set_result(outcome)


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


def _tracing() -> bool:
    """Has someone configured OpenTelemetry in this process? Then requests keep the SDK's spans."""
    trace = _sdk().trace
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


async def send_request(session: Any, method: str, params: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any]:
    """``session._dispatcher.send_raw_request(method, params, opts)`` for a stdio server, at half its cost.

    The SDK sends every request inside an OpenTelemetry span (none is recorded unless tracing is
    configured), in a request clock (a context variable and an anyio cancel scope, there so an
    OAuth login in the middle of an HTTP request does not count against its timeout) and with a
    new anyio memory stream for its one answer: ~130 µs of the ~250 µs of CPU a tool call costs
    in the SDK (2-core machine, server-everything's ``echo``). Here the answer comes to a future
    the dispatcher fills as it would fill that stream, and the timeout is a loop timer. The rest
    is the SDK's: its id counter, its table of pending requests (so the answer, progress by
    request id, and a closed connection reach the request as before), its write, and the
    courtesy ``notifications/cancelled`` when the request times out or its caller is cancelled.
    Used only where nothing of the skipped parts applies: stdio, tracing not configured. One more
    difference: a request whose caller was cancelled before it started is still written (the SDK
    checks for that first), and then cancelled at once like any abandoned request.
    """
    sdk = _sdk()
    jd, MCPError, types = sdk.jsonrpc_dispatcher, sdk.MCPError, sdk.types
    dispatcher = session._dispatcher
    if dispatcher._closed:
        raise MCPError(code=types.CONNECTION_CLOSED, message="Connection closed")
    if not dispatcher._running:
        raise RuntimeError("the session's dispatcher is not running")
    request_id = dispatcher._allocate_id()
    while request_id in dispatcher._pending:
        request_id = dispatcher._allocate_id()
    loop = asyncio.get_running_loop()
    answer = _Answer(loop.create_future())
    on_progress = opts.get("on_progress")
    if on_progress is not None:  # the request id is the progress token, as in the SDK
        params = {**params, "_meta": {**(params.get("_meta") or {}), "progressToken": request_id}}
    dispatcher._pending[request_id] = jd._Pending(send=answer, receive=answer, on_progress=on_progress)  # type: ignore[arg-type]
    plan = jd._plan_outbound(None, opts)
    timeout = opts.get("timeout")
    timer: asyncio.TimerHandle | None = None

    async def cancel(reason: str, shield: bool) -> None:
        if plan.cancel_on_abandon:  # a write that started counts as issued (the SDK's rule)
            text = f"courtesy cancel for {reason} request {request_id!r}"
            await dispatcher._final_write(
                functools.partial(dispatcher._cancel_outbound, request_id, reason, None), shield=shield, timeout=jd._ABANDON_WRITE_TIMEOUT, describe=text
            )

    try:
        try:
            await dispatcher._write(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params), plan.metadata)
        except (sdk.anyio.BrokenResourceError, sdk.anyio.ClosedResourceError):
            raise MCPError(code=types.CONNECTION_CLOSED, message="Connection closed") from None
        if timeout is not None:
            timer = loop.call_later(timeout, _expire, answer.future)
        outcome = await answer.future
    except TimeoutError:
        if timer is None:  # the transport's own write gave up: not this request's timeout (as in the SDK)
            raise
        await cancel(f"timed out after {timeout}s", False)
        raise MCPError(code=types.REQUEST_TIMEOUT, message=f"Request {method!r} timed out") from None
    except asyncio.CancelledError:
        await cancel("caller cancelled", True)
        raise
    finally:
        dispatcher._pending.pop(request_id, None)
        if timer is not None:
            timer.cancel()
    if isinstance(outcome, types.ErrorData):
        raise MCPError(code=outcome.code, message=outcome.message, data=outcome.data)
    return outcome  # type: ignore[no-any-return]


async def call_tool(
    session: Any,
    name: str,
    arguments: dict[str, Any],
    timeout: float | None,
    progress: Any,
    stdio: bool = False,
    input_responses: Any = None,
    request_state: str | None = None,
    allow_input_required: bool = False,
    allow_claimed: bool = False,
) -> Any:
    """``session.call_tool(name, arguments, timeout, progress)``, without its per-call model round trip.

    The SDK builds a ``CallToolRequest`` model to dump it straight back to a dict, and validates
    the result twice (against the negotiated version's schema, then as the result type): ~55 µs
    of a ~760 µs sequential call in the kernel. Here the dict goes through the session's own stamp
    and dispatcher and the result is validated once, as the result type, with everything else
    ``send_request`` and ``call_tool`` do around it: the ``Mcp-Name`` header, the session's read
    timeout, the TTL clamp, dropping a later revision's fields, the output-schema check, and the
    refusal of input-required (unless ``allow_input_required``: then it is returned, for
    :func:`drive_input_required`) and claimed results. A ``stdio`` server's request goes by
    :func:`send_request`. ``input_responses`` and ``request_state`` retry a 2026-07-28 call the
    server answered with ``InputRequiredResult``, dumped as the SDK dumps its request model.
    """
    sdk = _sdk()
    types = sdk.types
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if input_responses is not None or request_state is not None:
        model = types.CallToolRequestParams(name=name, arguments=arguments, input_responses=input_responses, request_state=request_state)
        params = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    data: dict[str, Any] = {"method": "tools/call", "params": params}
    opts: dict[str, Any] = {}
    session._stamp(data, opts)
    headers = opts.setdefault("headers", {})
    if sdk.MCP_NAME_HEADER not in headers:
        headers[sdk.MCP_NAME_HEADER] = sdk.encode_header_value(name)
    limit = timeout if timeout is not None else session._session_read_timeout_seconds
    if limit is not None:
        opts["timeout"] = limit
    if progress is not None:
        opts["on_progress"] = progress
    if stdio and not _tracing():
        raw = await send_request(session, "tools/call", data["params"], opts)
    else:
        raw = await session._dispatcher.send_raw_request("tools/call", data.get("params"), opts)
    sdk.session._clamp_inbound_ttl(raw)
    version = session._negotiated_version or "2025-11-25"
    foreign = sdk.session._later_revision_fields("tools/call", version)
    checked = {key: value for key, value in raw.items() if key not in foreign} if not foreign.isdisjoint(raw) else raw
    try:
        result = session._call_tool_adapter.validate_python(checked, by_name=False)
    except ValueError:
        sdk.methods.validate_server_result("tools/call", version, raw)  # the SDK's first check words it better
        raise
    if isinstance(result, types.CallToolResult):
        if not result.is_error:
            await session.validate_tool_result(name, result)
        return result
    if isinstance(result, types.InputRequiredResult):
        if allow_input_required:
            return result
        raise sdk.session._input_required_unexpected("call_tool")
    if allow_claimed:  # an extension's result shape the session was told to accept (a 2026 task)
        return result
    raise sdk.UnexpectedClaimedResult(result)


# ---- protocol revisions (2026-07-28 beside 2025-11-25) ----------------------------------------


async def negotiate(session: Any) -> None:
    """Settle the connection's protocol revision: the newest both sides speak.

    ``mcp.client._probe.negotiate_auto`` is the policy the SDK's own ``Client`` uses by default
    (private module): probe ``server/discover`` at 2026-07-28, re-probe once at a version a
    -32022 names, and fall back to ``initialize`` (2025-11-25 and older) for a server that does
    not know the probe. ``ClientSession`` offers only the two halves, not the policy.
    """
    from mcp.client._probe import negotiate_auto

    await negotiate_auto(session)


async def drive_input_required(first: Any, dispatch: Any, retry: Any, max_rounds: int) -> Any:
    """Answer a 2026-07-28 ``InputRequiredResult`` round by round until the real result comes.

    ``mcp.client._input_required.run_input_required_driver`` (private module) is what the SDK's
    ``Client`` runs: all of a round's requests answered concurrently, ``requestState`` echoed
    byte-exact, a backoff on state-only rounds, a cap on rounds.
    """
    from mcp.client._input_required import run_input_required_driver

    return await run_input_required_driver(first, dispatch=dispatch, retry=retry, max_rounds=max_rounds)


def rounds_exceeded() -> type[Exception]:
    """The SDK's ``InputRequiredRoundsExceededError``, from its private module: ``mcp.client``'s
    ``__init__`` exports it, and importing it from there loads the SDK's server side (see
    :func:`defer_package_inits`)."""
    from mcp.client._input_required import InputRequiredRoundsExceededError

    return InputRequiredRoundsExceededError


def set_modern_log_level(session: Any, level: str) -> None:
    """At 2026-07-28 the log level rides every request's ``_meta``; the session bakes it into its
    request stamp when it adopts the discover result, so a new level means adopting it again
    (``ClientSession`` has no setter: ``_log_level`` is private)."""
    session._log_level = level
    session.adopt(session.discover_result)


def absorb_listing(session: Any, tools: list[Any]) -> None:
    """Teach a new session a tool list it did not fetch (a 2026-07-28 list still fresh by its
    ``ttlMs``): ``ClientSession._absorb_tool_listing`` is what ``list_tools`` and the SDK's own
    response cache run on a listing, so output schemas are checked and ``x-mcp-header`` arguments
    mirrored as if the session had listed the tools itself."""
    from mcp_types import ListToolsResult

    session._absorb_tool_listing(ListToolsResult(tools=list(tools)), complete=True)
