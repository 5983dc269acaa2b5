"""A named session's record: every step as a notebook cell (notebook.py), written as it happens
(writer.py), and the clean notebook ``mcp2repl sessions export`` makes of it (export.py).

The kernel face feeds the recorder; the recorder knows nothing of ipykernel, V8 or MCP: it is
given cell sources, IOPub messages exactly as sent, and a short metadata record per step.
"""
