"""Find and read the MCP server configuration: which file, which servers, which profile.

The first config found wins (an explicit path, then the working directory, then the XDG config folder). A kernel
must start even when its config is broken, so nothing here raises: every problem becomes a message that names the
file, the server and the field. Each entry is parsed by spec.py; ``presets`` (jsmcp profiles) choose and filter
servers, and ``MCP2REPL_SERVER`` restricts the kernel to one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from .spec import ServerSpec, ToolFilter, _Ctx, _got, _parse, _path, _Problem, _selectors

#: Looked up in the working directory, first found wins.
CWD_FILES = ("mcp2repl.json", ".mcp.json", "mcp.json")
#: Looked up in ``$XDG_CONFIG_HOME/mcp2repl``, first found wins (with a warning naming the others).
XDG_FILES = ("config.json", "config.yaml", "config.yml")
_OMITTED = object()


@dataclass
class LoadedConfig:
    source: Path | None  # None: no config anywhere (the kernel falls back to its demo server)
    servers: dict[str, ServerSpec]  # in file order; servers with a problem have ``error`` set
    problems: list[str]  # config-level errors
    warnings: list[str]
    skipped: dict[str, str] = field(default_factory=dict)  # defined but not used: name -> "disabled" or "excluded by ..."
    profile: str = "default"


# -- files -----------------------------------------------------------------------------------------------------


def _read(path: Path, prefix: str) -> tuple[object, str | None]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        return None, f"{prefix}cannot read the file: {getattr(e, 'strerror', None) or e}"
    if not text.strip():
        return None, f'{prefix}the file is empty; expected an object with "mcpServers" or "servers"'
    if path.suffix.lower() in (".yaml", ".yml"):
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
    disabled or excluded by the profile. Without any config, ``source`` is None.
    """
    environ = os.environ if environ is None else environ
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
        if why and name != only:
            result.skipped[name] = why
            continue
        if why:
            result.warnings.append(f'{prefix}server "{name}" is {why}; using it anyway because it was selected by name')
        spec = _parse(name, raw, ctx)
        if spec.error is None and rule not in (_OMITTED, True, False, None):
            spec = _apply_rule(spec, rule, profile, ctx)
        result.servers[name] = spec
    return result


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


def effective_servers(config: LoadedConfig, fallback: ServerSpec | None = None) -> tuple[str, list[ServerSpec]]:
    """Where the servers come from (for the banner) and their specs; ``fallback`` when nothing is configured."""
    if config.source is None and not config.problems and fallback is not None:
        return "built-in demo (no config found)", [fallback]
    return (str(config.source) if config.source else "none"), list(config.servers.values())
