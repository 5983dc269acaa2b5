"""mcp2repl: a Jupyter kernel whose cells are JavaScript in a persistent V8, with MCP tools as functions."""

__version__ = "0.1.0"
