"""The Jupyter face of mcp2repl: protocol only. The only part that imports ipykernel."""
