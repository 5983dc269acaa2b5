"""The catalog in-process: JS names for tools, name resolution with its hints, and argument checks."""

from __future__ import annotations

import mcp_types
import pytest

from mcp_kernel.servers.catalog import Catalog, ToolLookupError, safe_identifier


def tool(name: str, schema: dict | None = None, description: str = "") -> mcp_types.Tool:
    return mcp_types.Tool(name=name, description=description, input_schema=schema or {"type": "object"})


ADD = {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}


@pytest.fixture
def cat() -> Catalog:
    c = Catalog()
    c.rebuild(
        [
            ("my-server", [tool("add", ADD), tool("get-weather.v2"), tool("delete"), tool("3d"), tool("read")]),
            ("other", [tool("read"), tool("write")]),
        ]
    )
    return c


@pytest.mark.parametrize(
    ("name", "expected"),
    [("get-weather.v2", "get_weather_v2"), ("3d", "_3d"), ("delete", "delete_"), ("then", "then_"), ("ok_name", "ok_name"), ("", "_")],
)
def test_safe_identifier(name: str, expected: str) -> None:
    assert safe_identifier(name) == expected


def test_names_of_servers_and_tools(cat: Catalog) -> None:
    assert cat.server_safe == {"my-server": "my_server", "other": "other"}
    by = {(e.server, e.name): e for e in cat.entries}
    assert by[("my-server", "get-weather.v2")].call_path == "mcp.my_server.get_weather_v2"
    assert by[("my-server", "delete")].safe == "delete_"
    # a name on two servers has no tools.<name>; the server paths still work
    assert by[("my-server", "read")].safe == "" and by[("other", "read")].call_path == "mcp.other.read"


def test_resolution_forms(cat: Catalog) -> None:
    weather = cat.resolve({"name": "get-weather.v2"})
    assert cat.resolve({"safe": "get_weather_v2"}) is weather
    assert cat.resolve({"serverSafe": "my_server", "toolSafe": "get_weather_v2"}) is weather
    assert cat.resolve({"serverSafe": "my_server", "toolSafe": "get-weather.v2"}) is weather
    assert cat.resolve({"server": "my-server", "tool": "get-weather.v2"}) is weather
    assert cat.resolve({"name": "other.read"}).server == "other"


@pytest.mark.parametrize(
    "target",
    [
        {"name": "get-weather.v2"},  # mcp.call("get-weather.v2"), describeTool("get-weather.v2")
        {"name": "get_weather_v2"},
        {"safe": "get_weather_v2"},  # tools.get_weather_v2
        {"name": "my-server.get-weather.v2"},  # mcp.call / mcp.tools[…] / describeTool("server.tool")
        {"name": "my-server.get_weather_v2"},
        {"name": "my_server.get_weather_v2"},
        {"name": "my_server.get-weather.v2"},
        {"server": "my-server", "tool": "get-weather.v2"},  # api.callTool / describeTool(server, tool)
        {"server": "my-server", "tool": "get_weather_v2"},
        {"server": "my_server", "tool": "get_weather_v2"},
        {"serverSafe": "my_server", "toolSafe": "get_weather_v2"},  # mcp.my_server.get_weather_v2
        {"serverSafe": "my_server", "toolSafe": "get-weather.v2"},  # mcp.my_server["get-weather.v2"]
    ],
)
def test_every_form_takes_real_and_js_names(cat: Catalog, target: dict) -> None:
    """Regression: server.tool forms, api.callTool and describeTool(server, tool) took only one spelling."""
    entry = cat.resolve(target)
    assert (entry.server, entry.name) == ("my-server", "get-weather.v2")


def test_lookup_errors_say_what_to_write(cat: Catalog) -> None:
    with pytest.raises(ToolLookupError) as ambiguous:
        cat.resolve({"name": "read"})
    assert str(ambiguous.value) == (
        '"read" is ambiguous: 2 servers have it. Call one of: mcp.my_server.read(…), mcp.other.read(…), or mcp.call("server.read", …)'
    )
    with pytest.raises(ToolLookupError) as typo:
        cat.resolve({"name": "wirte"})
    assert str(typo.value) == "Unknown MCP tool wirte. Did you mean write? Use api.searchTools(query) or api.listTools() to find tools."
    with pytest.raises(ToolLookupError) as server:
        cat.resolve({"serverSafe": "nope", "toolSafe": "x"})
    assert str(server.value) == "Unknown MCP server mcp.nope. Servers: mcp.my_server, mcp.other."
    with pytest.raises(ToolLookupError) as dotted:
        cat.resolve({"name": "my-server.get-wether.v2"})
    assert str(dotted.value) == (
        "Unknown MCP tool my-server.get-wether.v2. Did you mean my-server.get-weather.v2, my-server.get_weather_v2? "
        "Use api.searchTools(query) or api.listTools() to find tools."
    )


def test_argument_checks_name_the_field_and_show_the_signature(cat: Catalog) -> None:
    add = cat.resolve({"name": "add"})
    cat.check_arguments(add, {"a": 1, "b": 2})  # valid: no error
    with pytest.raises(ValueError) as wrong:
        cat.check_arguments(add, {"a": "x", "b": 1, "c": 3})
    assert str(wrong.value) == (
        'mcp.my_server.add: argument "a" must be number, got string "x"\n'
        "  also: unknown argument 'c' (allowed: a, b)\n"
        "  Signature: add(args: { a: number; b: number }): Promise<unknown>"
    )
    with pytest.raises(ValueError) as missing:
        cat.check_arguments(add, {"a": 1})
    assert str(missing.value).startswith('mcp.my_server.add: missing required argument "b"\n')
    with pytest.raises(ValueError) as not_object:
        cat.check_arguments(add, [1, 2])
    assert str(not_object.value).startswith("mcp.my_server.add expects one argument object, got list.")


