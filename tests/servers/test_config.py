"""The config loader: discovery, every accepted format, substitutions, presets and the exact messages users see.

Every test gets its own project folder, home and XDG folder under tmp_path and passes ``environ`` explicitly,
so nothing from the developer's real ~/.config or environment leaks in.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_kernel.servers.config import LoadedConfig, load_config
from mcp_kernel.servers.filters import ALL_TOOLS, Selector, ToolFilter
from mcp_kernel.servers.spec import ServerSpec, parse_spec


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home").mkdir()
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    (tmp_path / "proj").mkdir()
    return tmp_path / "proj"


def write(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def load(proj: Path, env: dict[str, str], data: object = None, name: str = "mcp.json", **kw: object) -> LoadedConfig:
    if data is not None:
        write(proj / name, data)
    return load_config(cwd=proj, environ=env, **kw)


def tools(spec: ServerSpec, names: str = "add sub mul_2 mul_3 search fetch delete") -> list[str]:
    return [n for n in names.split() if spec.tool_filter.allows(n)]


# -- formats ---------------------------------------------------------------------------------------------------


def test_claude_code_format(proj, env):
    cfg = load(
        proj,
        env,
        {
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "@mcp/fs", "."], "env": {"LOG": "debug", "PORT": 3000, "ON": True}, "cwd": "sub"},
                "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
                "legacy": {"url": "https://example.com/sse"},
                "plain": {"url": "https://example.com/mcp/"},
                "off": {"command": "nope", "disabled": True},
            }
        },
    )
    assert cfg.source == proj / "mcp.json"
    assert cfg.problems == [] and cfg.warnings == []
    assert list(cfg.servers) == ["fs", "web", "legacy", "plain"]
    assert cfg.skipped == {"off": "disabled"}
    assert cfg.servers["fs"] == ServerSpec(
        name="fs",
        transport="stdio",
        command="npx",
        args=["-y", "@mcp/fs", "."],
        env={"LOG": "debug", "PORT": "3000", "ON": "true"},
        cwd=str(proj / "sub"),
    )
    assert cfg.servers["fs"].state == "ok"
    assert cfg.servers["web"] == ServerSpec("web", "http", url="https://example.com/mcp", headers={"Authorization": "Bearer x"})
    assert cfg.servers["legacy"].transport == "sse"
    assert cfg.servers["plain"].transport == "http"


def test_vscode_format(proj, env, tmp_path):
    write(proj / ".env", '# secrets\nexport TOKEN="abc"\nMODE=dev\nOVERRIDDEN=file\n')
    cfg = load(
        proj,
        env | {"GH": "gh-token"},
        {
            "inputs": [{"type": "promptString", "id": "key", "password": True}],
            "servers": {
                "gh": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${env:GH}"}},
                "py": {
                    "type": "stdio",
                    "command": "uvx",
                    "args": ["srv", "--root", "${workspaceFolder}"],
                    "envFile": "${workspaceFolder}/.env",
                    "env": {"KEY": "${input:key}", "OVERRIDDEN": "env"},
                },
            },
        },
    )
    assert cfg.problems == []
    assert cfg.servers["gh"].headers == {"Authorization": "Bearer gh-token"}
    py = cfg.servers["py"]
    assert py.args == ["srv", "--root", str(proj)]
    assert py.env == {"TOKEN": "abc", "MODE": "dev", "OVERRIDDEN": "env", "KEY": ""}
    assert cfg.warnings == [
        'mcp.json: server "py": "env.KEY" uses the VS Code input prompt ${input:key}, which mcp2repl cannot show; '
        "using an empty string (write the value, or ${NAME} to read an environment variable)"
    ]


def test_vscode_workspace_folder_is_the_parent_of_dot_vscode(proj, env):
    write(proj / ".vscode" / "mcp.json", {"servers": {"a": {"command": "x", "args": ["${workspaceFolder}"]}}})
    cfg = load_config(explicit=".vscode/mcp.json", cwd=proj, environ=env)
    assert cfg.servers["a"].args == [str(proj)]


def test_missing_env_file_is_a_server_error(proj, env):
    cfg = load(proj, env, {"servers": {"a": {"command": "x", "envFile": ".env"}, "b": {"command": "y"}}})
    assert cfg.servers["a"].error == f'mcp.json: server "a": "envFile" cannot read {proj / ".env"}: No such file or directory'
    assert cfg.servers["b"].error is None


def test_jsmcp_format_yaml(proj, env, tmp_path):
    write(
        tmp_path / "xdg" / "mcp2repl" / "config.yaml",
        """
