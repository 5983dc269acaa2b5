#!/usr/bin/env python3
"""A reverse proxy that adds ``mcp2repl serve``'s bearer token: the conformance suite sends none.

Everything else passes through unchanged, Host and Origin included (the suite's DNS-rebinding
scenario sends a foreign Host and expects the server itself to refuse it), and responses stream
(SSE) as they come.

usage: conformance_proxy.py UPSTREAM_URL PORT TOKEN
"""

from __future__ import annotations

import sys

import httpx2
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

HOP = {"content-length", "transfer-encoding", "connection", "keep-alive"}


def main(argv: list[str]) -> None:
    upstream, port, token = argv[0], int(argv[1]), argv[2]
    client = httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=None))

    async def forward(request: Request) -> StreamingResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        headers["authorization"] = f"Bearer {token}"
        sent = client.build_request(request.method, upstream, headers=headers, content=await request.body())
        answer = await client.send(sent, stream=True)
        kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP}
        return StreamingResponse(answer.aiter_raw(), status_code=answer.status_code, headers=kept, background=BackgroundTask(answer.aclose))

    app = Starlette(routes=[Route("/mcp", forward, methods=["GET", "POST", "DELETE"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
