"""MCP servers: config, connections and the tool catalog."""