servers:
  math:
    type: local
    description: Basic arithmetic
    command: [node, /abs/math.js]
    args: [--port, 8080]
    env: {A: env, B: env}
    environment: {B: environment}
    timeout: 2500
  docs:
    type: remote
    url: https://example.com/mcp
    enabled: false
  events:
    type: sse
    url: https://example.com/events
presets:
  work:
    docs: true
""",
    )
    cfg = load_config(cwd=proj, environ=env)
    assert cfg.source == tmp_path / "xdg" / "mcp2repl" / "config.yaml"
    assert cfg.problems == [] and cfg.warnings == []
    assert cfg.servers["math"] == ServerSpec(
        name="math",
        transport="stdio",
        command="node",
        args=["/abs/math.js", "--port", "8080"],
        env={"A": "env", "B": "environment"},
        timeout=2.5,
        description="Basic arithmetic",
    )
    assert list(cfg.servers) == ["math", "events"]
    assert cfg.servers["events"].transport == "sse"
    assert cfg.skipped == {"docs": "disabled"}
    work = load_config(cwd=proj, environ=env, profile="work")
    assert list(work.servers) == ["math", "docs", "events"]  # a preset rule enables a disabled server
    assert work.servers["docs"] == ServerSpec("docs", "http", url="https://example.com/mcp")
    assert work.profile == "work"


def test_mcpservers_wins_over_servers(proj, env):
    cfg = load(proj, env, {"servers": {"a": {"command": "a"}}, "mcpServers": {"b": {"command": "b"}}})
    assert list(cfg.servers) == ["b"]
    assert cfg.warnings == ['mcp.json: both "mcpServers" and "servers" are present; using "mcpServers"']


# -- command, transport and field types ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "command", "args"),
    [
        ({"command": "npx -y @scope/pkg --flag 'a b'"}, "npx", ["-y", "@scope/pkg", "--flag", "a b"]),
        ({"command": "npx -y", "args": ["pkg"]}, "npx -y", ["pkg"]),  # args given: the command is taken literally
        ({"command": "server"}, "server", []),
        ({"command": ["uvx", "mcp-server-time"], "args": ["--tz", "UTC"]}, "uvx", ["mcp-server-time", "--tz", "UTC"]),
    ],
)
def test_command_forms(entry, command, args):
    spec = parse_spec("s", entry, environ={})
    assert (spec.command, spec.args, spec.error) == (command, args, None)


def test_command_string_naming_an_existing_path_with_spaces_is_not_split(tmp_path):
    exe = write(tmp_path / "My App" / "server", "")
    assert parse_spec("s", {"command": str(exe)}, environ={}).command == str(exe)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": 42}, '"command" must be a string or a non-empty list of strings, got 42'),
        ({"command": []}, '"command" must be a string or a non-empty list of strings, got []'),
        ({"command": ["npx", 3]}, '"command" must be a string or a non-empty list of strings, got ["npx", 3]'),
        ({"command": "  "}, '"command" must be a string or a non-empty list of strings, got "  "'),
        ({"command": "npx 'unclosed"}, '"command" cannot be split into words: No closing quotation'),
        ({"type": "stdio", "url": "https://x"}, '"command" is missing (a stdio server needs a command to run)'),
        ({"type": "http"}, '"url" is missing (an http server needs a URL)'),
        ({"url": "localhost:3000/mcp"}, '"url" must be an http:// or https:// URL, got "localhost:3000/mcp"'),
        ({"type": "grpc", "command": "x"}, '"type" must be one of "stdio", "local", "http", "remote", "sse", got "grpc"'),
        ({"args": ["x"]}, 'needs "command" (to start a local server) or "url" (to connect to a remote one)'),
        ({"command": "x", "args": "--flag"}, '"args" must be a list of strings, got "--flag"'),
        ({"command": "x", "args": ["a", None]}, '"args[1]" must be a string, got null'),
        ({"command": "x", "env": ["A=1"]}, '"env" must be an object mapping names to strings, got ["A=1"]'),
        ({"command": "x", "env": {"A": {"nested": 1}}}, '"env.A" must be a string, got {"nested": 1}'),
        ({"url": "https://x", "headers": {"H": [1]}}, '"headers.H" must be a string, got [1]'),
        ({"command": "x", "cwd": 3}, '"cwd" must be a path, got 3'),
        ({"command": "x", "timeout": "5s"}, '"timeout" must be a positive number of milliseconds, got "5s"'),
        ({"command": "x", "timeout": 0}, '"timeout" must be a positive number of milliseconds, got 0'),
        ({"command": "x", "description": ["a"]}, '"description" must be a string, got ["a"]'),
        ({"command": "x", "disabled": "yes"}, '"disabled" must be true or false, got "yes"'),
        ({"command": "x", "enabled": 0}, '"enabled" must be true or false, got 0'),
        ({"command": "x", "elicitation": "always"}, '"elicitation" must be "ask", "defaults" or "decline", got "always"'),
        ({"command": "x", "roots": "/data"}, '"roots" must be a list of folder paths, or false for none, got "/data"'),
        ({"command": "x", "roots": True}, '"roots" must be a list of folder paths, or false for none, got true'),
        ({"command": "x", "log_level": "verbose"}, '"log_level" must be one of debug, info, notice, warning, error, critical, alert, emergency, got "verbose"'),
        (None, 'must be an object with "command" or "url", got null'),
        (7, 'must be an object with "command" or "url", got 7'),
    ],
)
def test_field_errors(entry, message):
    spec = parse_spec("db", entry, environ={})
    assert spec.error == f'server "db": {message}'
    assert spec.state == "error"


def test_protocol_keys(tmp_path):
    """elicitation, roots (relative to the config's folder) and log_level; their defaults otherwise."""
    spec = parse_spec("db", {"command": "x", "elicitation": "defaults", "roots": ["data", "/srv"], "log_level": "info"}, base_dir=tmp_path)
    assert (spec.error, spec.elicitation, spec.roots, spec.log_level) == (None, "defaults", (str(tmp_path / "data"), "/srv"), "info")
    assert parse_spec("db", {"command": "x", "roots": False}).roots is False
    plain = parse_spec("db", {"command": "x"})
    assert (plain.elicitation, plain.roots, plain.log_level) == ("ask", None, None)


def test_wrong_field_type_breaks_only_that_server(proj, env):
    cfg = load(proj, env, {"mcpServers": {"db": {"command": 42}, "ok": {"command": "srv"}, "web": {"url": "https://x/mcp"}}})
    assert cfg.problems == []
    assert list(cfg.servers) == ["db", "ok", "web"]
    assert cfg.servers["db"].error == 'mcp.json: server "db": "command" must be a string or a non-empty list of strings, got 42'
    assert cfg.servers["db"].transport == "stdio"
    assert cfg.servers["ok"].error is None and cfg.servers["web"].error is None


def test_both_command_and_url_starts_the_command(proj, env):
    cfg = load(proj, env, {"mcpServers": {"a": {"command": "srv", "url": "https://x"}}})
    assert cfg.servers["a"].transport == "stdio"
    assert cfg.warnings == ['mcp.json: server "a": has both "command" and "url"; starting the command (set "type" to choose)']


def test_long_bad_values_are_described_by_kind():
    spec = parse_spec("db", {"command": {"path": "/usr/local/bin/some-very-long-server-name"}}, environ={})
    assert spec.error == 'server "db": "command" must be a string or a non-empty list of strings, got an object'


# -- substitutions ---------------------------------------------------------------------------------------------


def test_env_substitution_forms(proj, env):
    cfg = load(
        proj,
        env | {"TOKEN": "t0k", "EMPTY": "", "HOST": "h"},
        {
            "mcpServers": {
                "a": {
                    "command": "srv",
                    "args": [
                        "{env:TOKEN}",
                        "${TOKEN}",
                        "${NOPE:-fallback}",
                        "${EMPTY:-used-when-empty}",
                        "${HOST:-unused}",
                        "x{env:EMPTY}y",
                    ],
                    "env": {"DEEP": "https://${HOST}/{env:TOKEN}"},
                    "headers": {"nested": ["${TOKEN}"]},
                }
            }
        },
    )
    assert cfg.servers["a"].args == ["t0k", "t0k", "fallback", "used-when-empty", "h", "xy"]
    assert cfg.servers["a"].env == {"DEEP": "https://h/t0k"}
    assert cfg.warnings == []


def test_missing_env_vars_become_empty_with_a_warning(proj, env):
    cfg = load(proj, env, {"mcpServers": {"a": {"command": "srv", "args": ["{env:NOPE}"], "env": {"K": "x${ALSO_NOPE}y"}}}})
    assert cfg.servers["a"].args == [""]
    assert cfg.servers["a"].env == {"K": "xy"}
    assert cfg.warnings == [
        'mcp.json: server "a": "args[0]" uses environment variable NOPE, which is not set; using an empty string',
        'mcp.json: server "a": "env.K" uses environment variable ALSO_NOPE, which is not set; using an empty string',
    ]


def test_substitution_reads_os_environ_by_default(proj, env, monkeypatch):
    monkeypatch.setenv("MCP2REPL_TEST_TOKEN", "from-os")
    write(proj / "mcp.json", {"mcpServers": {"a": {"command": "srv", "args": ["${MCP2REPL_TEST_TOKEN}"]}}})
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    assert load_config(cwd=proj).servers["a"].args == ["from-os"]


def test_file_substitution(proj, env, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", env["HOME"])  # os.path.expanduser reads the real environment
    write(proj / "secrets" / "token", "relative\n\n")
    write(tmp_path / "home" / "tok", "from-home\r\n")
    absolute = write(tmp_path / "abs.txt", "absolute")
    cfg = load(
        proj,
        env | {"SECRETS": "secrets"},
        {
            "mcpServers": {
                "a": {
                    "url": "https://x/mcp",
                    "headers": {
                        "R": "Bearer {file:secrets/token}",
                        "H": "{file:~/tok}",
                        "A": f"{{file:{absolute}}}",
                        "E": "{file:${SECRETS}/token}",
                    },
                }
            }
        },
    )
    assert cfg.servers["a"].headers == {"R": "Bearer relative\n", "H": "from-home", "A": "absolute", "E": "relative\n"}


def test_missing_file_is_an_error_for_that_server(proj, env):
    cfg = load(proj, env, {"mcpServers": {"a": {"url": "https://x", "headers": {"Auth": "{file:token.txt}"}}, "b": {"command": "srv"}}})
    assert (
        cfg.servers["a"].error
        == f'mcp.json: server "a": "headers.Auth" cannot read {{file:token.txt}}: file not found ({proj / "token.txt"})'
    )
    assert cfg.servers["a"].transport == "http"
    assert cfg.servers["b"].error is None


def test_file_paths_are_relative_to_the_config_folder(proj, env, tmp_path):
    write(tmp_path / "conf" / "key", "k")
    write(tmp_path / "conf" / "c.json", {"mcpServers": {"a": {"command": "srv", "args": ["{file:key}"], "cwd": "work"}}})
    cfg = load_config(explicit=str(tmp_path / "conf" / "c.json"), cwd=proj, environ=env)
    assert cfg.servers["a"].args == ["k"]
    assert cfg.servers["a"].cwd == str(tmp_path / "conf" / "work")


# -- discovery -------------------------------------------------------------------------------------------------


def test_discovery_order(proj, env, tmp_path):
    xdg = tmp_path / "xdg" / "mcp2repl"
    for path in [xdg / "config.json", proj / "mcp.json", proj / ".mcp.json", proj / "mcp2repl.json", tmp_path / "explicit.json"]:
        write(path, {"mcpServers": {path.name: {"command": "x"}}})
    order = []
    for path in [tmp_path / "explicit.json", proj / "mcp2repl.json", proj / ".mcp.json", proj / "mcp.json", xdg / "config.json"]:
        cfg = load_config(explicit=str(tmp_path / "explicit.json") if path.name == "explicit.json" else None, cwd=proj, environ=env)
        order.append(list(cfg.servers))
        assert cfg.source == path
        if path.name != "explicit.json":
            path.unlink()
    assert order == [["explicit.json"], ["mcp2repl.json"], [".mcp.json"], ["mcp.json"], ["config.json"]]
    assert load_config(cwd=proj, environ=env).source is None


def test_explicit_path_is_relative_to_cwd_and_shown_that_way(proj, env):
    write(proj / "conf" / "x.yaml", "mcpServers: {a: {command: [srv]}}")
    cfg = load_config(explicit="conf/x.yaml", cwd=proj, environ=env)
    assert cfg.source == proj / "conf" / "x.yaml"
    assert cfg.servers["a"].command == "srv"


def test_missing_explicit_path_is_an_error(proj, env):
    write(proj / "mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    cfg = load_config(explicit="nope.json", cwd=proj, environ=env)
    assert cfg.source == proj / "nope.json"
    assert cfg.servers == {}
    assert cfg.problems == [f"nope.json: config file not found ({proj / 'nope.json'})"]


def test_explicit_directory_is_an_error(proj, env):
    cfg = load_config(explicit=str(proj), cwd=proj, environ=env)
    assert cfg.problems == [f"{proj}: cannot read the file: Is a directory"]


def test_no_config_anywhere(proj, env):
    cfg = load_config(cwd=proj, environ=env)
    assert cfg == LoadedConfig(source=None, servers={}, problems=[], warnings=[])


def test_xdg_defaults_to_home_dot_config(proj, env, tmp_path):
    write(tmp_path / "home" / ".config" / "mcp2repl" / "config.yml", "servers:\n  a: {command: srv}\n")
    cfg = load_config(cwd=proj, environ={"HOME": env["HOME"]})
    assert cfg.source == tmp_path / "home" / ".config" / "mcp2repl" / "config.yml"
    assert list(cfg.servers) == ["a"]


def test_several_xdg_files_warn(proj, env, tmp_path):
    xdg = tmp_path / "xdg" / "mcp2repl"
    write(xdg / "config.yaml", "servers: {yaml: {command: x}}")
    write(xdg / "config.yml", "servers: {yml: {command: x}}")
    cfg = load_config(cwd=proj, environ=env)
    assert list(cfg.servers) == ["yaml"]
    assert cfg.warnings == [
        f"{xdg / 'config.yaml'}: ignoring config.yml in the same folder (only the first of config.json, config.yaml, config.yml is read)"
    ]
    write(xdg / "config.json", {"servers": {"json": {"command": "x"}}})
    cfg = load_config(cwd=proj, environ=env | {"HOME": str(tmp_path)})  # shown relative to home
    assert list(cfg.servers) == ["json"]
    assert cfg.warnings == [
        "~/xdg/mcp2repl/config.json: ignoring config.yaml, config.yml in the same folder (only the first of config.json, config.yaml, config.yml is read)"
    ]


def test_xdg_relative_value_is_ignored(proj, env, tmp_path):
    write(tmp_path / "home" / ".config" / "mcp2repl" / "config.json", {"servers": {"a": {"command": "x"}}})
    assert load_config(cwd=proj, environ=env | {"XDG_CONFIG_HOME": "relative/dir"}).source is not None


# -- config-level problems -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        (
            "mcp.json",
            '{\n  "mcpServers": {\n    "a": {"command": "x"}\n    "b": {}\n  }\n}',
            "invalid JSON at line 4, column 5: Expecting ',' delimiter",
        ),
        ("mcp.json", '{"mcpServers": }', "invalid JSON at line 1, column 16: Expecting value"),
        ("mcp.json", "   \n", 'the file is empty; expected an object with "mcpServers" or "servers"'),
        ("mcp.json", "[1, 2]", 'the top level must be an object with "mcpServers" or "servers", got [1, 2]'),
        ("mcp.json", '{"mcp": {}, "other": 1}', 'no "mcpServers" or "servers" key (found "mcp", "other")'),
        ("mcp.json", "{}", 'no "mcpServers" or "servers" key (found nothing)'),
        ("mcp.json", '{"servers": ["a"]}', '"servers" must be an object mapping server names to their settings, got ["a"]'),
        ("c.yaml", "servers:\n  a: {command: x\n  b: 1\n", "invalid YAML at line 3, column 4: expected ',' or '}', but got ':'"),
        (
            "c.yml",
            "servers:\n  a:\n    command: x\n   bad: indent\n",
            "invalid YAML at line 4, column 4: expected <block end>, but found '<block mapping start>'",
        ),
        ("c.yaml", "servers: {a: b}: c\n", "invalid YAML at line 1, column 16: mapping values are not allowed here"),
        ("c.yaml", "just a string", 'the top level must be an object with "mcpServers" or "servers", got "just a string"'),
    ],
)
def test_config_level_problems(proj, env, name, content, problem):
    write(proj / name, content)
    cfg = load_config(explicit=name, cwd=proj, environ=env)
    assert cfg.problems == [f"{name}: {problem}"]
    assert cfg.servers == {}
    assert cfg.source == proj / name


