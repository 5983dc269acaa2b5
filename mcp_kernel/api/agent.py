"""The Python side of the helpers agents carry over from the seeds (see agent.js): ``api.load``,
``api.evalTool``, and the mcp-scripting skill's ``tools.search`` and ``tools.describe``.

``api.load`` is the one place a cell reads a file, so its rule is narrow and checked here, not in
JS: a ``.js`` file under the kernel's working directory, named by a relative path without ``..``,
whose real path (symlinks followed) is still under that directory. The file is rewritten like a
cell (its top-level declarations become globals) and handed back as code for agent.js to run.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Callable
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..engine import BridgeError, CallContext, Engine, nesting
from ..engine.prepare import in_thread
from ..engine.rewrite import CellSyntaxError, parser, rewrite
from ..servers import discovery
from ..servers.catalog import ToolEntry, ToolLookupError
from .discovery import bounded
from .tools import Servers

#: Files api.load reads at most (a helper library, not a data file: data goes through artifacts).
MAX_LOAD_BYTES = 4 << 20
#: What the rewritten code calls instead of starting a cell (agent.js: __mcp2repl.agent.loadRun).
RUN, LOAD_RUN = "__mcp2repl.run(", "__mcp2repl.agent.loadRun("
#: Parameter names of eval-style tools (Chrome DevTools' evaluate_script takes `function`).
CODE_WORDS = ("function", "script", "code", "javascript", "js", "expression", "source")
CODE_WORD = re.compile(r"\b(?:" + "|".join(CODE_WORDS) + r")\b")
DEFAULT_EVAL_QUERY = "evaluate script code function javascript"


class AgentApi:
    """Handlers for api.load / api.loadSource, api.evalTool and tools.search / tools.describe."""

    def __init__(self, servers: Servers, cwd: Path, approval: Callable[[Any], str] = lambda entry: "") -> None:
        self.servers = servers
        self.cwd = cwd
        self.approval = approval  # one line: does a call need a person's approval, and why (ToolsApi.approval_of)
        self.index = discovery.ToolIndex()

    def register(self, engine: Engine) -> None:
        engine.register("api.load", self.load)
        engine.register("api.loadSource", self.load_source)
        engine.register("api.evalTool", bounded("api.evalTool", self.eval_tool))
        engine.register("tools.search", bounded("tools.search", self.search))
        engine.register("tools.describe", self.describe)

    # ---- api.load ---------------------------------------------------------------------------------

    async def load(self, params: dict[str, Any], ctx: CallContext) -> Any:
        given = params.get("path")
        path = self._checked(given)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise BridgeError("Error", f"api.load({json.dumps(given)}): cannot read it: {exc.strerror}") from None
        return await _off_loop(str(given), raw)  # named as the cell gave it: errors and the manifest show no host path

    async def load_source(self, params: dict[str, Any], ctx: CallContext) -> Any:
        """``--load FILE`` reads the file where the command runs and sends its text (the kernel may be remote)."""
        return await _off_loop(str(params.get("name") or "helpers.js"), str(params.get("source") or "").encode("utf-8"))

    def _checked(self, given: Any) -> Path:
        shown = f"api.load({json.dumps(given) if isinstance(given, str) else '…'})"
        if not isinstance(given, str) or not given.strip():
            raise BridgeError("TypeError", f"{shown}: give the path of a .js file under the working directory, like api.load('helpers.js')")
        rule = "only .js files under the working directory can be loaded"
        if control := next((c for c in given if unicodedata.category(c) == "Cc"), None):  # a NUL would reach the OS as a ValueError
            raise BridgeError("TypeError", f"{shown}: the path contains a control character (U+{ord(control):04X}); give the plain path of a .js file")
        if PurePosixPath(given).is_absolute() or PureWindowsPath(given).is_absolute() or given.startswith("~"):
            raise BridgeError("PermissionError", f"{shown}: {rule}; give a path relative to it, not an absolute one")
        if ".." in PurePosixPath(given.replace("\\", "/")).parts:
            raise BridgeError("PermissionError", f"{shown}: {rule}; '..' is not allowed")
        if not given.endswith(".js"):
            raise BridgeError("PermissionError", f"{shown}: {rule}; this is not a .js file")
        root = self.cwd.resolve()
        path = root / given
        try:
            real = path.resolve(strict=True)
        except OSError:
            raise BridgeError("Error", f"{shown}: no such file in the working directory") from None
        if not real.is_relative_to(root):
            raise BridgeError("PermissionError", f"{shown}: {rule}; it is a link to a file outside it")
        if not real.is_file():
            raise BridgeError("Error", f"{shown}: not a file")
        if real.stat().st_size > MAX_LOAD_BYTES:
            raise BridgeError("RangeError", f"{shown}: the file is over {MAX_LOAD_BYTES >> 20} MB; load code, and read data with api.readArtifact")
        return path

    # ---- api.evalTool -----------------------------------------------------------------------------

    async def eval_tool(self, params: dict[str, Any], ctx: CallContext) -> Any:
        """The tool and its code parameter: by exact name first, else the best search hit that has one."""
        spec = str(params.get("spec") or "").strip()
        manager = await self.servers.get()
        entries = await manager.settled_entries()
        if spec:
            try:
                entry = manager.catalog.resolve({"name": spec})
            except ToolLookupError:
                entry = None
            if entry is not None:
                param = code_parameter(entry)
                if param is None:
                    raise BridgeError(
                        "TypeError",
                        f"api.evalTool: {entry.qualified} has no string parameter for code "
                        f"({', '.join(CODE_WORDS)}); its parameters: {', '.join(_properties(entry)) or 'none'}",
                    )
                return _target(entry, param)
        ranked, _ = self.index.sync(entries).ranked(spec or DEFAULT_EVAL_QUERY)
        for i, _score in ranked[:20]:
            entry = self.index.entries[i]
            if (param := code_parameter(entry)) is not None:
                return _target(entry, param)
        raise BridgeError(
            "TypeError",
            f"api.evalTool({json.dumps(spec)}): no eval-style tool (a string parameter named like {', '.join(CODE_WORDS[:3])}) "
            f"matches among {len(entries)} tools; name one exactly, e.g. api.evalTool('server.tool', fn)",
        )

    # ---- the mcp-scripting skill's contract --------------------------------------------------------

    async def search(self, params: dict[str, Any], ctx: CallContext) -> Any:
        manager = await self.servers.get()
        index = self.index.sync(await manager.settled_entries())
        found = index.search(
            str(params.get("query") or ""),
            limit=_int(params.get("limit"), 10),
            offset=_int(params.get("offset"), 0),
            server=params.get("server") or None,
        )
        items = []
        for hit in found["results"]:
            item = {"path": f"{hit['server']}.{hit['name']}", "server": hit["server"], "name": hit["name"]}
            if hit["summary"]:
                item["description"] = hit["summary"]
            items.append(item)
        return {"items": items, "total": found["total"], "hasMore": found["hasMore"], "nextOffset": found["nextOffset"]}

    async def describe(self, params: dict[str, Any], ctx: CallContext) -> Any:
        path = params.get("path")
        if not isinstance(path, str) or not path:
            raise BridgeError("TypeError", 'tools.describe expects { path: "server.tool" } (a path from tools.search)')
        manager = await self.servers.get()
        await manager.settled_entries()
        try:
            entry = manager.catalog.resolve({"name": path})
        except ToolLookupError as exc:
            raise BridgeError("TypeError", str(exc)) from None
        key = (entry.server, entry.name)
        return {**described(entry, manager.observed.get(key), manager.observed.source(key)), "approval": self.approval(entry)}


def described(entry: ToolEntry, observed: str | None, source: str | None) -> dict[str, Any]:
    """``{ path, inputTypeScript, inputGuidance, observedOutput: { target, typeScript } }`` (plus annotations when given).

    ``target`` says where the JSON sits in ``tools.call``'s ``data`` (the raw CallToolResult), as the
    skill's readers expect: the declared output schema describes ``data.structuredContent``.
    """
    from ..servers import typescript  # with the first tool described: a run that describes none never loads it

    tool = entry.tool.model_dump(by_alias=True, exclude_none=True)
    schema = tool.get("inputSchema") or {"type": "object"}
    notes: dict[str, str] = {}
    typescript._params(schema, schema, "args", notes)  # the field docs a one-line type cannot carry
    output = None
    if tool.get("outputSchema"):
        output = {"target": "data.structuredContent", "typeScript": typescript.schema_to_ts(tool["outputSchema"])}
    elif observed is not None:
        output = {"target": TARGETS.get(source or "", "data"), "typeScript": observed}
    out: dict[str, Any] = {
        "path": entry.qualified,
        "inputTypeScript": typescript.schema_to_ts(schema),
        "inputGuidance": "\n".join(f"{k}: {v}" for k, v in notes.items()) or None,
        "observedOutput": output,
    }
    if tool.get("annotations"):
        out["annotations"] = tool["annotations"]
    return out


#: Where a result's JSON was found (servers/shapes.py sources) → where it is in the raw result.
TARGETS = {
    "structuredContent": "data.structuredContent",
    "json text": "JSON.parse(data.content[0].text)",
    "fenced json": "api.unwrap(data)",  # a ```json block after a lead-in line (mcp.js: fencedJson)
    "text": "data.content[0].text",
    "content items": "data.content",
}


def code_parameter(entry: ToolEntry) -> str | None:
    """The string parameter that takes code, scored as the original evalTool did (exact word, mention, required)."""
    schema = entry.tool.input_schema or {}
    required = set(schema.get("required") or ())
    best: tuple[int, str] | None = None
    for name, prop in _properties(entry).items():
        if not isinstance(prop, dict) or prop.get("type") not in (None, "string"):
            continue
        text = f"{name} {prop.get('title') or ''} {prop.get('description') or ''}".lower()
        score = (20 if name.lower() in CODE_WORDS else 0) + (10 if CODE_WORD.search(text) else 0)
        score += 5 if name in required and score else 0
        if score and (best is None or score > best[0]):
            best = (score, name)
    return best[1] if best else None


def _properties(entry: ToolEntry) -> dict[str, Any]:
    return dict((entry.tool.input_schema or {}).get("properties") or {})


def _target(entry: ToolEntry, param: str) -> dict[str, Any]:
    """Where api.evalTool sends the code, and the tool's other required arguments (its ``toolArgs`` must hold them)."""
    required = [name for name in (entry.tool.input_schema or {}).get("required") or () if name != param]
    return {"server": entry.server, "tool": entry.name, "param": param, "path": entry.qualified, "required": required}


