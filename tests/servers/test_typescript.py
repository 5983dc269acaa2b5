"""TypeScript docs for MCP tools: golden docs for real and hand-written schemas, plus one test per rule.

Fixtures in tests/fixtures/schemas/: ``everything_tools.json`` and ``filesystem_tools.json`` are the
``tools/list`` output of @modelcontextprotocol/server-everything and server-filesystem (2026.8.31),
``demo_tools.json`` that of mcp_kernel.demo.server (pydantic-generated schemas), ``features.json``
hand-written schemas covering every rule. ``UPDATE_GOLDEN=1`` rewrites golden/*.txt.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_kernel.servers.examples import example_args, example_call
from mcp_kernel.servers.shapes import Shape, observe, shape_of
from mcp_kernel.servers.typescript import schema_to_ts, signature, tool_doc

SCHEMAS = Path(__file__).resolve().parent.parent / "fixtures" / "schemas"
GOLDEN = SCHEMAS / "golden"
FIXTURES = {
    "everything": "everything_tools.json",
    "filesystem": "filesystem_tools.json",
    "demo": "demo_tools.json",
    "features": "features.json",
}
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_$]", "_", name)


def _all_tools() -> list[tuple[str, dict]]:
    return [(server, tool) for server, file in FIXTURES.items() for tool in json.loads((SCHEMAS / file).read_text())]


ALL_TOOLS = _all_tools()
TOOL_PARAMS = [pytest.param(server, tool, id=f"{server}.{tool['name']}") for server, tool in ALL_TOOLS]


def _check_golden(path: Path, actual: str) -> None:
    if UPDATE:
        path.write_text(actual + "\n")
    assert path.exists(), f"missing golden file {path.name}; run with UPDATE_GOLDEN=1"
    assert actual + "\n" == path.read_text()


def ts(schema, **kw) -> str:
    return schema_to_ts(schema, **kw)


def obj(props: dict, required=(), **extra) -> dict:
    return {"type": "object", "properties": props, "required": list(required), **extra}


# --- golden files -------------------------------------------------------------------------------


@pytest.mark.parametrize(("server", "tool"), TOOL_PARAMS)
def test_tool_doc_golden(server, tool):
    _check_golden(GOLDEN / f"{server}.{_safe(tool['name'])}.txt", tool_doc(f"mcp.{server}.{_safe(tool['name'])}", tool))


def test_signatures_golden():
    lines = [signature(f"mcp.{server}.{_safe(tool['name'])}", tool) for server, tool in ALL_TOOLS]
    assert all(len(line) <= 200 for line in lines)
    _check_golden(GOLDEN / "signatures.txt", "\n".join(lines))


def test_golden_files_belong_to_fixture_tools():
    expected = {f"{server}.{_safe(tool['name'])}.txt" for server, tool in ALL_TOOLS} | {"signatures.txt"}
    assert {p.name for p in GOLDEN.glob("*.txt")} == expected


def test_fixture_sizes():
    assert sum(1 for server, _ in ALL_TOOLS if server == "everything") >= 10
    assert sum(1 for server, _ in ALL_TOOLS if server == "filesystem") >= 10


# --- example arguments are valid for every fixture tool ---------------------------------------


@pytest.mark.parametrize(("server", "tool"), TOOL_PARAMS)
def test_example_args_validate(server, tool):
    args = example_args(tool["inputSchema"])
    jsonschema.validate(args, tool["inputSchema"])
    assert example_call(f"mcp.{server}.x", tool).startswith("await mcp.")


@pytest.mark.parametrize(("server", "tool"), TOOL_PARAMS)
def test_example_values_for_every_property_validate(server, tool):
    """Not only the required fields: the example of each declared property is valid for it."""
    schema = tool["inputSchema"]
    for name, prop in schema.get("properties", {}).items():
        if prop is False:  # a field that must be absent cannot be required
            continue
        required_only = {**schema, "required": [name]}
        jsonschema.validate(example_args(required_only), required_only)


# --- types, rule by rule ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "string"),
        ({"type": "number"}, "number"),
        ({"type": "integer"}, "number"),
        ({"type": "boolean"}, "boolean"),
        ({"type": "null"}, "null"),
        ({"type": ["string", "null"]}, "string | null"),
        ({"type": ["integer", "number"]}, "number"),
        ({"type": "string", "nullable": True}, "string | null"),
        ({"enum": ["a", "b"]}, '"a" | "b"'),
        ({"type": "string", "enum": ["a", "b"], "nullable": True}, '"a" | "b" | null'),
        ({"enum": [1, 2.5, True, None, "x y"]}, '1 | 2.5 | true | null | "x y"'),
        ({"const": "report"}, '"report"'),
        ({"const": {"a": 1}}, '{"a": 1}'),
        ({"const": 'say "hi"'}, '"say \\"hi\\""'),
        ({}, "unknown"),
        (True, "unknown"),
        (None, "unknown"),
        (False, "never"),
        ({"description": "no type at all"}, "unknown"),
        ({"type": "unheard-of"}, "unknown"),
    ],
)
def test_scalar_types(schema, expected):
    assert ts(schema) == expected


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "array", "items": {"type": "string"}}, "string[]"),
        ({"type": "array", "items": {"enum": ["a", "b"]}}, '("a" | "b")[]'),
        ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, '("a" | "b")[]'),
        ({"type": "array", "items": {"type": ["string", "null"]}}, "(string | null)[]"),
        ({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "number"}]}}, "(string | number)[]"),
        ({"type": "array", "items": {"const": "x"}}, '"x"[]'),
        ({"type": "array", "items": {"type": "array", "items": {"enum": [1, 2]}}}, "(1 | 2)[][]"),
        ({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "number[][]"),
        ({"type": "array"}, "unknown[]"),
        ({"type": "array", "items": {}}, "unknown[]"),
        ({"type": "array", "items": False}, "never[]"),
        ({"items": {"type": "boolean"}}, "boolean[]"),
        ({"type": ["array", "null"], "items": {"type": "string"}}, "string[] | null"),
        ({"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]}, "[number, string]"),
        ({"type": "array", "prefixItems": [{"type": "number"}], "items": False}, "[number]"),
        ({"type": "array", "prefixItems": [{"type": "string"}], "items": {"enum": [1, 2]}}, "[string, ...(1 | 2)[]]"),
        ({"type": "array", "items": [{"type": "string"}, {"type": ["number", "null"]}]}, "[string, number | null]"),
        ({"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "integer"}}, "[string, ...number[]]"),
    ],
)
def test_arrays_and_tuples(schema, expected):
    assert ts(schema) == expected


def test_array_of_intersection_is_parenthesised():
    item = {"allOf": [{"type": "string"}, {"type": "object", "properties": {"a": {"type": "string"}}, "x-extra": 1}]}
    assert ts({"type": "array", "items": item}) == "(string & { a?: string })[]"


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (obj({"a": {"type": "string"}, "b": {"type": "number"}}, ["a"]), "{ a: string; b?: number }"),
        (obj({"content-type": {"type": "string"}, "$x": {"type": "null"}}, ["content-type"]), '{ "content-type": string; $x?: null }'),
        (obj({"p": obj({"x": {"type": "number"}}, ["x"])}, ["p"]), "{ p: { x: number } }"),
        ({"properties": {"a": {"type": "boolean"}}}, "{ a?: boolean }"),
        (obj({}), "{}"),
        ({"type": "object"}, "{ [key: string]: unknown }"),
        ({"type": "object", "additionalProperties": True}, "{ [key: string]: unknown }"),
        ({"type": "object", "additionalProperties": False}, "{}"),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "{ [key: string]: string }"),
        ({"type": "object", "additionalProperties": {"enum": ["x", "y"]}}, '{ [key: string]: "x" | "y" }'),
        (
            obj({"total": {"type": "integer"}}, ["total"], additionalProperties={"type": "integer"}),
            "{ total: number; [key: string]: number }",
        ),
        (obj({"a": {"type": "string"}}, additionalProperties=True), "{ a?: string }"),
        ({"type": "object", "patternProperties": {"^x-": {"type": "string"}}}, "{ [key: string]: string }"),
        (
            {"type": "object", "patternProperties": {"^s": {"type": "string"}, "^n": {"type": "number"}}},
            "{ [key: string]: string | number }",
        ),
    ],
)
def test_objects_and_index_signatures(schema, expected):
    assert ts(schema) == expected


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "string | number"),
        ({"oneOf": [{"const": "a"}, {"const": "b"}, {"type": "null"}]}, '"a" | "b" | null'),
        ({"anyOf": [{"type": "string"}, {"type": "string"}]}, "string"),
        ({"anyOf": [{"type": "string"}, {}]}, "string"),  # a branch that says nothing about the type
        ({"anyOf": [{"type": "string"}, {"type": "null"}], "nullable": True}, "string | null"),
        (
            {"oneOf": [obj({"kind": {"const": "a"}}, ["kind"]), obj({"kind": {"const": "b"}, "n": {"type": "number"}}, ["kind", "n"])]},
            '{ kind: "a" } | { kind: "b"; n: number }',
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
            "{ a?: string }",
        ),
        ({"allOf": [obj({"a": {"type": "string"}}, ["a"]), obj({"b": {"type": "number"}})]}, "{ a: string; b?: number }"),
        (
            {"type": "object", "properties": {"c": {"type": "null"}}, "allOf": [obj({"a": {"type": "string"}}, ["a"])]},
            "{ c?: null; a: string }",
        ),
        ({"allOf": [{"type": "string"}, {"minLength": 3}]}, "string"),
        ({"allOf": [{"type": "string"}, {"enum": ["a", "b"]}]}, 'string & ("a" | "b")'),
        (
            {
                "allOf": [
                    obj({"name": {"type": "string"}}, ["name"]),
                    {"anyOf": [obj({"a": {"type": "string"}}), obj({"b": {"type": "number"}})]},
                ]
            },
            "{ name: string } & ({ a?: string } | { b?: number })",
        ),
        (
            {"allOf": [obj({"a": {"type": "string"}}), {"type": "object", "properties": {"b": {"type": "null"}}, "minProperties": 1}]},
            "{ a?: string } & { b?: null }",
        ),
    ],
)
def test_unions_and_intersections(schema, expected):
    assert ts(schema) == expected


def test_refs_resolve_against_defs_and_definitions():
    schema = {
        "type": "object",
        "$defs": {"Colour": {"enum": ["red", "blue"]}, "Point": obj({"x": {"type": "number"}}, ["x"])},
        "definitions": {"Tag": {"type": "string"}},
        "properties": {
            "colours": {"type": "array", "items": {"$ref": "#/$defs/Colour"}},
            "at": {"$ref": "#/$defs/Point"},
            "tag": {"$ref": "#/definitions/Tag"},
            "missing": {"$ref": "#/$defs/Nope"},
            "remote": {"$ref": "https://example.com/schema.json"},
        },
        "required": ["colours"],
    }
    assert ts(schema) == '{ colours: ("red" | "blue")[]; at?: { x: number }; tag?: string; missing?: unknown; remote?: unknown }'


def test_ref_resolves_against_given_root():
    root = {"$defs": {"Id": {"type": "integer"}}}
    assert ts({"$ref": "#/$defs/Id"}, root=root) == "number"
    assert ts({"type": "array", "items": {"$ref": "#/$defs/Id"}}, root=root) == "number[]"


def test_ref_with_escaped_pointer():
    root = {"$defs": {"a/b": {"type": "string"}, "c d": {"type": "number"}}}
    assert ts({"$ref": "#/$defs/a~1b"}, root=root) == "string"
    assert ts({"$ref": "#/$defs/c%20d"}, root=root) == "number"


RECURSIVE = {
    "type": "object",
    "$defs": {"Node": obj({"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}, ["name"])},
    "properties": {"root": {"$ref": "#/$defs/Node"}},
    "required": ["root"],
}
SELF = obj({"heading": {"type": "string"}, "sections": {"type": "array", "items": {"$ref": "#"}}}, ["heading"], title="Outline")
MUTUAL = {
    "type": "object",
    "definitions": {
        "Person": obj({"employer": {"$ref": "#/definitions/Company"}}),
        "Company": obj({"staff": {"type": "array", "items": {"$ref": "#/definitions/Person"}}}),
    },
    "properties": {"who": {"$ref": "#/definitions/Person"}},
}
ALIAS_LOOP = {
    "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
    "type": "object",
    "properties": {"x": {"$ref": "#/$defs/A"}},
}
REQUIRED_LOOP = obj({"next": {"$ref": "#"}}, ["next"])


def test_recursive_refs_use_the_definition_name():
    assert ts(RECURSIVE) == "{ root: Node }"
    assert ts(SELF) == "{ heading: string; sections?: Outline[] }"
    assert ts(MUTUAL) == "{ who?: Person }"
    assert ts(ALIAS_LOOP) == "{ x?: A }"
    assert ts(REQUIRED_LOOP) == "{ next: Root }"


def test_recursive_definitions_are_declared_in_the_doc():
    doc = tool_doc("mcp.s.tree", {"name": "tree", "inputSchema": RECURSIVE})
    assert doc.splitlines()[0] == "type Node = { name: string; children?: Node[] };"
    doc = tool_doc("mcp.s.org", {"name": "org", "inputSchema": MUTUAL})
    assert doc.splitlines()[:2] == ["type Person = { employer?: Company };", "type Company = { staff?: Person[] };"]


@pytest.mark.parametrize("schema", [RECURSIVE, SELF, MUTUAL, ALIAS_LOOP, REQUIRED_LOOP])
def test_recursion_safety_everywhere(schema):
    tool = {"name": "t", "inputSchema": schema, "outputSchema": schema}
    assert tool_doc("mcp.s.t", tool)
    assert len(signature("mcp.s.t", tool)) <= 200
    args = example_args(schema)
    if schema is not REQUIRED_LOOP:  # an infinitely nested required field cannot have a valid example
        jsonschema.validate(args, schema)


# --- the multi-line form used in docs ---------------------------------------------------------


def test_multiline_format_and_default_comments():
    schema = obj(
        {
            "when": {"type": "string", "format": "date-time"},
            "limit": {"type": "integer", "default": 10},
            "site": {"type": ["string", "null"], "format": "uri", "default": None},
        },
        ["when"],
    )
    assert ts(schema) == "{ when: string; limit?: number; site?: string | null }"
    assert ts(schema, indent=0) == (
        "{\n  when: string /* date-time */;\n  limit?: number; // default 10\n  site?: string /* uri */ | null; // default null\n}"
    )


def test_multiline_keeps_short_objects_inline_and_indents_nested_ones():
    short = obj({"x": {"type": "number"}, "y": {"type": "number"}}, ["x", "y"])
    assert ts(short, indent=0) == "{ x: number; y: number }"
    nested = obj({"inner": obj({"depth": {"type": "integer", "default": 1}}), "pt": short}, ["inner"])
    assert ts(nested, indent=1) == ("{\n    inner: {\n      depth?: number; // default 1\n    };\n    pt?: { x: number; y: number };\n  }")


def test_tool_doc_matches_the_documented_layout():
    tool = {
        "name": "search_books",
        "description": "Search the catalog by title, author or genre.",
        "inputSchema": obj(
            {
                "query": {"type": "string", "description": "Words to look for."},
                "genre": {"type": ["string", "null"], "enum": ["fantasy", "history", None]},
                "limit": {"type": "integer", "description": "How many results (1-40).", "default": 10},
            },
            ["query"],
        ),
        "outputSchema": obj(
            {
                "query": {"type": "string"},
                "total_matches": {"type": "integer"},
                "results": {"type": "array", "items": obj({"id": {"type": "string"}, "title": {"type": "string"}}, ["id", "title"])},
            },
            ["query", "total_matches", "results"],
        ),
        "annotations": {"readOnlyHint": True, "idempotentHint": True},
    }
    assert tool_doc("mcp.demo.search_books", tool) == (
        "/**\n"
        " * Search the catalog by title, author or genre.\n"
        " * @param args.query - Words to look for.\n"
        " * @param args.limit - How many results (1-40). Default: 10.\n"
        " * Annotations: read-only, idempotent.\n"
        " */\n"
        "async function search_books(args: {\n"
        "  query: string;\n"
        '  genre?: "fantasy" | "history" | null;\n'
        "  limit?: number; // default 10\n"
        "}): Promise<{ query: string; total_matches: number; results: { id: string; title: string }[] }>\n"
        '// Example: await mcp.demo.search_books({ query: "example" })'
    )


def test_jsdoc_params_for_nested_fields_and_constraints():
    schema = obj(
        {
            "filter": obj(
                {
                    "author": obj({"name": {"type": "string", "description": "Full name", "minLength": 2}}, ["name"]),
                    "tags": {"type": "array", "items": {"type": "string", "description": "One tag."}, "minItems": 1, "maxItems": 3},
                },
                description="What to match.",
            ),
            "limit": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 50}, {"type": "null"}], "default": None},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
            "code": {"type": "string", "pattern": "^[A-Z]+$", "maxLength": 8},
        },
    )
    doc = tool_doc("mcp.s.find", {"name": "find", "inputSchema": schema})
    assert [line for line in doc.splitlines() if "@param" in line] == [
        " * @param args.filter - What to match.",
        " * @param args.filter.author.name - Full name. Min length: 2.",
        " * @param args.filter.tags - Items: 1 to 3.",
        " * @param args.filter.tags[] - One tag.",
        " * @param args.limit - Default: null. Range: 1 to 50.",
        " * @param args.ratio - Greater than: 0. Multiple of: 0.5.",
        " * @param args.code - Max length: 8. Pattern: /^[A-Z]+$/.",
    ]


def test_long_descriptions_wrap_and_cannot_close_the_comment():
    tool = {
        "name": "t",
        "description": "word " * 40 + "end */ here",
        "inputSchema": obj({"q": {"type": "string", "description": "x */ y " * 30}}),
    }
    doc = tool_doc("mcp.s.t", tool)
    comment = doc[: doc.index(" */\nasync")]
    assert "*/" not in comment and "*\\/" in comment
    assert max(len(line) for line in doc.splitlines() if line.startswith(" *")) <= 100
    assert " *   " in doc  # @param continuation lines are indented


def test_description_is_dedented_like_a_docstring():
    tool = {"name": "t", "description": "First line.\n\n    Second paragraph\n    continues.\n    ", "inputSchema": obj({})}
    assert tool_doc("mcp.s.t", tool).splitlines()[:5] == ["/**", " * First line.", " *", " * Second paragraph", " * continues."]


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (
            {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
            "read-only, idempotent, closed-world",
        ),
        (
            {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True},
            "destructive, non-idempotent, open-world",
        ),
        ({"readOnlyHint": False, "destructiveHint": False}, "non-destructive"),
        ({"openWorldHint": True, "title": "ignored"}, "open-world"),
    ],
)
def test_annotations_line(annotations, expected):
    doc = tool_doc("mcp.s.t", {"name": "t", "inputSchema": obj({}), "annotations": annotations})
    assert f" * Annotations: {expected}." in doc.splitlines()


def test_no_docs_means_no_jsdoc_block():
    assert tool_doc("mcp.s.t", {"name": "t", "inputSchema": {"type": "object", "properties": {}}}) == (
        "async function t(): Promise<unknown>\n// Example: await mcp.s.t()"
    )


def test_return_type_sources():
    tool = {"name": "t", "inputSchema": obj({})}
    assert tool_doc("mcp.s.t", tool).splitlines()[0] == "async function t(): Promise<unknown>"
    observed = tool_doc("mcp.s.t", tool, observed="{ id: string }").splitlines()
    assert observed == [
        "/**",
        " * @returns The shape seen in earlier results (the server declares no output schema).",
        " */",
        "async function t(): Promise<{ id: string }>",
        "// Example: await mcp.s.t()",
    ]
    with_schema = {**tool, "outputSchema": obj({"n": {"type": "integer", "description": "How many."}}, ["n"])}
    assert tool_doc("mcp.s.t", with_schema, observed="{ id: string }").splitlines()[:4] == [
        "async function t(): Promise<{",
        "  n: number; // How many.",
        "}>",
        "// Example: await mcp.s.t()",
    ]
    assert signature("mcp.s.t", tool, observed="string[]") == "t(): Promise<string[]>"


# --- signatures --------------------------------------------------------------------------------


def test_signature_forms():
    no_params = {"name": "ping", "inputSchema": {"type": "object", "properties": {}}}
    assert signature("mcp.s.ping", no_params) == "ping(): Promise<unknown>"
    optional = {"name": "opt", "inputSchema": obj({"n": {"type": "integer"}})}
    assert signature("mcp.s.opt", optional) == "opt(args?: { n?: number }): Promise<unknown>"
    odd = {
        "name": "get-thing",
        "inputSchema": obj({"x": {"type": "string"}}, ["x"]),
        "outputSchema": obj({"ok": {"type": "boolean"}}, ["ok"]),
    }
    assert signature("mcp.s.get_thing", odd) == "get_thing(args: { x: string }): Promise<{ ok: boolean }>"


def test_signature_names_long_output_by_title_and_shortens_long_inputs():
    genre = {"anyOf": [{"enum": [f"genre{i}" for i in range(12)], "type": "string"}, {"type": "null"}]}
    output = obj({f"field{i}": {"type": "string"} for i in range(8)}, title="SearchResults")
    tool = {
        "name": "search",
        "inputSchema": obj({"query": {"type": "string"}, "genre": genre, "limit": {"type": "integer"}}, ["query"]),
        "outputSchema": output,
    }
    assert signature("mcp.s.search", tool) == (
        'search(args: { query: string; genre?: "genre0" | "genre1" | "genre2" | … | null; limit?: number }): Promise<SearchResults>'
    )
    many = {"name": "many", "inputSchema": obj({f"parameter_number_{i}": {"type": "string"} for i in range(20)})}
    line = signature("mcp.s.many", many)
    assert len(line) <= 200
    assert line.endswith("; … }): Promise<unknown>") and "parameter_number_0?: string" in line


def test_signature_stays_short_even_for_huge_names():
    many = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(30)}}
    for length in (120, 190):
        name = "x" * length
        assert len(signature(f"mcp.s.{name}", {"name": name, "inputSchema": many})) <= 200


def test_top_level_ref_input_schema():
    schema = {"$ref": "#/$defs/Args", "$defs": {"Args": obj({"q": {"type": "string"}}, ["q"])}}
    assert signature("mcp.s.a", {"name": "a", "inputSchema": schema}) == "a(args: { q: string }): Promise<unknown>"
    assert example_args(schema) == {"q": "example"}


def test_signature_collapses_deep_objects_first():
    deep = obj({f"k{i}": obj({f"inner{j}": {"type": "string"} for j in range(6)}) for i in range(4)})
    line = signature("mcp.s.deep", {"name": "deep", "inputSchema": deep})
    assert line == "deep(args?: { k0?: { … }; k1?: { … }; k2?: { … }; k3?: { … } }): Promise<unknown>"


# --- example calls -----------------------------------------------------------------------------


def test_example_call_is_a_js_object_literal():
    tool = {
        "name": "t",
        "inputSchema": obj(
            {
                "query": {"type": "string", "const": 'say "hi"'},
                "content-type": {"const": "text/plain"},
                "n": {"type": "integer", "minimum": 3},
                "opts": obj({"deep": {"type": "boolean"}}, ["deep"]),
                "list": {"type": "array", "items": {"enum": [1, 2]}, "minItems": 2},
                "none": {"type": "null"},
            },
            ["query", "content-type", "n", "opts", "list", "none"],
        ),
    }
    assert example_call("mcp.demo.t", tool) == (
        'await mcp.demo.t({ query: "say \\"hi\\"", "content-type": "text/plain", n: 3, opts: { deep: true }, list: [1, 2], none: null })'
    )
    assert example_call("mcp.demo.t", {"name": "t", "inputSchema": obj({"a": {"type": "string"}})}) == "await mcp.demo.t()"


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "example"),
        ({"type": "string", "format": "date"}, "2024-01-01"),
        ({"type": "string", "format": "date-time"}, "2024-01-01T00:00:00Z"),
        ({"type": "string", "format": "uri"}, "https://example.com"),
        ({"type": "string", "format": "email"}, "user@example.com"),
        ({"type": "string", "enum": ["b", "a"]}, "b"),
        ({"const": 7}, 7),
        ({"type": "integer", "default": 5, "minimum": 1}, 5),
        ({"type": "string", "examples": ["hello"]}, "hello"),
        ({"type": "string", "minLength": 10}, "examplexxx"),
        ({"type": "string", "maxLength": 3}, "exa"),
        ({"type": "string", "pattern": "^[A-Z]{2}-\\d{4}$"}, "AA-0000"),
        ({"type": "string", "pattern": "^(foo|bar)+\\.txt$"}, "foo.txt"),
        ({"type": "string", "pattern": "^[^a-z]+$"}, "1"),
        ({"type": "string", "pattern": "^[^a-z0-9]+$"}, "A"),
        ({"type": "string", "pattern": "^\\w+@\\w+\\.(com|org)$"}, "a@a.com"),
        ({"type": "integer"}, 1),
        ({"type": "integer", "minimum": 10, "maximum": 20}, 10),
        ({"type": "integer", "exclusiveMinimum": 10}, 11),
        ({"type": "integer", "maximum": -5}, -5),
        ({"type": "integer", "minimum": 1000, "multipleOf": 250}, 1000),
        ({"type": "integer", "minimum": 1001, "multipleOf": 250}, 1250),
        ({"type": "number", "minimum": 0.3, "multipleOf": 0.25}, 0.5),
        ({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5}, 0.25),
        ({"type": "boolean"}, True),
        ({"type": ["null", "string"]}, "example"),
        ({"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 4}]}, 4),
        ({"type": "array", "items": {"type": "string"}}, ["example"]),
        ({"type": "array", "items": {"type": "string"}, "minItems": 3, "uniqueItems": True}, ["example", "example2", "example3"]),
        ({"type": "array", "items": {"enum": ["x", "y", "z"]}, "minItems": 2, "uniqueItems": True}, ["x", "y"]),
        ({"type": "array", "items": {"type": "string"}, "maxItems": 0}, []),
        ({"type": "array", "prefixItems": [{"type": "integer"}, {"const": "a"}]}, [1, "a"]),
        ({"allOf": [{"type": "string"}, {"minLength": 9}]}, "examplexx"),
    ],
)
def test_example_values(schema, expected):
    wrapper = obj({"v": schema}, ["v"])
    args = example_args(wrapper)
    jsonschema.validate(args, wrapper)
    assert args == {"v": expected}


def test_example_args_omits_optional_fields_and_honours_min_properties():
    assert example_args(obj({"a": {"type": "string"}, "b": {"type": "string"}}, ["b"])) == {"b": "example"}
    assert example_args(obj({"a": {"type": "string"}, "b": {"type": "string"}}, minProperties=1)) == {"a": "example"}
    assert example_args({"type": "object", "required": ["x-key"], "patternProperties": {"^x-": {"type": "integer"}}}) == {"x-key": 1}


def test_example_args_follows_refs_and_picks_the_first_non_null_branch():
    schema = {
        "type": "object",
        "$defs": {"Mode": {"enum": ["on", "off"]}, "Box": obj({"w": {"type": "number", "minimum": 2}}, ["w"])},
        "properties": {
            "mode": {"$ref": "#/$defs/Mode"},
            "box": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Box"}]},
            "url": {"type": "string"},
        },
        "required": ["mode", "box", "url"],
    }
    args = example_args(schema)
    jsonschema.validate(args, schema)
    assert args == {"mode": "on", "box": {"w": 2}, "url": "https://example.com"}


# --- observed shapes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("x", "string"),
        (1, "number"),
        (1.5, "number"),
        (True, "boolean"),
        (None, "null"),
        ([], "unknown[]"),
        ({}, "{}"),
        (["a", "b"], "string[]"),
        (["a", 1, None], "(string | number | null)[]"),
        ([[1], []], "number[][]"),
        ({"id": "b1", "tags": ["x"], "score": None}, "{ id: string; tags: string[]; score: null }"),
        ({"content-type": "x", "n": {"deep": [True]}}, '{ "content-type": string; n: { deep: boolean[] } }'),
        ([{"a": 1}, {"a": None, "b": "x"}], "{ a: number | null; b?: string }[]"),
        ([{"a": 1}, "x", [2]], "({ a: number } | number[] | string)[]"),
    ],
)
def test_shape_of(value, expected):
    assert shape_of(value) == expected


def test_shape_merge_across_results():
    first = observe({"id": "b1", "score": 1.5, "tags": [], "author": {"name": "A"}})
    second = observe({"id": "b2", "score": None, "tags": ["x"], "author": None, "extra": 1})
    merged = first.merge(second)
    assert merged.to_ts() == "{ id: string; score: number | null; tags: string[]; author: { name: string } | null; extra?: number }"
    assert (
        second.merge(first).to_ts()
        == "{ id: string; score: number | null; tags: string[]; author: { name: string } | null; extra?: number }"
    )
    assert Shape().to_ts() == "unknown"
    assert Shape().merge(first) == first
    assert observe([1]).merge(observe("x")).to_ts() == "number[] | string"


# --- robustness --------------------------------------------------------------------------------

_KEYS = ["type", "properties", "required", "items", "prefixItems", "additionalProperties", "patternProperties", "enum", "const", "anyOf"]
_KEYS += ["oneOf", "allOf", "$ref", "nullable", "default", "format", "minimum", "exclusiveMinimum", "multipleOf", "minLength", "pattern"]
_KEYS += ["minItems", "maxItems", "uniqueItems", "minProperties", "$defs", "title", "description", "x", "A"]
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.sampled_from(["string", "object", "array", "integer", "null", "#", "#/$defs/A", "#/$defs/x", "(", "^a+$", "date-time", "*/"]),
)
_JSONISH = st.recursive(
    _SCALARS, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.sampled_from(_KEYS), c, max_size=4)), max_leaves=16
)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(_JSONISH)
def test_malformed_schemas_never_raise(schema):
    tool = {"name": "t", "description": "d", "inputSchema": schema, "outputSchema": schema, "annotations": {"readOnlyHint": True}}
    schema_to_ts(schema)
    schema_to_ts(schema, indent=0)
    tool_doc("mcp.s.t", tool)
    assert len(signature("mcp.s.t", tool)) <= 200
    if isinstance(schema, dict):
        example_args(schema)
    shape_of(schema)