def test_json_file_with_yaml_content_is_a_json_error(proj, env):
    cfg = load(proj, env, "mcpServers:\n  a: {command: x}\n")
    assert cfg.problems == ["mcp.json: invalid JSON at line 1, column 1: Expecting value"]


def test_non_utf8_file(proj, env):
    (proj / "mcp.json").write_bytes(b'{"mcpServers": {"\xff": {}}}')
    cfg = load_config(cwd=proj, environ=env)
    assert cfg.problems == ["mcp.json: cannot read the file: 'utf-8' codec can't decode byte 0xff in position 17: invalid start byte"]


def test_empty_servers_and_bom(proj, env):
    (proj / "mcp.json").write_bytes(b'\xef\xbb\xbf{"mcpServers": {}}')
    cfg = load_config(cwd=proj, environ=env)
    assert cfg.problems == []
    assert cfg.warnings == ['mcp.json: "mcpServers" is empty, so no servers are configured']


def test_empty_server_name(proj, env):
    cfg = load(proj, env, {"servers": {"": {"command": "x"}, "ok": {"command": "y"}}})
    assert cfg.servers[""].error == 'mcp.json: server "": the server name must not be empty'
    assert cfg.servers["ok"].error is None


# -- presets, blocked_tools and the only= restriction ----------------------------------------------------------

