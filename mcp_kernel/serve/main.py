"""``mcp2repl serve``: run the server over stdio or Streamable HTTP until the client (or a signal) ends it.

Over stdio nothing but MCP messages may reach stdout: the SDK's stdio transport moves the real
stdout to a private descriptor and points fd 1 at stderr, so a stray print (ours, a library's, a
child process's) lands on stderr; logs go to stderr too. The connection's Session starts with the
server, so V8 and the MCP servers come up while the client is still initializing.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys

from ..client.trust import is_loopback
from .app import ServeApp
from .options import ServeOptions
from .sessions import STDIO

log = logging.getLogger(__name__)


def serve(options: ServeOptions) -> int:
    """Serve until the client disconnects (stdio) or SIGINT/SIGTERM (HTTP); the exit status."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="[mcp2repl] %(message)s")
    try:
        asyncio.run(_http(options) if options.http else _stdio(options))
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # the port is taken, the address is not ours…
        print(f"mcp2repl serve: error: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


async def _stdio(options: ServeOptions) -> None:
    from mcp.server.stdio import stdio_server

    app = ServeApp(options)
    try:
        async with stdio_server() as (read, write):
            app.sessions.for_connection(STDIO)  # V8 and the servers start while the client initializes
            await app.server.run(read, write, app.server.create_initialization_options())
    finally:
        app.suspended.close()
        await app.sessions.close()


async def _http(options: ServeOptions) -> None:
    import uvicorn

    from .http import asgi_app, token_for

    assert options.http is not None
    host, port = options.http
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # before the address is printed: a client that reads it connects at once (uvicorn starts later)
    port = sock.getsockname()[1]
    token, token_file = token_for(options.token, options.cwd)
    app = ServeApp(options)
    app.sessions.start_reaping()
    config = uvicorn.Config(asgi_app(app, host, port, token), log_level="warning", access_log=False, lifespan="on")
    shown = "localhost" if is_loopback(host) else host
    where = f"the token in {token_file.relative_to(options.cwd) if token_file else 'MCP2REPL_SERVE_TOKEN'}"
    print(f"[mcp2repl] serving MCP at http://{shown}:{port}/mcp (Authorization: Bearer <{where}>)", file=sys.stderr, flush=True)
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        app.suspended.close()
        await app.sessions.close()
