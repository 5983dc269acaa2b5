"""What one ``mcp2repl serve`` was asked for (parsed by the command line, cli/serve.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: Seconds without a request after which an HTTP client's in-process session is closed.
DEFAULT_IDLE = 3600.0
#: Seconds a step that asked a 2026-07-28 client waits for the retry with its answer before it is interrupted.
DEFAULT_ANSWER_WAIT = 600.0
#: Where a generated HTTP token is written (owner-only), under the working directory.
TOKEN_FILE = Path(".mcp2repl") / "serve-token"


@dataclass
class ServeOptions:
    """The server's options; the session options are those of ``mcp2repl -e`` and ``--session``."""

    config: str | None = None
    server: str | None = None
    profile: str | None = None
    timeout: float | None = None  # a step's default limit (a run's timeout_s wins)
    max_output_chars: int | None = None
    artifact_dir: str | None = None
    session: str | None = None  # every step goes to this named session (mcp2repl --session NAME)
    http: tuple[str, int] | None = None  # (host, port): Streamable HTTP at /mcp instead of stdio
    allow_remote: bool = False
    idle_timeout: float = DEFAULT_IDLE
    answer_wait: float = DEFAULT_ANSWER_WAIT  # a suspended step's wait for its client's answer (rounds.py)
    token: str | None = None  # MCP2REPL_SERVE_TOKEN; None: generated at start
    cwd: Path = field(default_factory=Path.cwd)