PRESETS_CONFIG = {
    "servers": {
        "math": {"type": "stdio", "command": "m"},
        "docs": {"type": "http", "url": "https://x/mcp"},
        "off": {"type": "stdio", "command": "o", "enabled": False},
        "guarded": {"command": "g", "blocked_tools": ["delete", {"glob": "mul_*"}]},
    },
    "presets": {
        "default": {"math": ["add", {"glob": "mul_*"}], "docs": [{"regex": "(search|fetch)"}]},
        "work": {"docs": True, "math": False, "off": None, "guarded": {"regex": "^(delete|mul_2|add)$"}},
        "one": {"math": "sub", "docs": "fetch", "guarded": True},
    },
}


def test_default_preset(proj, env):
    cfg = load(proj, env, PRESETS_CONFIG)
    assert cfg.problems == [] and cfg.warnings == []
    assert list(cfg.servers) == ["math", "docs", "guarded"]
    assert cfg.skipped == {"off": "disabled"}
    assert tools(cfg.servers["math"]) == ["add", "mul_2", "mul_3"]
    assert tools(cfg.servers["docs"]) == ["search", "fetch"]
    assert tools(cfg.servers["guarded"]) == ["add", "sub", "search", "fetch"]  # omitted rule: as defined, minus blocked
    assert cfg.servers["math"].tool_filter == ToolFilter(allow=(Selector("name", "add"), Selector("glob", "mul_*")))


