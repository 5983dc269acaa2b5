"""Find and read the MCP server configuration: which file, which servers, which profile.

The first config found wins (an explicit path, then the working directory, then the XDG config folder). A kernel
must start even when its config is broken, so nothing here raises: every problem becomes a message that names the
file, the server and the field. Each entry is parsed by spec.py; ``presets`` (jsmcp profiles) choose and filter
servers, and ``MCP2REPL_SERVER`` restricts the kernel to one.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .filters import ToolFilter
from .spec import ServerSpec, _Ctx, _got, _parse, _path, _Problem, _selectors, read_small_file

#: Looked up in the working directory, first found wins.
CWD_FILES = ("mcp2repl.json", ".mcp.json", "mcp.json")
#: Looked up in ``$XDG_CONFIG_HOME/mcp2repl``, first found wins (with a warning naming the others).
XDG_FILES = ("config.json", "config.yaml", "config.yml")
_OMITTED = object()
#: Largest config file read.
CONFIG_LIMIT = 4 << 20
#: ``allow_connect``: which servers a cell may (re)connect with ``api.connect``.
CONNECT_RULES = ("configured", "any")


@dataclass
class LoadedConfig:
    source: Path | None  # None: no config anywhere (the kernel falls back to its demo server)
    servers: dict[str, ServerSpec]  # in file order; servers with a problem have ``error`` set
    problems: list[str]  # config-level errors
    warnings: list[str]
    skipped: dict[str, str] = field(default_factory=dict)  # defined but not used: name -> "disabled" or "excluded by ..."
    profile: str = "default"
    #: every server the file defines, started or not (disabled, excluded by the profile, not selected):
    #: what a cell may connect with ``api.connect(name)`` under the default ``allow_connect``
    available: dict[str, ServerSpec] = field(default_factory=dict)
    allow_connect: str = "configured"
    confirm_destructive: bool = False  # ask before tools annotated destructiveHint run (servers may override)

    @property
    def secrets(self) -> frozenset[str]:
        """Every value of the file that must never be shown (see ``ServerSpec.secrets``)."""
        return frozenset().union(*(s.secrets for s in self.available.values()))


# -- files -----------------------------------------------------------------------------------------------------


def _read(path: Path, prefix: str) -> tuple[object, str | None]:
    try:
        text = read_small_file(path, CONFIG_LIMIT).removeprefix("\ufeff")
    except (OSError, UnicodeDecodeError) as e:
        return None, f"{prefix}cannot read the file: {getattr(e, 'strerror', None) or e}"
    try:
        return _decode(path, prefix, text)
    except (RecursionError, MemoryError):
        return None, f"{prefix}the file is nested too deeply to read"


def _decode(path: Path, prefix: str, text: str) -> tuple[object, str | None]:
    if not text.strip():
        return None, f'{prefix}the file is empty; expected an object with "mcpServers" or "servers"'
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml  # only for a YAML file: a run with a JSON config or none never pays for it

        try:
            return yaml.safe_load(text), None
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            return None, f"{prefix}invalid YAML{where}: {e.problem or e.context}"
        except yaml.YAMLError as e:
            return None, f"{prefix}invalid YAML: {e}"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as e:
        return None, f"{prefix}invalid JSON at line {e.lineno}, column {e.colno}: {e.msg}"


def _find(explicit: str | None, cwd: Path, home: Path, environ: Mapping[str, str], warnings: list[str]) -> Path | None:
    if explicit:
        return _path(explicit, cwd)
    for name in CWD_FILES:
        if (cwd / name).is_file():
            return cwd / name
    xdg = environ.get("XDG_CONFIG_HOME")
    folder = (Path(xdg) if xdg and os.path.isabs(xdg) else home / ".config") / "mcp2repl"
    found = [folder / n for n in XDG_FILES if (folder / n).is_file()]
    if len(found) > 1:
        others = ", ".join(p.name for p in found[1:])
        first = f"only the first of {', '.join(XDG_FILES)} is read"
        warnings.append(f"{_display(found[0], cwd, home)}: ignoring {others} in the same folder ({first})")
    return found[0] if found else None


def config_files(options: Any) -> frozenset[Path]:
    """Every file the config loader may read (``options``: cwd and config), so nothing else writes them."""
    cwd = Path(options.cwd).absolute()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    folder = (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config") / "mcp2repl"
    found = {cwd / n for n in CWD_FILES} | {folder / n for n in XDG_FILES}
    if getattr(options, "config", None):
        found.add(_path(options.config, cwd))
    return frozenset(found)


def _display(path: Path, cwd: Path, home: Path) -> str:
    for base, prefix in ((cwd, ""), (home, "~/")):
        if path != base and path.is_relative_to(base):
            return prefix + str(path.relative_to(base))
    return str(path)


def load_config(
    explicit: str | None = None,
    cwd: Path | None = None,
    profile: str | None = None,
    only: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Find the config, parse every server, apply the profile (``presets``) and the ``only`` restriction.

    ``explicit`` comes from ``MCP2REPL_CONFIG`` / ``--config``; ``profile`` from ``MCP2REPL_PROFILE``; ``only`` from
    ``MCP2REPL_SERVER`` (empty strings mean unset). ``only`` names a server deliberately, so it is used even when
    disabled or excluded by the profile. Without any config, ``source`` is None. Never raises: whatever goes wrong
    becomes a problem of the result.
    """
    try:
        return _load(explicit, cwd, profile, only, os.environ if environ is None else environ)
    except Exception as e:  # noqa: BLE001 - a kernel must start whatever the config holds
        return LoadedConfig(None, {}, [f"could not read the MCP configuration: {type(e).__name__}: {e}"[:400]], [], profile=profile or "default")


