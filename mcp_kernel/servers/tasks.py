"""Tool calls run as MCP tasks (protocol 2025-11-25, ``execution.taskSupport``).

The mcp 2.3 SDK has the task types (``CreateTaskResult``, ``tasks/get``, ``tasks/result``,
``tasks/cancel``) but no client support: ``ClientSession.call_tool`` cannot ask for a task,
``send_request`` rejects a ``CreateTaskResult`` as an invalid ``tools/call`` answer, and nothing
polls a task. So the life cycle is driven here with the SDK's own types and session (the one
unchecked send is in compat/mcp_sdk.py), never with hand-written JSON-RPC:

1. ``tools/call`` with ``task: {ttl}`` answers ``CreateTaskResult`` (or, from a server that chose
   not to, the plain result);
2. ``tasks/result`` blocks until the task ends (the server delivers its elicitation requests on it)
   while ``tasks/get`` is polled at the server's ``pollInterval`` for the status message;
3. progress notifications carry a token of ours, which outlives the ``tools/call`` request the
   SDK's dispatcher would tie them to, so the connection routes them here;
4. an interrupt or the call's time limit sends ``tasks/cancel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from ..compat import send_unvalidated

Progress = Callable[[float, float | None, str | None], Awaitable[None]]

#: How long the server should keep a task's result (ms): the call waits at most its time limit anyway.
TTL_MS = 30 * 60 * 1000
#: Bounds on how often ``tasks/get`` is polled (seconds), whatever the server suggests.
POLL_MIN, POLL_MAX = 0.2, 5.0
_CREATED: TypeAdapter[types.CreateTaskResult | types.CallToolResult] = TypeAdapter(types.CreateTaskResult | types.CallToolResult)


def runs_as_task(tool: types.Tool | None) -> bool:
    """Tools that must run as tasks, or may (``optional``): both run as tasks here, so they can be watched and cancelled."""
    execution = getattr(tool, "execution", None)
    return getattr(execution, "task_support", None) in ("required", "optional")


class TaskRunner:
    """Runs task tools on one session and routes their progress notifications."""

    def __init__(self) -> None:
        self._progress: dict[str, Progress] = {}

    async def on_progress(self, params: types.ProgressNotificationParams) -> bool:
        """A progress notification: True when it belongs to one of our tasks (it was handled)."""
        callback = self._progress.get(str(params.progress_token))
        if callback is None:
            return False
        await callback(params.progress, params.total, params.message)
        return True

    async def call(
        self, session: ClientSession, tool: str, args: dict[str, Any], limit: float | None, progress: Progress | None
    ) -> types.CallToolResult:
        """Run ``tool`` as a task and return its result; raises MCPError (a timeout: REQUEST_TIMEOUT)."""
        token = f"mcp2repl-task-{uuid.uuid4().hex[:12]}"
        if progress is not None:
            self._progress[token] = progress
        task_id: str | None = None
        try:
            async with asyncio.timeout(limit):
                request = types.CallToolRequest(
                    params=types.CallToolRequestParams(
                        name=tool, arguments=args, task=types.TaskMetadata(ttl=TTL_MS), _meta={"progressToken": token}
                    )
                )
                created = _CREATED.validate_python(await send_unvalidated(session, request))
                if isinstance(created, types.CallToolResult):
                    return created
                task_id = created.task.task_id
                if progress is not None and created.task.status_message:
                    await progress(0, None, created.task.status_message)
                watcher = asyncio.ensure_future(self._watch(session, created.task, progress))
                try:
                    result = await session.send_request(
                        types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)), types.CallToolResult
                    )
                finally:
                    watcher.cancel()
                task_id = None  # ended: nothing to cancel
                return result
        except TimeoutError:
            raise MCPError(types.REQUEST_TIMEOUT, f"task {task_id} did not finish in time" if task_id else "no task was created in time") from None
        finally:
            self._progress.pop(token, None)
            if task_id is not None:  # interrupted, timed out or failed while running: stop it on the server
                await cancel_task(session, task_id)

    async def _watch(self, session: ClientSession, task: types.Task, progress: Progress | None) -> None:
        """Poll ``tasks/get`` for the status message (shown as progress) until the task ends."""
        last = task.status_message
        while task.status not in ("completed", "failed", "cancelled"):
            await asyncio.sleep(min(POLL_MAX, max(POLL_MIN, (task.poll_interval or 1000) / 1000)))
            try:
                task = await session.send_request(
                    types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id)), types.GetTaskResult
                )
            except MCPError:
                return  # tasks/result still brings the outcome
            message = task.status_message
            if progress is not None and message and message != last:
                await progress(0, None, message if task.status != "input_required" else f"{message} (waiting for input)")
            last = message


async def cancel_task(session: ClientSession, task_id: str) -> None:
    """``tasks/cancel``, bounded and shielded: it runs while the calling task is being cancelled."""
    request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.shield(asyncio.wait_for(session.send_request(request, types.CancelTaskResult), 5.0))
