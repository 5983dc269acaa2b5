"""One server entry of an MCP config, normalised: transport, command or URL, environment, filters.

Users already describe their servers for Claude Code, Cursor or Claude Desktop (``mcpServers``), VS Code or jsmcp
(``servers``), so entries of all those shapes are read here (``type`` local/stdio/remote/http/sse, array commands,
``environment``, ``enabled``, ``timeout`` in ms, ``blocked_tools``). Nothing here raises: a bad entry comes back as
a :class:`ServerSpec` with ``error`` naming the file, the server and the field, and the other servers stay usable.

A ``command`` string that contains spaces and comes without ``args`` (``"npx -y some-server"``) is split with
:func:`shlex.split`, because that is what people paste from READMEs; a string naming an existing file is kept whole,
so ``"/Applications/My App/server"`` still works.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

from .approval import approval_keys
from .authspec import AuthProblem, AuthSpec, parse_auth
from .filters import ALL_TOOLS, Selector, ToolFilter

#: Every spelling of ``type`` we accept, mapped to the transport it means.
TYPES: dict[str, Literal["stdio", "http", "sse"]] = {"stdio": "stdio", "local": "stdio", "sse": "sse"}
TYPES |= dict.fromkeys(("http", "remote", "streamable-http", "streamableHttp"), "http")

_ENV_RE = re.compile(r"\$\{input:(?P<input>[^}]*)\}|\$\{(?:env:)?(?P<name>[A-Za-z_]\w*)(?::-(?P<default>[^}]*))?\}|\{env:(?P<env>[^}]*)\}")
_FILE_RE = re.compile(r"\{file:([^}]+)\}")
#: Largest file a ``{file:}`` substitution or an ``envFile`` may read.
FILE_LIMIT = 1 << 20
#: Substituted, header, env and URL values at least this long are treated as secrets.
SECRET_MIN = 6


@dataclass(frozen=True)
class ServerSpec:
    """One server entry, normalised. Frozen: derive variants with :func:`dataclasses.replace`."""

    name: str
    transport: Literal["stdio", "http", "sse"]
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # only the configured vars; the connection adds a safe default env
    cwd: str | None = None  # absolute, resolved against the config file's folder
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    auth: AuthSpec | None = None  # the "auth" (or Claude Code's "oauth") block of a remote server
    timeout: float | None = None  # seconds (configs give milliseconds)
    description: str = ""
    tool_filter: ToolFilter = ALL_TOOLS
    #: ask before a tool annotated destructiveHint runs (None: the config's top-level "confirm_destructive")
    confirm_destructive: bool | None = None
    allow_destructive: tuple[str, ...] = ()  # tools that run without asking
    confirm: tuple[str, ...] = ()  # tools that ask before every call, whatever their annotations (servers/approval.py)
    #: what to do when the server asks the user for input (MCP elicitation): see servers/elicitation.py
    elicitation: Literal["ask", "defaults", "decline"] = "ask"
    #: the client's roots: None or False offers none (no roots capability; a server's scope is what it was given)
    roots: tuple[str, ...] | Literal[False] | None = None
    log_level: str | None = None  # sent as logging/setLevel once connected (None: the server's own default; 2026-07-28: info)
    error: str | None = None  # set when this entry cannot be used; the full message, file and server included
    #: values that must never be shown: substituted values, header and env values, URL credentials and queries
    secrets: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    @property
    def state(self) -> Literal["ok", "error"]:
        return "error" if self.error else "ok"


class _Problem(Exception):
    """Internal: ``(field path, message)`` for a bad value; always caught and turned into a message."""


@dataclass
class _Ctx:
    prefix: str  # "mcp.json: " when reading a file, "" for parse_spec
    base_dir: Path
    environ: Mapping[str, str]
    warnings: list[str]
    substitute: bool = True  # False for specs written in a cell: their text is taken literally
    secrets: set[str] = field(default_factory=set)  # values substituted into the entry being parsed

    def say(self, name: str, where: str, message: str) -> str:
        return f'{self.prefix}server "{name}": ' + (f'"{where}" ' if where else "") + message


def _got(value: object) -> str:
    """Show a bad value the way the user wrote it, or its kind when that would be long."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) <= 40:
        return text
    kinds = {dict: "an object", list: "a list", str: "a string"}
    return next((k for t, k in kinds.items() if isinstance(value, t)), type(value).__name__)


def _path(text: str, base_dir: Path) -> Path:
    path = Path(os.path.expanduser(text))
    return path if path.is_absolute() else base_dir / path