def test_signatures_are_rendered_once_and_only_when_asked(cat: Catalog) -> None:
    add = cat.resolve({"name": "add"})
    assert add._signature is None  # no call has needed it yet
    assert add.signature == "add(args: { a: number; b: number }): Promise<unknown>"
    assert add._signature is add.signature
    cat.rebuild([("my-server", [add.tool]), ("other", [])])  # same tool, same names: kept
    assert cat.resolve({"name": "add"})._signature == add.signature


def test_schema_patterns_are_checked_with_a_time_bound() -> None:
    import time

    evil = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}, "k": {"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "number"}}}}}
    cat = Catalog()
    cat.rebuild([("srv", [tool("evil", evil)])])
    entry = cat.resolve({"name": "evil"})
    started = time.monotonic()
    with pytest.raises(ValueError) as mismatch:
        cat.check_arguments(entry, {"s": "a" * 40 + "!", "k": {"a" * 30 + "b": "x"}})
    assert time.monotonic() - started < 5  # a backtracking `re` took 13 s here
    assert str(mismatch.value).startswith("mcp.srv.evil: argument \"s\" is invalid: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' does not match '^(a+)+$'")
    cat.check_arguments(entry, {"s": "aaa", "k": {"aa": 1}})


def test_every_tool_gets_its_own_js_name_whatever_the_order() -> None:
    """Regression: ``wipe-all`` took ``wipe_all`` (sorted first), ``wipe_all`` itself became ``wipe_all_2``,
    and ``mcp.srv.wipe_all`` and ``mcp.srv.wipe_all_2`` both ran ``wipe_all``: ``wipe-all`` had no JS name.
    Now a name that is already a JS identifier keeps it, and a mangled name that meets another gets a
    suffix from its own real name (never a number that depends on which tools came first)."""
    names = ["wipe-all", "wipe_all", "wipe.all", "get-sum", "resources", "delete", "delete_"]
    shapes = []
    for order in (names, list(reversed(names))):
        c = Catalog()
        c.rebuild([("srv", [tool(n) for n in order]), ("other-srv", [tool("x")]), ("other_srv", [tool("y")])])
        shapes.append({e.name: e.tool_safe for e in c.entries if e.server == "srv"})
        for e in c.entries:  # each JS name reaches its own tool, and so does each real name
            assert c.resolve({"serverSafe": c.server_safe[e.server], "toolSafe": e.tool_safe}) is e
            assert c.resolve({"server": e.server, "tool": e.name}) is e
            if e.safe:
                assert c.resolve({"safe": e.safe}) is e
        assert c.server_safe == {"srv": "srv", "other-srv": "other_srv_4a4f", "other_srv": "other_srv"}
    assert shapes[0] == shapes[1] == {
        "wipe_all": "wipe_all",  # already an identifier: it keeps its name
        "wipe-all": "wipe_all_8c29",  # wipe_all is taken: "_" and the start of its real name's SHA-1
        "wipe.all": "wipe_all_7bb0",
        "get-sum": "get_sum",  # nothing else wants get_sum
        "resources": "resources_0189",  # mcp.srv.resources is the server's resources
        "delete_": "delete_",
        "delete": "delete__9485",  # a reserved word's delete_ is taken by the real delete_
    }
    assert len(set(shapes[0].values())) == len(names)


def test_tools_names_across_servers_follow_the_same_rule() -> None:
    c = Catalog()
    c.rebuild([("a", [tool("wipe-all"), tool("search")]), ("b", [tool("wipe_all")])])
    by = {e.name: e for e in c.entries}
    assert (by["wipe_all"].safe, by["wipe-all"].safe) == ("wipe_all", "wipe_all_8c29")
    assert c.resolve({"safe": "wipe_all"}) is by["wipe_all"] and c.resolve({"safe": "wipe_all_8c29"}) is by["wipe-all"]
    assert by["search"].safe == "search_3559"  # tools.search is the tool search of the runtime


def test_argument_checks_never_fetch_a_schemas_remote_ref() -> None:
    """Found while reading the SDK for issue 27: jsonschema's default registry retrieves remote ``$ref``s,
    so a server's schema could make the kernel request any URL (from the kernel's host) each time a
    cell called its tool. A ``$ref`` the kernel cannot resolve locally is left for the server to check."""
    import http.server
    import threading

    hits: list[str] = []

    class Canary(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b'{"type": "object", "properties": {"n": {"type": "number"}}}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    canary = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Canary)
    threading.Thread(target=canary.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{canary.server_address[1]}/canary.json"
        schema = {"type": "object", "properties": {"profile": {"$ref": url}, "n": {"$ref": "#/$defs/num"}}, "$defs": {"num": {"type": "number"}}}
        cat = Catalog()
        cat.rebuild([("srv", [tool("remote", schema)])])
        entry = cat.resolve({"name": "remote"})
        cat.check_arguments(entry, {"profile": {"n": "not a number"}, "n": 1})  # the remote part is the server's to check
        with pytest.raises(ValueError, match='argument "n" must be number, got string "x"'):
            cat.check_arguments(entry, {"profile": {}, "n": "x"})  # a local $ref is still checked
    finally:
        canary.shutdown()
    assert hits == []