def _load(explicit: str | None, cwd: Path | None, profile: str | None, only: str | None, environ: Mapping[str, str]) -> LoadedConfig:
    cwd = (cwd or Path.cwd()).absolute()
    home = Path(environ.get("HOME") or Path.home())
    profile = profile or "default"
    result = LoadedConfig(None, {}, [], [], profile=profile)
    source = _find(explicit, cwd, home, environ, result.warnings)
    if source is None:
        return result
    result.source = source
    prefix = f"{_display(source, cwd, home)}: "
    if explicit and not source.exists():
        result.problems.append(f"{prefix}config file not found ({source})")
        return result
    data, problem = _read(source, prefix)
    servers, rules = _servers_and_rules(data, problem, prefix, profile, result)
    if servers is None or rules is None:
        return result
    result.allow_connect = _connect_rule(data, prefix, result)
    confirm = data.get("confirm_destructive", False) if isinstance(data, Mapping) else False
    if not isinstance(confirm, bool):
        result.warnings.append(f'{prefix}"confirm_destructive" must be true or false, got {_got(confirm)}; not asking')
        confirm = False
    result.confirm_destructive = confirm
    if only and only not in servers:
        result.problems.append(f'{prefix}there is no server named "{only}"; servers: {", ".join(servers) or "(none)"}')
        return result
    for unknown in (s for s in rules if s not in servers):
        result.warnings.append(f'{prefix}"presets.{profile}" names unknown server "{unknown}"; servers: {", ".join(servers)}')
    ctx = _Ctx(prefix, source.parent, environ, result.warnings)
    for name, raw in servers.items():
        if only and name != only:
            continue
        rule = rules.get(name, _OMITTED)
        disabled = isinstance(raw, Mapping) and (raw.get("disabled") is True or raw.get("enabled") is False)
        why = f'excluded by profile "{profile}"' if rule is False else "disabled" if disabled and rule is _OMITTED else None
        spec = _parse(name, raw, ctx if not why or name == only else _Ctx(prefix, source.parent, environ, []))
        if spec.error is None and rule not in (_OMITTED, True, False, None):
            spec = _apply_rule(spec, rule, profile, ctx)
        result.available[name] = spec
        if why and name != only:
            result.skipped[name] = why
            continue
        if why:
            result.warnings.append(f'{prefix}server "{name}" is {why}; using it anyway because it was selected by name')
        result.servers[name] = spec
    for name, raw in servers.items():  # defined, but not selected by MCP2REPL_SERVER: still connectable
        if name not in result.available:
            result.available[name] = _parse(name, raw, _Ctx(prefix, source.parent, environ, []))
    return result