def read_small_file(path: Path, limit: int = FILE_LIMIT) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes.

    Opened without blocking and checked after opening: a FIFO, a device or a socket named in a
    config would otherwise block the kernel forever (or read without end).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory")
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode) else "a device"
            raise OSError(errno.EINVAL, f"{path} is {kind}, not a regular file")
        if info.st_size > limit:
            raise OSError(errno.EFBIG, f"{path} is larger than {limit // 1024} KB")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"{path} is larger than {limit // 1024} KB")
    return data.decode("utf-8")


# -- substitution ----------------------------------------------------------------------------------------------


def _substitute(text: str, where: str, name: str, ctx: _Ctx) -> str:
    """Expand ``{env:X}``, ``${X}``, ``${X:-default}`` (and VS Code's ``${env:X}``), then ``{file:path}``.

    Only config files get this: text written in a cell is taken as it is, so a cell cannot read
    files or the environment through a spec. Every substituted value is remembered as a secret.
    """
    if not ctx.substitute:
        return text

    def env(m: re.Match[str]) -> str:
        if m["input"] is not None:
            ctx.warnings.append(
                ctx.say(name, where, f"uses the VS Code input prompt ${{input:{m['input']}}}, which mcp2repl cannot show; "
                        'using an empty string (write the value, or ${NAME} to read an environment variable)')
            )  # fmt: skip
            return ""
        var = m["name"] or m["env"].strip()
        value = ctx.environ.get(var)
        if m["default"] is not None:
            return remember(value or m["default"])
        if value is None and var == "workspaceFolder":  # VS Code's; the config lives in the workspace or its .vscode
            return str(ctx.base_dir.parent if ctx.base_dir.name == ".vscode" else ctx.base_dir)
        if value is None:
            ctx.warnings.append(ctx.say(name, where, f"uses environment variable {var}, which is not set; using an empty string"))
            return ""
        return remember(value)

    def remember(value: str) -> str:
        ctx.secrets.add(value)
        return value

    def file(m: re.Match[str]) -> str:
        path = _path(m[1].strip(), ctx.base_dir)
        try:
            content = read_small_file(path)
        except FileNotFoundError:
            raise _Problem(where, f"cannot read {m[0]}: file not found ({path})") from None
        except (OSError, UnicodeDecodeError) as e:
            raise _Problem(where, f"cannot read {m[0]}: {getattr(e, 'strerror', None) or e}") from None
        return remember(content[:-2] if content.endswith("\r\n") else content.removesuffix("\n"))

    return _FILE_RE.sub(file, _ENV_RE.sub(env, text))


def _walk(value: object, where: str, name: str, ctx: _Ctx) -> object:
    if isinstance(value, str):
        return _substitute(value, where, name, ctx)
    if isinstance(value, Mapping):
        return {str(k): _walk(v, f"{where}.{k}" if where else str(k), name, ctx) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, f"{where}[{i}]", name, ctx) for i, v in enumerate(value)]
    return value


# -- field readers ---------------------------------------------------------------------------------------------


def _scalar(value: object, where: str) -> str:
    """Env and header values: numbers and booleans are what users obviously mean as text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise _Problem(where, f"must be a string, got {_got(value)}")


def _strings(value: object, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Problem(where, f"must be a list of strings, got {_got(value)}")
    return [_scalar(v, f"{where}[{i}]") for i, v in enumerate(value)]


def _string_map(value: object, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _Problem(where, f"must be an object mapping names to strings, got {_got(value)}")
    return {str(k): _scalar(v, f"{where}.{k}") for k, v in value.items()}


def _env_file(value: object, ctx: _Ctx) -> dict[str, str]:
    """VS Code's ``envFile``: KEY=VALUE lines; ``#`` comments, ``export`` prefixes and quotes are allowed."""
    if value is None:
        return {}
    if not isinstance(value, str):
        raise _Problem("envFile", f"must be a path, got {_got(value)}")
    path = _path(value, ctx.base_dir)
    try:
        lines = read_small_file(path).splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise _Problem("envFile", f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    env = {}
    for line in lines:
        key, sep, val = line.strip().removeprefix("export ").partition("=")
        if sep and key.strip() and not key.startswith("#"):
            val = val.strip()
            env[key.strip()] = val[1:-1] if len(val) > 1 and val[0] == val[-1] and val[0] in "'\"" else val
    return env


def _selectors(value: object, where: str) -> tuple[Selector, ...]:
    """A tool name, a ``{"regex": ...}`` / ``{"glob": ...}`` object, or a list of those."""
    items = value if isinstance(value, list) else [value]
    out = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]" if isinstance(value, list) else where
        if isinstance(item, str):
            out.append(Selector("name", item))
            continue
        kind, pattern = next(iter(item.items())) if isinstance(item, Mapping) and len(item) == 1 else (None, None)
        if kind not in ("regex", "glob") or not isinstance(pattern, str):
            raise _Problem(at, f'must be a tool name or an object with "regex" or "glob", got {_got(item)}')
        if kind == "regex":
            try:
                re.compile(pattern)
            except re.error as e:
                raise _Problem(at, f"is not a valid regex: {e}") from None
        out.append(Selector(kind, pattern))
    return tuple(out)


