"""``mcp2repl serve``: the kernel as an MCP server, a face beside cli/ over the same Session.

An MCP client (Claude, Codex, VS Code, Cursor, any agent framework) gets four tools: ``run``
(code as one step of a persistent session), ``search_tools``, ``describe_tool`` and
``list_servers``. The modules, in the order a request meets them: ``main`` (stdio or Streamable
HTTP), ``http`` (token, Origin/Host checks), ``app`` (the SDK server and its handlers),
``sessions`` (which session a request's step runs in), ``backends`` (a Session in this process or
a named session's kernel), ``asking`` (questions as elicitation), ``progress``, ``content`` (the
step result as MCP content) and ``tools`` (instructions and schemas). Options are parsed by the
command line (cli/serve.py).
"""
