"""What ``mcp2repl serve`` offers an MCP client: its instructions and four tools, with their schemas.

An agent pays for every byte of ``initialize`` and ``tools/list`` in every conversation, so the
instructions teach the runtime in the fewest words that work and each description says only what
its schema cannot. Arguments are checked here against the same schemas the client was shown
(jsonschema): the low-level SDK server checks none.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from ..lean_imports import hide_iri_grammar

INSTRUCTIONS = """\
A persistent JavaScript/TypeScript runtime whose MCP servers' tools are async functions. Use `run` \
for work that needs several tool calls or logic between them: loops, filters and big results stay \
inside; return only what you need.
- Call tools: `await mcp.<server>.<tool>({...})` (also mcp.srv["tool-name"]). Find them with \
search_tools and describe_tool, or in code: `await tools.search({query})`, \
`await tools.describe({path})`, `await tools.call(path, args)` (never throws).
- A step is an async function body: top-level await; the last expression (or `return`) is the \
result. Top-level const/let/function and globalThis persist between runs.
- `data` given to run is the global `data` for that step (no escaping JSON into code).
- console.log is stdout; `await api.print(x)` shows a value; images (tool results, \
`api.png(bytes)`) come back as images.
- Big results are saved as artifacts: read them back with `await api.readArtifact(name)`.
- A thrown error is returned as an error with its name, message and your line; state is kept, so \
fix the step and run it again. timeout_s stops a step (state kept too).
- `await api.guide("topic")` explains more."""

_RUN = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "JavaScript or TypeScript"},
        "data": {"description": "any JSON: the global `data` for this step"},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "description": "stop the step after this long"},
        "session": {"type": "string", "description": "a named persistent session (shared with `mcp2repl --session`)"},
    },
    "required": ["code"],
}
_SEARCH = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "server": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "offset": {"type": "integer", "minimum": 0},
    },
    "required": ["query"],
}
_DESCRIBE = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "server.tool, from search_tools"}},
    "required": ["path"],
}
_NONE: dict[str, Any] = {"type": "object", "properties": {}}
_READ_ONLY = types.ToolAnnotations(read_only_hint=True)

TOOLS = [
    types.Tool(
        name="run",
        description="Run code as one step of a persistent session; returns its value, output and errors.",
        input_schema=_RUN,
        annotations=types.ToolAnnotations(open_world_hint=True),
    ),
    types.Tool(
        name="search_tools",
        description="Find tools of the configured MCP servers by words.",
        input_schema=_SEARCH,
        annotations=_READ_ONLY,
    ),
    types.Tool(
        name="describe_tool",
        description="A tool's TypeScript input type, annotations and observed output type.",
        input_schema=_DESCRIBE,
        annotations=_READ_ONLY,
    ),
    types.Tool(
        name="list_servers",
        description="The configured MCP servers: state, tool count, last error.",
        input_schema=_NONE,
        annotations=_READ_ONLY,
    ),
]
BY_NAME = {tool.name: tool for tool in TOOLS}


def _validators() -> dict[str, Any]:
    """One validator per tool; jsonschema imported without the IRI grammar nothing here checks (lean_imports)."""
    hide_iri_grammar()
    import jsonschema

    return {tool.name: jsonschema.Draft202012Validator(tool.input_schema) for tool in TOOLS}


_VALIDATORS = _validators()


def problem(name: str, arguments: dict[str, Any]) -> str | None:
    """Why these arguments do not fit the tool's schema (one sentence naming the field), or None."""
    validator = _VALIDATORS.get(name)
    if validator is None:
        return f"unknown tool {name!r}; this server has: {', '.join(BY_NAME)}"
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    where = ".".join(str(p) for p in error.absolute_path)
    return f"{name}: {'argument ' + repr(where) + ': ' if where else ''}{error.message}"
