"""The command line: ``mcp2repl`` (main.py), the kernelspec installer and papermill's translator."""