def _command(entry: Mapping[str, object]) -> tuple[str, list[str]]:
    cmd, has_args = entry.get("command"), entry.get("args") is not None
    if cmd is None:
        raise _Problem("command", "is missing (a stdio server needs a command to run)")
    if isinstance(cmd, str) and cmd.strip():
        if has_args or not any(c.isspace() for c in cmd.strip()) or os.path.exists(os.path.expanduser(cmd)):
            return cmd, []
        try:
            words = shlex.split(cmd)
        except ValueError as e:
            raise _Problem("command", f"cannot be split into words: {e}") from None
        return words[0], words[1:]
    if isinstance(cmd, list) and cmd and all(isinstance(c, str) for c in cmd) and cmd[0].strip():
        return cmd[0], list(cmd[1:])
    raise _Problem("command", f"must be a string or a non-empty list of strings, got {_got(cmd)}")


ELICITATION = ("ask", "defaults", "decline")
#: The MCP (syslog) levels, lowest first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def _protocol_keys(entry: Mapping[str, object], ctx: _Ctx) -> dict[str, object]:
    """``elicitation``, ``roots`` and ``log_level``: how the client side of the protocol behaves for this server."""
    out: dict[str, object] = {}
    if (policy := entry.get("elicitation")) is not None and policy not in ELICITATION:
        raise _Problem("elicitation", f'must be "ask", "defaults" or "decline", got {_got(policy)}')
    roots = entry.get("roots")
    if roots is False:
        out["roots"] = False
    elif roots is not None:
        if roots is True or not isinstance(roots, list) or not all(isinstance(r, str) and r.strip() for r in roots):
            raise _Problem("roots", f"must be a list of folder paths, or false for none, got {_got(roots)}")
        out["roots"] = tuple(os.path.normpath(_path(r, ctx.base_dir)) for r in roots)
    if (level := entry.get("log_level")) is not None and level not in LOG_LEVELS:
        raise _Problem("log_level", f"must be one of {', '.join(LOG_LEVELS)}, got {_got(level)}")
    return out | {k: v for k, v in (("elicitation", policy), ("log_level", level)) if v is not None}


def _transport(entry: Mapping[str, object], name: str, ctx: _Ctx) -> Literal["stdio", "http", "sse"]:
    kind = entry.get("type")
    if kind is not None:
        if isinstance(kind, str) and kind in TYPES:
            return TYPES[kind]
        raise _Problem("type", f'must be one of "stdio", "local", "http", "remote", "sse", got {_got(kind)}')
    if "command" in entry:
        if "url" in entry:
            ctx.warnings.append(ctx.say(name, "", 'has both "command" and "url"; starting the command (set "type" to choose)'))
        return "stdio"
    url = entry.get("url")
    if url is not None:
        try:
            return "sse" if isinstance(url, str) and urlsplit(url).path.rstrip("/").endswith("/sse") else "http"
        except ValueError as e:
            raise _Problem("url", f"is not a valid URL: {e}") from None
    raise _Problem("", 'needs "command" (to start a local server) or "url" (to connect to a remote one)')


# -- one server ------------------------------------------------------------------------------------------------