def test_named_preset_with_true_false_null_and_regex(proj, env):
    cfg = load(proj, env, PRESETS_CONFIG, profile="work")
    assert list(cfg.servers) == ["docs", "off", "guarded"]
    assert cfg.skipped == {"math": 'excluded by profile "work"'}
    assert cfg.servers["docs"].tool_filter is ALL_TOOLS
    assert cfg.servers["off"].tool_filter.allows_all
    assert tools(cfg.servers["guarded"]) == ["add"]  # blocked_tools wins over the preset's regex


def test_single_tool_rule(proj, env):
    cfg = load(proj, env, PRESETS_CONFIG, profile="one")
    assert tools(cfg.servers["math"]) == ["sub"]
    assert tools(cfg.servers["docs"]) == ["fetch"]
    assert tools(cfg.servers["guarded"]) == ["add", "sub", "search", "fetch"]  # true cannot re-enable blocked tools


def test_no_presets_means_all_enabled_servers_all_tools(proj, env):
    cfg = load(proj, env, {"servers": PRESETS_CONFIG["servers"]})
    assert list(cfg.servers) == ["math", "docs", "guarded"]
    assert cfg.servers["math"].tool_filter is ALL_TOOLS


def test_presets_without_default(proj, env):
    cfg = load(proj, env, {"servers": {"a": {"command": "x"}}, "presets": {"work": {"a": False}}})
    assert list(cfg.servers) == ["a"] and cfg.problems == []