def _connect_rule(data: object, prefix: str, result: LoadedConfig) -> str:
    rule = data.get("allow_connect", "configured") if isinstance(data, Mapping) else "configured"
    if rule not in CONNECT_RULES:
        result.warnings.append(f'{prefix}"allow_connect" must be "configured" or "any", got {_got(rule)}; using "configured"')
        return "configured"
    return str(rule)


def _servers_and_rules(
    data: object, problem: str | None, prefix: str, profile: str, result: LoadedConfig
) -> tuple[dict[str, object] | None, Mapping[str, object] | None]:
    """The top-level checks: which servers block, and the selected profile's rules (None when unusable)."""
    if problem is None and not isinstance(data, Mapping):
        problem = f'{prefix}the top level must be an object with "mcpServers" or "servers", got {_got(data)}'
    if problem is not None:
        result.problems.append(problem)
        return None, None
    assert isinstance(data, Mapping)
    key = "mcpServers" if "mcpServers" in data else "servers" if "servers" in data else None
    if key is None:
        found = ", ".join(f'"{k}"' for k in data) or "nothing"
        result.problems.append(f'{prefix}no "mcpServers" or "servers" key (found {found})')
        return None, None
    if "mcpServers" in data and "servers" in data:
        result.warnings.append(f'{prefix}both "mcpServers" and "servers" are present; using "mcpServers"')
    servers = data[key] if data[key] is not None else {}
    if not isinstance(servers, Mapping):
        result.problems.append(f'{prefix}"{key}" must be an object mapping server names to their settings, got {_got(servers)}')
        return None, None
    if not servers:
        result.warnings.append(f'{prefix}"{key}" is empty, so no servers are configured')
    servers = {str(k): v for k, v in servers.items()}
    presets = data.get("presets") or {}
    if not isinstance(presets, Mapping):
        result.problems.append(f'{prefix}"presets" must be an object mapping profile names to server rules, got {_got(presets)}')
        presets = {}
    if profile not in presets and profile != "default":
        available = ", ".join(["default", *(str(p) for p in presets if p != "default")])
        result.problems.append(f'{prefix}profile "{profile}" is not defined; available presets: {available}')
        return servers, None
    rules = presets.get(profile) or {}
    if not isinstance(rules, Mapping):
        result.problems.append(f'{prefix}"presets.{profile}" must be an object mapping server names to rules, got {_got(rules)}')
        return servers, None
    return servers, {str(k): v for k, v in rules.items()}


def _apply_rule(spec: ServerSpec, rule: object, profile: str, ctx: _Ctx) -> ServerSpec:
    where = f"presets.{profile}.{spec.name}"
    try:
        if not isinstance(rule, str | list | Mapping):
            raise _Problem(where, f"must be true, false, null, a tool name, or a list of tool selectors, got {_got(rule)}")
        return replace(spec, tool_filter=ToolFilter(_selectors(rule, where), spec.tool_filter.deny))
    except _Problem as p:
        return replace(spec, error=ctx.say(spec.name, *p.args))


def demo_spec() -> ServerSpec:
    """The built-in demo server, used when no config exists anywhere."""
    return ServerSpec(
        name="demo",
        transport="stdio",
        command=sys.executable,
        args=["-m", "mcp_kernel.demo.server"],
        description="built-in demo: a small bookshop (search, fetch, aggregate, images, progress)",
    )


def effective_servers(config: LoadedConfig, fallback: ServerSpec | None = None) -> tuple[str, list[ServerSpec]]:
    """Where the servers come from (for the banner) and their specs; ``fallback`` when nothing is configured."""
    if config.source is None and not config.problems and fallback is not None:
        return "built-in demo (no config found)", [fallback]
    return (str(config.source) if config.source else "none"), list(config.servers.values())


def problems_note(problems: Sequence[str]) -> str:
    """The config's problems, to end a "not found" message with (a server may be missing because of them)."""
    if not problems:
        return ""
    return f" The MCP server config has {'a problem' if len(problems) == 1 else f'{len(problems)} problems'}: {'; '.join(problems)}."