def _parse(name: str, raw: object, ctx: _Ctx) -> ServerSpec:
    if isinstance(raw, str | list):  # shorthand for api.connect: a command line, a command array, or a URL
        is_url = isinstance(raw, str) and raw.startswith(("http://", "https://"))
        raw = {"url": raw} if is_url else {"command": raw}
    guess: Literal["stdio", "http"] = "http" if isinstance(raw, Mapping) and "url" in raw and "command" not in raw else "stdio"
    ctx.secrets = set()
    try:
        if not name:
            raise _Problem("", "the server name must not be empty")
        if not isinstance(raw, Mapping):
            raise _Problem("", f'must be an object with "command" or "url", got {_got(raw)}')
        for key in ("enabled", "disabled"):  # validated here, acted on by load_config
            if raw.get(key) is not None and not isinstance(raw[key], bool):
                raise _Problem(key, f"must be true or false, got {_got(raw[key])}")
        entry = _walk(raw, "", name, ctx)
        assert isinstance(entry, dict)
        transport = _transport(entry, name, ctx)
        description, timeout = entry.get("description"), entry.get("timeout")
        if description is not None and not isinstance(description, str):
            raise _Problem("description", f"must be a string, got {_got(description)}")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
            raise _Problem("timeout", f"must be a positive number of milliseconds, got {_got(timeout)}")
        blocked = entry.get("blocked_tools")
        common = {
            "name": name,
            "transport": transport,
            "timeout": timeout / 1000 if timeout else None,
            "description": description or "",
            "tool_filter": ToolFilter(deny=_selectors(blocked, "blocked_tools")) if blocked is not None else ALL_TOOLS,
            **approval_keys(entry, _Problem, _strings, _got),
            **_protocol_keys(entry, ctx),
        }
        if transport != "stdio":
            url = entry.get("url")
            if url is None:
                raise _Problem("url", f"is missing (an {transport} server needs a URL)")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise _Problem("url", f"must be an http:// or https:// URL, got {_got(url)}")
            try:
                parts = urlsplit(url)
                parts.port  # noqa: B018 - raises for a port that is not a number
            except ValueError as e:
                raise _Problem("url", f"is not a valid URL: {e}") from None
            headers = _string_map(entry.get("headers"), "headers")
            auth = parse_auth(entry.get("auth"), entry.get("oauth"))
            ctx.secrets.discard(auth.client_id if auth else "")  # a client ID is public; masking it would break the login link
            return ServerSpec(url=url, headers=headers, auth=auth, secrets=_secrets(ctx, url=url, values=headers.values()), **common)
        command, args = _command(entry)
        args += _strings(entry.get("args"), "args")
        env = _env_file(entry.get("envFile"), ctx)
        env |= _string_map(entry.get("env"), "env") | _string_map(entry.get("environment"), "environment")
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise _Problem("cwd", f"must be a path, got {_got(cwd)}")
        cwd = os.path.normpath(_path(cwd, ctx.base_dir)) if cwd else None
        return ServerSpec(command=command, args=args, env=env, cwd=cwd, secrets=_secrets(ctx, values=env.values()), **common)
    except (_Problem, AuthProblem) as p:
        return ServerSpec(name, guess, error=ctx.say(name, *p.args), secrets=_secrets(ctx))
    except (ValueError, TypeError, RecursionError, MemoryError) as e:  # a shape nothing above expected: this entry alone fails
        return ServerSpec(name, guess, error=ctx.say(name, "", f"cannot be read: {type(e).__name__}: {e}"[:300]), secrets=_secrets(ctx))


def _secrets(ctx: _Ctx, url: str | None = None, values: object = ()) -> frozenset[str]:
    """What must not be shown of an entry: substituted values, header and env values (and the token
    after a scheme word such as "Bearer"), a URL's password and query values."""
    found = set(ctx.secrets)
    for value in values:  # type: ignore[attr-defined]
        found.add(value)
        found.update(value.split(" ", 1)[1:])
    if url:
        with contextlib.suppress(ValueError):
            parts = urlsplit(url)
            found.update(filter(None, [parts.password, parts.username if parts.password else None]))
            found.update(v for _, v in parse_qsl(parts.query))
    return frozenset(v for v in found if isinstance(v, str) and len(v) >= SECRET_MIN)


def parse_spec(
    name: str,
    raw: object,
    base_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    warnings: list[str] | None = None,
    substitute: bool = True,
) -> ServerSpec:
    """Parse one server entry (the shape of a config entry), e.g. for ``api.connect(name, spec)`` from a cell.

    Never raises: a bad entry comes back with ``error`` set. Relative paths resolve against ``base_dir`` (default:
    the current directory). A string (``"uvx mcp-server-time"`` or ``"https://host/mcp"``) or a command list is
    accepted as shorthand. Pass ``warnings`` to collect them (unset environment variables and the like).
    ``substitute=False`` (specs written in a cell) takes every value literally: no environment, no files.
    """
    ctx = _Ctx("", base_dir or Path.cwd(), os.environ if environ is None else environ, [] if warnings is None else warnings, substitute)
    return _parse(name, raw, ctx)