def _int(value: Any, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except (TypeError, ValueError):
        raise BridgeError("TypeError", f"expected a whole number, got {value!r}") from None


async def _off_loop(name: str, raw: bytes) -> dict[str, Any]:
    """_prepared as a cell's preparation, in a worker thread (a tiny file at once): the loop keeps
    serving, and an interrupt (which ends the waiting call) stops the work at its next checkpoint."""
    stop = threading.Event()
    try:
        return await in_thread(stop, _prepared, name, raw)
    finally:
        stop.set()


def _prepared(name: str, raw: bytes) -> dict[str, Any]:
    """The file rewritten like a cell (top-level declarations become globals), run by agent.js."""
    deep = nesting.past_limit(raw, parser())
    if deep is not None:
        raise BridgeError("SyntaxError", f"api.load: {name} line {deep[1][0] + 1}: {nesting.too_deep(deep[0])}")
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BridgeError("TypeError", f"api.load: {name} is not UTF-8 text") from None
    label = f"load[{Path(name).name}]"
    try:
        rewritten = rewrite(source, label)
    except CellSyntaxError as exc:
        raise BridgeError("SyntaxError", f"{exc} ({name} line {exc.line}, col {exc.column})") from None
    assert rewritten.code.startswith(RUN)
    return {"loaded": name, "digest": digest, "code": LOAD_RUN + rewritten.code[len(RUN) :], "declared": rewritten.declared}
