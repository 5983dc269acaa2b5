"""The built-in demo MCP server (a small bookshop), used when no config exists anywhere."""
