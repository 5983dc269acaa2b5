"""The house rules, read from the code's own imports (ast): which part may import which, where the
big dependencies may be imported, that every imported package is declared, and module sizes.

Parts: engine (V8, rewrite, bridge) knows no MCP, API or display; servers (config, connections,
catalog, discovery) knows no V8; display (bundles, views, artifacts, call traces) sits on the
engine; api (the runtime API) on engine, display and servers; the session wires them; kernel,
cli, serve (the kernel as an MCP server) and demo are faces and a leaf.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mcp_kernel"

#: part -> the parts it may import (besides itself and the package's __init__, which holds the version)
ALLOWED = {
    "compat": set(),
    "engine": {"compat"},
    "servers": {"compat", "lean_imports"},
    "display": {"engine", "compat"},
    "api": {"engine", "display", "servers", "compat"},
    "rundir": {"crashtail"},
    "crashtail": set(),
    "gc_tuning": set(),
    "early": {"engine"},  # V8's load begun in a thread before a one-shot run imports the Session
    "lean_imports": set(),
    "output": {"engine", "servers"},
    "session": {"engine", "display", "servers", "api", "compat", "rundir", "output", "gc_tuning"},
    "kernel": {"session", "compat", "rundir", "client", "record"},  # client: a named session's plans approved out of band
    "record": {"client"},  # client.trust: the record is written as the session's other private files are
    "client": {"rundir"},
    "cli": {"session", "compat", "rundir", "client", "serve", "record", "early", "lean_imports"},
    "serve": {"session", "client", "output", "rundir", "compat", "lean_imports"},
    "demo": set(),
    "__main__": {"cli", "kernel"},
}
#: third-party packages that belong to one part only (the rest of the house never sees them)
CONFINED = {
    "py_mini_racer": {"engine", "compat"},
    "tree_sitter": {"engine"},
    "tree_sitter_javascript": {"engine"},
    "tree_sitter_typescript": {"engine"},
    "ipykernel": {"kernel", "compat"},
    "traitlets": {"kernel", "compat"},
    "mcp": {"servers", "api", "demo", "compat", "serve"},
    "mcp_types": {"servers", "api", "demo", "compat", "serve"},
    "starlette": {"serve"},
    "uvicorn": {"serve"},
    "httpx2": {"servers"},
    "nbclient": {"cli"},
    "papermill": {"cli"},
}
#: modules allowed to be longer than ~400 lines: data, and the Node-compatible value formatter
LONG = {"demo/data.py", "engine/js/inspect.js"}


def part_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imports(path: Path) -> list[tuple[str, int]]:
    """Absolute names of everything a module imports (relative imports resolved), with line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = path.relative_to(ROOT).with_suffix("").parts[:-1] if path.name != "__init__.py" else path.relative_to(ROOT).parts[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                name = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:  # from . import a, b: each is a module of that package
                    found += [(f"{name}.{alias.name}", node.lineno) for alias in node.names]
                    continue
            else:
                name = node.module or ""
            found.append((name, node.lineno))
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def internal_part(name: str) -> str | None:
    if name == "mcp_kernel" or not name.startswith("mcp_kernel."):
        return None
    part = name.split(".")[1]
    return None if part == "__version__" else part


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_parts_import_only_what_they_may(path: Path) -> None:
    part = part_of(path)
    allowed = ALLOWED.get(part, set()) | {part}
    bad = [f"{name} (line {line})" for name, line in imports(path) if (other := internal_part(name)) and other not in allowed]
    assert not bad, f"{path.relative_to(ROOT)} ({part}) must not import: {', '.join(bad)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_big_dependencies_stay_in_their_part(path: Path) -> None:
    part = part_of(path)
    bad = []
    for name, line in imports(path):
        top = name.split(".")[0]
        if top in CONFINED and part not in CONFINED[top]:
            bad.append(f"{name} (line {line})")
    assert not bad, f"{path.relative_to(ROOT)} ({part}) imports {', '.join(bad)}"


def test_every_imported_package_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    declared = {_normal(re.split(r"[<>=!~\[; ]", d)[0]) for d in project["dependencies"]}
    declared |= {_normal(re.split(r"[<>=!~\[; ]", d)[0]) for extra, ds in extras.items() if extra != "test" for d in ds}
    test_extras = {_normal(re.split(r"[<>=!~\[; ]", d)[0]) for d in extras["test"]}
    owners = metadata.packages_distributions()

    def undeclared(paths: list[Path], allowed: set[str]) -> list[str]:
        missing = set()
        for path in paths:
            for name, _ in imports(path):
                top = name.split(".")[0]
                if not top or top == "mcp_kernel" or top in sys.stdlib_module_names or top in ("conftest", "_cli", "_cells"):
                    continue
                dists = {_normal(d) for d in owners.get(top, [])}
                if dists and not dists & allowed:
                    missing.add(f"{top} ({', '.join(sorted(dists))}) in {path.relative_to(ROOT)}")
        return sorted(missing)

    missing = undeclared(MODULES, declared)
    assert missing == [], "\n".join(missing)
    local = {p.stem for p in (ROOT / "tests" / "fixtures" / "servers").glob("*.py")}
    tests = [p for p in (ROOT / "tests").rglob("*.py") if "node_modules" not in p.parts and p.stem not in local]
    assert [m for m in undeclared(tests, declared | test_extras) if m.split(" ")[0] not in local] == []


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.parametrize(
    "path", sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.js")]), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_modules_are_readable_in_one_sitting(path: Path) -> None:
    rel = path.relative_to(PACKAGE).as_posix()
    if rel in LONG:
        return
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= 420, f"{rel} has {lines} lines; split it along its concepts"


#: used before the MCP SDK is loaded (the banner lists servers while it loads in a thread, stdio servers
#: start before it): no SDK imports
SDK_FREE = (
    "servers/spec.py", "servers/config.py", "servers/authspec.py", "servers/secrets.py", "servers/spawn.py",
    "servers/supervised.py", "servers/supervisor.py", "servers/proctable.py",
)


#: scripts a helper process runs as ``python -S -I``: what they import is each helper's memory
HELPER_SCRIPTS = {
    "servers/supervisor.py": {"_signal", "_socket", "os", "select", "sys", "time", "ctypes", "proctable", "__future__"},
    "servers/proctable.py": {"os", "__future__"},
    "servers/guard.py": {"_signal", "os", "sys", "time", "ctypes", "proctable", "__future__"},
    "crashtail.py": {"os", "sys", "__future__"},
}


@pytest.mark.parametrize("rel", sorted(HELPER_SCRIPTS))
def test_helper_scripts_import_only_what_they_list(rel: str) -> None:
    names = {name.rsplit(".", 1)[-1] if name.startswith("mcp_kernel.") else name.split(".")[0] for name, _line in imports(PACKAGE / rel)}
    assert names - {""} <= HELPER_SCRIPTS[rel], f"{rel} imports {sorted(names - HELPER_SCRIPTS[rel])}"


@pytest.mark.parametrize("rel", SDK_FREE)
def test_config_reading_needs_no_mcp_sdk(rel: str) -> None:
    heavy = {"mcp", "mcp_types", "httpx2"}
    bad = [f"{name} (line {line})" for name, line in imports(PACKAGE / rel) if name.split(".")[0] in heavy]
    assert not bad, f"{rel} imports {', '.join(bad)}"
