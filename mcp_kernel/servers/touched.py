"""Which configured servers a piece of code touches, for one-shot runs that know all their code.

A one-shot ``mcp2repl -e CODE`` pays for every server it starts (a process, an initialize
handshake, a tool listing) and for the MCP SDK's import, while a notebook kernel starts them in the
background where nobody waits. So a run starts only what its code can reach: nothing for code that
names no server, the servers it names (``mcp.demo.x``, ``mcp["my-srv"]``, ``api.callTool("demo", …)``),
and all of them when it reaches tools without saying whose (``tools.x``, ``mcp.call``, discovery,
``Object.keys(mcp)``), because only the servers' tool lists can say where such a name lives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .catalog import safe_identifier
from .spec import ServerSpec

#: Names that reach tools or servers without naming one server: every server must start.
GENERIC = re.compile(
    r"\btools\b|\bmcp\s*\.\s*(?:call|tools|servers)\b"
    r"|\bapi\s*\.\s*(?:searchTools|library|describeTool|listTools|evalTool|servers|connect|serverLog)\b"
)
#: Anything that may reach a server at all.
ANY = re.compile(r"\b(?:mcp|tools)\b|\bapi\s*\.\s*(?:callTool|disconnect)\b")


def touched(code: str, specs: Sequence[ServerSpec]) -> list[ServerSpec]:
    """The specs among ``specs`` that ``code`` may use (see the module docstring)."""
    if not (ANY.search(code) or GENERIC.search(code)):
        return []
    named = [s for s in specs if _names(code, s.name)]
    return named if named and not GENERIC.search(code) else list(specs)


def _names(code: str, name: str) -> bool:
    """Does ``code`` name the server ``name`` (its real or its JS name) as a namespace or a string?"""
    for spelling in {name, safe_identifier(name)}:
        quoted = re.escape(spelling)
        if re.search(rf"\bmcp\s*\.\s*{quoted}\b|\bmcp\s*\[\s*[\"'`]{quoted}[\"'`]|[\"'`]{quoted}[\"'`.]", code):
            return True
    return False
