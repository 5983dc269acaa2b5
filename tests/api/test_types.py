"""The .d.ts of api.types() in-process: awkward catalogs still give declarations tsc accepts, and
the api object is declared from its JSDoc (jsdoc.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import mcp_types
import pytest
from ts_reference import TSC, require_node_package

from mcp_kernel.api.jsdoc import declarations
from mcp_kernel.api.types import render
from mcp_kernel.servers.catalog import Catalog
from mcp_kernel.servers.shapes import ObservedShapes

TSC_FLAGS = ["--noEmit", "--strict", "--target", "esnext", "--lib", "esnext,dom", "--module", "esnext", "--moduleDetection", "force"]

TREE = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/Node"}, "default": {"$ref": "#/$defs/default"}},
    "required": ["root"],
    "$defs": {
        "Node": {"type": "object", "properties": {"Node": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}},
        "default": {"type": "object", "properties": {"again": {"$ref": "#/$defs/default"}}},
    },
}
GRAPH = {  # another tool's recursive "Node", a different type
    "type": "object",
    "properties": {"start": {"$ref": "#/$defs/Node"}},
    "$defs": {"Node": {"type": "object", "properties": {"edges": {"type": "array", "items": {"$ref": "#/$defs/Node"}}, "w": {"type": "number"}}}},
}
ODD_KEYS = {
    "type": "object",
    "properties": {"content-type": {"type": "string"}, "2x": {"enum": [1, "two", None, {"a": [1]}]}, "when": {"type": "string", "format": "date-time"}},
    "required": ["content-type"],
}


def tool(name: str, schema: dict | None = None, output: dict | None = None) -> mcp_types.Tool:
    return mcp_types.Tool(name=name, description=f"The {name} tool. */ not a comment end", input_schema=schema or {"type": "object"}, output_schema=output)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    cat = Catalog()
    cat.rebuild(
        [
            ("my-server", [tool("tree", TREE), tool("graph", GRAPH), tool("delete"), tool("odd.keys", ODD_KEYS), tool("resources"), tool("read")]),
            ("other", [tool("read", output={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}), tool("3d")]),
        ]
    )
    return cat


@pytest.fixture(scope="module")
def dts(catalog: Catalog) -> str:
    observed = ObservedShapes()
    observed.add(("my-server", "delete"), "json text", {"deleted": 3, "ids": ["a"], "note": None})
    return render(catalog.entries, catalog.server_safe, observed)


def tsc(tmp_path: Path, dts: str, cell: str) -> subprocess.CompletedProcess[str]:
    require_node_package("typescript")
    (tmp_path / "mcp2repl.d.ts").write_text(dts)
    (tmp_path / "cell.ts").write_text(cell)
    return subprocess.run([str(TSC), *TSC_FLAGS, "mcp2repl.d.ts", "cell.ts"], cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_an_awkward_catalog_compiles(tmp_path: Path, dts: str) -> None:
    cell = """
const t = await mcp.my_server.tree({ root: { Node: "n", kids: [{ kids: [] }] }, default: { again: {} } });
const g = await mcp.my_server.graph({ start: { edges: [{ w: 1 }] } });
const d = await tools.delete_();
const n: number = d.deleted;
await mcp.my_server.odd_keys({ "content-type": "x", "2x": { a: [1] } });
const r = await mcp.other.read();
const ok: boolean = r.ok;
await mcp.my_server.read();
await mcp.other._3d(undefined, { raw: true });
await mcp.tools["my-server.odd.keys"]?.({ "content-type": "y" });
const listed = await mcp.my_server.resources.list();
"""
    done = tsc(tmp_path, dts, cell)
    assert done.returncode == 0, done.stdout + done.stderr


def test_types_catch_wrong_calls(tmp_path: Path, dts: str) -> None:
    cell = """
await mcp.my_server.tree({ root: { kids: "no" } });
await tools.read();
const r = await mcp.other.read();
r.missing;
"""
    done = tsc(tmp_path, dts, cell)
    errors = [line for line in done.stdout.splitlines() if "error TS" in line]
    assert [e.split("): ")[0] for e in errors] == ["cell.ts(2,36", "cell.ts(3,13", "cell.ts(5,3"], done.stdout


def test_shapes_of_the_text(dts: str) -> None:
    assert "namespace my_server {" in dts and "namespace other {" in dts
    assert "type Node = " in dts and "type Node_2 = " in dts  # two tools, two different recursive Node types
    assert "type default_ = " in dts  # a type alias cannot be named `default`
    assert "Node_2: string" not in dts and "Node?: string" in dts  # a property named like a type keeps its name
    # a schema without properties takes any object; the result type is the shape observed so far
    assert "function delete_(args?: { [key: string]: unknown }, options?: mcp2repl.CallOptions): Promise<{ deleted: number; ids: string[]; note: null }>;" in dts
    assert "export import read" not in dts  # `read` is on two servers: no tools.read
    assert "function resources(" not in dts  # mcp.<server>.resources is the resources helper
    assert "*\\/ not a comment end" in dts


def test_jsdoc_becomes_declarations() -> None:
    source = '''
  /**
   * Say hello.
   * @template [T=any]
   * @param {string} name who
   * @param {{loud?: boolean}} [opts]
   *   more about opts
   * @returns {T} what comes back
   */
  api.hello = async function hello(name, opts = {}) { return 1 };
  /** Undocumented parameters. */
  api.loose = (a, b = 2, ...rest) => ns.call("x", {});
  function shared(v) { return v }
  api.shared = shared;
  api.version = "";
'''
    found = declarations(source)
    assert found["api.hello"].render(indent="") == (
        "/**\n * Say hello.\n * @param name who\n * @param opts more about opts\n * @returns what comes back\n */\n"
        "function hello<T = any>(name: string, opts?: {loud?: boolean}): Promise<T>;"
    )
    assert found["api.loose"].render(indent="").splitlines()[-1] == "function loose(a?: any, b?: any, ...rest: any[]): Promise<any>;"
    assert found["api.shared"].render(indent="") == "function shared(v?: any): any;"
    assert found["api.version"].render(indent="") == "const version: string;"


def test_no_servers_still_declares_the_runtime(tmp_path: Path) -> None:
    done = tsc(tmp_path, render([], {}, ObservedShapes()), "await sleep(1);\nconst n: number = (await api.calls()).length;\nawait mcp.call('x.y');\n")
    assert done.returncode == 0, done.stdout + done.stderr
