"""Kernels behind a Jupyter gateway: Enterprise Gateway (Kubernetes, Docker, YARN) or a Jupyter Server.

The gateway starts, interrupts and stops kernels over REST (``/api/kernels``) and relays the
kernel's messages over one websocket (``/api/kernels/ID/channels``, JSON messages with a
``channel`` field), so nothing here needs the kernel's ports: the kernel may run anywhere the
gateway can put it. The token comes from ``MCP2REPL_GATEWAY_TOKEN`` (sent as ``Authorization:
token …``). tornado (already under ipykernel) does the HTTP and the websocket, on a private loop
in a thread so that the blocking step API and the command line can use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import threading
import time
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from .registry import SessionError, SessionFiles
from .result import NO_DATA, Collector, StepResult
from .stopping import INTERRUPT, WAIT, StopClock
from .trust import file_problem, write_private
from .wire import OnOutput, StepOptions, header, step_metadata, step_request

KERNEL_NAME = "mcp2repl"
REQUEST_TIMEOUT = 60.0


class _Loop:
    """An asyncio loop on a daemon thread; coroutines are run on it and waited for."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mcp2repl-gateway", daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float | None = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class GatewayKernel:
    """One kernel on a gateway: REST calls and the channels websocket."""

    def __init__(self, url: str, token: str, kernel_id: str, loop: _Loop | None = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.kernel_id = kernel_id
        self.loop = loop or _Loop()
        self.session = uuid.uuid4().hex
        self.ws: WebSocketClientConnection | None = None
        self._interrupt = threading.Event()
        self.client = "step-api"  # who a step's metadata says sent it (KernelSession sets it)

    # ---- REST -----------------------------------------------------------------------------------

    @staticmethod
    async def _call(url: str, token: str, method: str, path: str, body: Any = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"token {token}"
        request = HTTPRequest(
            url.rstrip("/") + path,
            method=method,
            headers=headers,
            body=None if body is None and method in ("GET", "DELETE") else json.dumps(body or {}),
            request_timeout=REQUEST_TIMEOUT,
            allow_nonstandard_methods=True,
        )
        response = await AsyncHTTPClient().fetch(request, raise_error=True)
        return json.loads(response.body) if response.body else None

    @classmethod
    def start(cls, url: str, token: str, env: dict[str, str] | None = None) -> GatewayKernel:
        """Ask the gateway for a new mcp2repl kernel (its kernelspec must be installed there)."""
        loop = _Loop()
        try:
            # Enterprise Gateway starts the kernel as KERNEL_USERNAME (and checks it against its allowed users)
            env = {"KERNEL_USERNAME": getpass.getuser(), **(env or {})}
            model = loop.run(_friendly(url, cls._call(url, token, "POST", "/api/kernels", {"name": KERNEL_NAME, "env": env})))
        except BaseException:
            loop.stop()
            raise
        return cls(url, token, model["id"], loop)

    def exists(self) -> bool:
        try:
            self.loop.run(self._call(self.url, self.token, "GET", f"/api/kernels/{self.kernel_id}"))
        except HTTPClientError as exc:
            if exc.code == 404:
                return False
            raise
        return True

    def interrupt(self) -> None:
        """Stop the running step (thread-safe): the step's loop asks the gateway."""
        self._interrupt.set()

    def stop(self) -> None:
        with contextlib.suppress(HTTPClientError):
            self.loop.run(self._call(self.url, self.token, "DELETE", f"/api/kernels/{self.kernel_id}"))
        self.loop.stop()

    def close(self) -> None:
        """Close the websocket (on the loop that owns it); the kernel keeps running."""
        if self.ws is not None:
            ws, self.ws = self.ws, None

            async def close() -> None:
                ws.close()

            with contextlib.suppress(Exception):
                self.loop.run(close(), 5)

    # ---- messages -------------------------------------------------------------------------------

    async def _socket(self) -> WebSocketClientConnection:
        if self.ws is None:
            parts = urlsplit(self.url)
            scheme = "wss" if parts.scheme == "https" else "ws"
            ws_url = urlunsplit((scheme, parts.netloc, f"{parts.path}/api/kernels/{self.kernel_id}/channels", "", ""))
            headers = {"Authorization": f"token {self.token}"} if self.token else {}
            self.ws = await websocket_connect(HTTPRequest(ws_url, headers=headers, request_timeout=REQUEST_TIMEOUT))
        return self.ws

    def _message(self, msg_type: str, content: dict[str, Any], metadata: dict[str, Any]) -> tuple[str, str]:
        head = header(self.session, msg_type)
        msg = {"header": head, "parent_header": {}, "metadata": metadata, "content": content, "channel": "shell", "buffers": []}
        return str(head["msg_id"]), json.dumps(msg)

    def execute(
        self, code: str, timeout: float | None = None, on_output: OnOutput | None = None, data: Any = NO_DATA, options: StepOptions | None = None
    ) -> StepResult:
        return self.loop.run(self._execute(code, timeout, on_output, data, options))

    async def _execute(self, code: str, timeout: float | None, on_output: OnOutput | None, data: Any, options: StepOptions | None) -> StepResult:
        started = time.monotonic()
        ws = await self._socket()
        self._interrupt.clear()
        options = StepOptions(timeout, options.max_output_chars if options else None, bool(options and options.trace))
        msg_id, text = self._message("execute_request", step_request(code), step_metadata(data, options, self.client))
        await ws.write_message(text)
        got = Collector()
        got.result.traced = options.trace
        replied = idle = False
        clock = StopClock(started, timeout, self._interrupt)
        while not (replied and idle):
            try:
                raw = await asyncio.wait_for(ws.read_message(), 0.1)
            except TimeoutError:
                raw = ""
            if raw is None:
                self.ws = None
                raise SessionError(f"the gateway closed the connection to kernel {self.kernel_id} during the step")
            if raw:
                msg = json.loads(raw)
                if (msg.get("parent_header") or {}).get("msg_id") == msg_id:
                    kind, channel = msg.get("msg_type") or msg["header"]["msg_type"], msg.get("channel")
                    if channel == "shell":
                        got.reply(msg["content"], msg.get("metadata") or {})
                        replied = True
                    elif kind == "status":
                        idle = msg["content"].get("execution_state") == "idle"
                    elif channel == "iopub":
                        got.iopub(kind, msg["content"])
                        if on_output is not None:
                            on_output(kind, msg["content"])
            act = clock.tick(time.monotonic(), True)  # the gateway queues nothing ahead: interrupt at once
            if act is INTERRUPT:
                await self._call(self.url, self.token, "POST", f"/api/kernels/{self.kernel_id}/interrupt")
            elif act is not WAIT:  # a StepError: stop waiting
                got.result.error = act
                break
        result = got.finish((time.monotonic() - started) * 1000)
        return clock.outcome(result)


async def _friendly(url: str, coro: Any) -> Any:
    """Gateway errors as one sentence: which gateway, what it said."""
    try:
        return await coro
    except HTTPClientError as exc:
        body = exc.response.body.decode(errors="replace")[:300] if exc.response is not None and exc.response.body else ""
        hint = " (check MCP2REPL_GATEWAY_TOKEN)" if exc.code == 401 else ""
        raise SessionError(f"the gateway at {url} refused to start an mcp2repl kernel: HTTP {exc.code}{hint} {body}".rstrip()) from None
    except OSError as exc:
        raise SessionError(f"cannot reach the gateway at {url}: {exc}") from None


class GatewaySession:
    """Named gateway sessions: the kernel id is kept in ``.mcp2repl/sessions/NAME.gateway.json``.

    That record is trusted only as the session files are (trust.py): a planted one could name
    another user's kernel on a shared gateway, and the step would run there.
    """

    @staticmethod
    def named(url: str, token: str, files: SessionFiles, *, restart: bool, notices: list[str]) -> GatewayKernel:
        record = files.gateway
        problem = file_problem(record)
        if problem not in (None, "is missing"):
            if not restart:
                raise SessionError(
                    f"session {files.name!r} is untrusted: {files.rel(record)} {problem}. No code was sent to it: "
                    "remove that file, or replace it with --restart (KernelSession(..., restart=True))"
                )
            notices.append(f"session {files.name!r} was untrusted ({files.rel(record)} {problem}); it was replaced by a new kernel")
        with contextlib.suppress(OSError, ValueError):
            saved = json.loads(record.read_text()) if problem is None else {}
            if saved.get("url") == url.rstrip("/"):
                kernel = GatewayKernel(url, token, saved["kernel_id"])
                if kernel.exists():
                    if not restart:
                        return _recorded(kernel, files)
                    notices.append(f"session {files.name!r} restarted on the gateway: its state was dropped")
                    kernel.stop()
                else:
                    kernel.loop.stop()
                    notices.append(f"session {files.name!r} had ended on the gateway and was started again: its state was lost")
        return _recorded(GatewayKernel.start(url, token), files)


def _recorded(kernel: GatewayKernel, files: SessionFiles) -> GatewayKernel:
    record = files.gateway
    write_private(record, json.dumps({"url": kernel.url, "kernel_id": kernel.kernel_id, "started": time.time()}), files.rel(record))
    original_stop = kernel.stop

    def stop() -> None:  # a stopped session leaves no record behind
        original_stop()
        with contextlib.suppress(OSError):
            record.unlink()

    kernel.stop = stop  # type: ignore[method-assign]
    return kernel