def test_unknown_profile(proj, env):
    cfg = load(proj, env, PRESETS_CONFIG, profile="wrok")
    assert cfg.problems == ['mcp.json: profile "wrok" is not defined; available presets: default, work, one']
    assert cfg.servers == {}
    cfg = load(proj, env, {"servers": {"a": {"command": "x"}}}, profile="work")
    assert cfg.problems == ['mcp.json: profile "work" is not defined; available presets: default']


def test_empty_profile_means_default(proj, env):
    assert list(load(proj, env, PRESETS_CONFIG, profile="").servers) == ["math", "docs", "guarded"]


def test_preset_rule_errors_break_only_that_server(proj, env):
    config = {
        "servers": {"a": {"command": "x"}, "b": {"command": "y"}, "c": {"command": "z"}, "d": {"command": "w"}},
        "presets": {"default": {"a": [{"regex": "("}], "b": ["ok", 3], "c": 1.5, "e": True}},
    }
    cfg = load(proj, env, config)
    assert cfg.problems == []
    assert (
        cfg.servers["a"].error
        == 'mcp.json: server "a": "presets.default.a[0]" is not a valid regex: missing ), unterminated subpattern at position 0'
    )
    assert (
        cfg.servers["b"].error
        == 'mcp.json: server "b": "presets.default.b[1]" must be a tool name or an object with "regex" or "glob", got 3'
    )
    assert (
        cfg.servers["c"].error
        == 'mcp.json: server "c": "presets.default.c" must be true, false, null, a tool name, or a list of tool selectors, got 1.5'
    )
    assert cfg.servers["d"].error is None
    assert cfg.warnings == ['mcp.json: "presets.default" names unknown server "e"; servers: a, b, c, d']


