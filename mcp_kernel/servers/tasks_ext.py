"""Task tools under 2026-07-28: the ``io.modelcontextprotocol/tasks`` extension (SEP-2663).

A server that supports it may answer any ``tools/call`` with a task (``resultType: "task"``)
instead of the result. Then ``tasks/get`` is polled at the server's ``pollIntervalMs`` until the
task ends: ``completed`` inlines the tool's result, ``failed`` a JSON-RPC error; ``input_required``
carries input requests, answered exactly as a call's (:mod:`.mrtr`) and sent by ``tasks/update``.
Status messages show as progress; an interrupt or the call's time limit sends ``tasks/cancel``.

mcp 2.3 has no types for this extension (its task types are 2025-11-25's, see :mod:`.tasks`): the
models are declared here on the SDK's own bases and sent through the session like any request
(the one unchecked send is in compat/mcp_sdk.py), never as hand-written JSON-RPC. The extension
is declared in every 2026 request's capabilities; the SDK drops the claim on older revisions.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import mcp_types as types
from mcp.client.extension import ResultClaim
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError

from ..compat import send_unvalidated
from .tasks import POLL_MAX, POLL_MIN, cancel_task

TASKS = "io.modelcontextprotocol/tasks"
Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class CreateTaskResult(types.Result):
    """A ``tools/call`` answered with a task: flat ``Result & Task``."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None


class DetailedTask(types.Result):
    """``tasks/get``: the task's state, with the result or error inlined once it ended."""

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, types.InputRequest] | None = None
    result: dict[str, Any] | None = None
    error: types.ErrorData | None = None


class UpdateTaskParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class UpdateTaskRequest(types.Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams


async def _never(created: CreateTaskResult, ctx: Any) -> types.CallToolResult:
    raise RuntimeError("tasks are followed by tasks_ext.follow")  # compat.call_tool returns the claim instead


def session_options() -> dict[str, Any]:
    """``ClientSession`` arguments that declare the extension and accept its ``resultType``."""
    claim = ResultClaim(result_type="task", model=CreateTaskResult, resolve=_never)
    return {"extensions": {TASKS: {}}, "result_claims": {TASKS: [claim]}}


async def follow(session: ClientSession, created: CreateTaskResult, limit: float | None, progress: Progress | None) -> types.CallToolResult:
    """Poll the task to its end and return the tool's result; raises MCPError (a timeout: REQUEST_TIMEOUT)."""
    task_id: str | None = created.task_id
    last = created.status_message
    interval = created.poll_interval_ms
    try:
        async with asyncio.timeout(limit):
            if progress is not None and last:
                await progress(0, None, last)
            while True:
                await asyncio.sleep(min(POLL_MAX, max(POLL_MIN, (interval or 1000) / 1000)))
                task = DetailedTask.model_validate(await send_unvalidated(session, types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=created.task_id))))
                interval = task.poll_interval_ms or interval
                if progress is not None and task.status_message and task.status_message != last:
                    last = task.status_message
                    await progress(0, None, last)
                if task.status == "completed":
                    task_id = None
                    return types.CallToolResult.model_validate(task.result or {"content": []})
                if task.status in ("failed", "cancelled"):
                    task_id = None
                    if task.error is not None:
                        raise MCPError(task.error.code, task.error.message, task.error.data)
                    raise MCPError(types.INTERNAL_ERROR, f"the server {task.status} task {created.task_id}")
                if task.status == "input_required" and task.input_requests:
                    responses = {key: await _answer(session, key, asked) for key, asked in task.input_requests.items()}
                    update = UpdateTaskRequest(params=UpdateTaskParams(task_id=created.task_id, input_responses=responses))
                    await send_unvalidated(session, update)
    except TimeoutError:
        raise MCPError(types.REQUEST_TIMEOUT, f"task {created.task_id} did not finish in time") from None
    finally:
        if task_id is not None:  # interrupted, timed out or failed while running: stop it on the server
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await cancel_task(session, task_id)


async def _answer(session: ClientSession, key: str, asked: types.InputRequest) -> Any:
    answer = await session.dispatch_input_request(ClientRequestContext(session=session, request_id=key), asked)
    if isinstance(answer, types.ErrorData):
        raise MCPError(answer.code, answer.message, answer.data)
    return answer.model_dump(by_alias=True, mode="json", exclude_none=True)