def test_blocked_tools_forms_and_errors():
    assert not parse_spec("s", {"command": "x", "blocked_tools": "rm"}, environ={}).tool_filter.allows("rm")
    spec = parse_spec("s", {"command": "x", "blocked_tools": [{"regex": "^del"}, {"glob": "drop_?"}]}, environ={})
    assert [t for t in ["delete", "undelete", "drop_1", "drop_10"] if spec.tool_filter(t)] == ["undelete", "drop_10"]
    bad = parse_spec("s", {"command": "x", "blocked_tools": [{"regex": "a", "glob": "b"}]}, environ={})
    assert (
        bad.error
        == 'server "s": "blocked_tools[0]" must be a tool name or an object with "regex" or "glob", got {"regex": "a", "glob": "b"}'
    )
    bad = parse_spec("s", {"command": "x", "blocked_tools": [{"regex": "[a"}]}, environ={})
    assert bad.error == 'server "s": "blocked_tools[0]" is not a valid regex: unterminated character set at position 0'


def test_glob_is_anchored_and_regex_is_not():
    f = ToolFilter(allow=(Selector("glob", "get_*"), Selector("regex", "search")))
    assert [t for t in ["get_x", "xget_x", "research", "search_all", "find"] if f.allows(t)] == ["get_x", "research", "search_all"]


def test_bad_presets_block(proj, env):
    cfg = load(proj, env, {"servers": {"a": {"command": "x"}}, "presets": ["default"]})
    assert cfg.problems == ['mcp.json: "presets" must be an object mapping profile names to server rules, got ["default"]']
    assert list(cfg.servers) == ["a"]
    cfg = load(proj, env, {"servers": {"a": {"command": "x"}}, "presets": {"work": "a"}}, profile="work")
    assert cfg.problems == ['mcp.json: "presets.work" must be an object mapping server names to rules, got "a"']
    assert cfg.servers == {}


def test_only_restricts_to_one_server(proj, env):
    cfg = load(proj, env, PRESETS_CONFIG, only="docs")
    assert list(cfg.servers) == ["docs"]
    assert tools(cfg.servers["docs"]) == ["search", "fetch"]  # the profile's tool rules still apply


def test_only_overrides_disabled_and_profile_exclusion(proj, env):
    cfg = load(proj, env, PRESETS_CONFIG, only="off")
    assert list(cfg.servers) == ["off"]
    assert cfg.warnings == ['mcp.json: server "off" is disabled; using it anyway because it was selected by name']
    cfg = load(proj, env, PRESETS_CONFIG, only="math", profile="work")
    assert list(cfg.servers) == ["math"]
    assert cfg.warnings == ['mcp.json: server "math" is excluded by profile "work"; using it anyway because it was selected by name']


def test_unknown_only(proj, env):
    cfg = load(proj, env, PRESETS_CONFIG, only="nope")
    assert cfg.problems == ['mcp.json: there is no server named "nope"; servers: math, docs, off, guarded']
    assert cfg.servers == {}


def test_disabled_servers_are_not_parsed(proj, env):
    cfg = load(proj, env, {"mcpServers": {"a": {"command": 1, "args": ["${UNSET}"], "disabled": True}}})
    assert cfg.servers == {} and cfg.warnings == [] and cfg.skipped == {"a": "disabled"}


# -- parse_spec (api.connect) ----------------------------------------------------------------------------------


def test_parse_spec_shorthands_and_warnings(tmp_path):
    assert parse_spec("t", "uvx mcp-server-time --local-timezone UTC", environ={}) == ServerSpec(
        "t", "stdio", command="uvx", args=["mcp-server-time", "--local-timezone", "UTC"]
    )
    assert parse_spec("t", ["python", "-m", "srv"], environ={}).args == ["-m", "srv"]
    assert parse_spec("w", "https://example.com/sse", environ={}) == ServerSpec("w", "sse", url="https://example.com/sse")
    warnings: list[str] = []
    spec = parse_spec("s", {"command": "x", "cwd": "sub", "env": {"A": "${B}"}}, base_dir=tmp_path, environ={}, warnings=warnings)
    assert spec.cwd == str(tmp_path / "sub")
    assert warnings == ['server "s": "env.A" uses environment variable B, which is not set; using an empty string']


def test_parse_spec_is_frozen():
    spec = parse_spec("s", {"command": "x"}, environ={})
    with pytest.raises(AttributeError):
        spec.error = "nope"  # type: ignore[misc]


def test_config_regexes_run_with_a_time_bound_and_fail_closed() -> None:
    import time

    from mcp_kernel.servers import filters as spec

    deny = ToolFilter(deny=(Selector("regex", r"^((\w+)+)+!"),))
    allow = ToolFilter(allow=(Selector("regex", r"^(\w|\w\w)+x$"),))
    started = time.monotonic()
    assert deny.allows("a" * 60) is True or spec._SLOW_PATTERNS  # no match, or gave up (then blocked)
    for _ in range(200):
        deny.allows("b" * 60)
        allow.allows("c" * 60)
    assert time.monotonic() - started < 10
    if r"^((\w+)+)+!" in spec._SLOW_PATTERNS:
        assert deny.allows("anything") is False  # a deny pattern that ran out of time blocks
    if r"^(\w|\w\w)+x$" in spec._SLOW_PATTERNS:
        assert allow.allows("anything") is False  # an allow pattern that ran out of time admits nothing


def test_file_substitutions_read_only_small_regular_files(tmp_path: Path, env: dict[str, str]) -> None:
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    big = tmp_path / "big.txt"
    big.write_text("x" * (2 << 20))
    cfg = write(tmp_path / "mcp.json", {"mcpServers": {"a": {"command": "x", "env": {"T": "{file:pipe}"}}, "b": {"command": "x", "env": {"T": "{file:big.txt}"}}}})
    loaded = load_config(explicit=str(cfg), cwd=tmp_path, environ=env)
    assert loaded.servers["a"].error == f'mcp.json: server "a": "env.T" cannot read {{file:pipe}}: {fifo} is a FIFO (named pipe), not a regular file'
    assert loaded.servers["b"].error == f'mcp.json: server "b": "env.T" cannot read {{file:big.txt}}: {big} is larger than 1024 KB'


def test_one_malformed_entry_fails_alone(tmp_path: Path, env: dict[str, str]) -> None:
    cfg = write(tmp_path / "mcp.json", {"mcpServers": {"bad": {"url": "https://[::1/mcp"}, "good": {"command": "srv"}}})
    loaded = load_config(explicit=str(cfg), cwd=tmp_path, environ=env)
    assert loaded.servers["bad"].error == 'mcp.json: server "bad": "url" is not a valid URL: Invalid IPv6 URL'
    assert loaded.servers["good"].error is None and loaded.problems == []
    deep = tmp_path / "deep.yaml"
    deep.write_text("servers:\n  a: " + "[" * 5000 + "]" * 5000 + "\n")
    loaded = load_config(explicit=str(deep), cwd=tmp_path, environ=env)
    assert loaded.problems == ["deep.yaml: the file is nested too deeply to read"] or loaded.servers["a"].error
