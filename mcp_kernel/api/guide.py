"""Runtime guidance for ``api.guide(query)``: short answers about calling tools, results, errors,
printing, artifacts and the rest, ranked by the same search engine as tools.
"""

from __future__ import annotations

import json

from ..servers.search import Scorer, words

# Runtime guidance, searched like tools: "topic [extra search words]", then the text (blank line between entries).
_GUIDE = """
calling tools [call invoke run use function]
Every tool is an async function taking one argument object: `await mcp.<server>.<tool>({ key: value })`.
`tools.<name>(args)` works when the name is unique across servers; `mcp.call("server.tool", args)` and
`api.callTool(server, tool, args)` take names as strings.

argument checks [arguments validation schema invalid typo required parameter]
Arguments are checked against the tool's input schema before the call: a missing required field, a wrong type or an
unknown key throws at once, naming the field and showing the signature.

results [result unwrap structured content json text output return value raw]
Calls return the useful value: `structuredContent` when present, else a single text item (parsed when it is JSON, or
when it is one fenced ```json block after at most one lead-in line ending in ":"),
else the content items (images, audio, resources kept as objects). Pass `{ raw: true }` as the second argument for the
whole MCP result; `api.unwrap(result)` unwraps one later.

errors [error exception catch fail failure throw try handling]
A tool error throws `ToolError` with `.server`, `.tool`, `.code` (and `.data`); catch it with try/catch.
`tools.call(name, args)` never throws: it returns `{ ok: true, data }` (data: the raw MCP result, `data.structuredContent`
or `JSON.parse(data.content[0].text)`) or `{ ok: false, error: { code, message } }`.

agent steps [agent shell command line cli step session workflow skill procedure]
Work in small steps against a persistent session: `mcp2repl --session NAME -e CODE` (or Python's
`KernelSession(name).step(code)`) keeps globals, helpers and MCP connections between commands. Put state on
`globalThis.task`, define small async helpers, evaluate one step, read its compact result, choose the next step. Keep
bulky data in artifacts, not in the answer.

agent commands [commands flags json exit code timeout load library quiet env]
`mcp2repl -e CODE` (repeatable; `-e -` reads stdin) or `--file F` runs a program; `--load F.js` installs helpers
first; `--library QUERY` prints tool docs; `--json` prints `{"ok":true,"value":V}` (or `text`, or `error`) and only
non-empty `stdout`, `stderr`, `displays`, `artifacts`, `notes` (`--trace`: `calls`); `--timeout S`, `--max-output-chars N`
apply per step. Exit status: 0 ok, 1 the program threw, 2 usage or config error, 3 timeout or
interrupt. Stable options go in MCP2REPL_CONFIG, MCP2REPL_SESSION, MCP2REPL_JSON, MCP2REPL_TIMEOUT and friends.

reading errors [error stack traceback exit repair fix fail thrown]
An error names the JS error, its message and the stack in your own lines (`at cell[3] line 2, col 5`, or
`load[helpers.js]` for loaded files). Fix the one step that failed and run it again: the session kept everything
before it. A ToolError names server.tool; a TypeError on a call shows the tool's signature.

loading helpers [load file helpers module library eval tool page script browser]
`await api.load("helpers.js")` runs a .js file under the working directory like a cell (top-level declarations
persist) and returns `{ loaded, digest, exports, topLevel }`. `await api.evalTool("evaluate_script", (a) => ...,
args, { pageId: 1 })` sends a self-contained function to an eval-style tool (Chrome DevTools' evaluate_script): it
runs in the page, kernel values go in through `args`, the tool's other arguments in the fourth.
`tools.search({ query })`, `tools.describe({ path })` and `tools.call(path, args)` follow the mcp-scripting skill.

concurrency [parallel concurrent many batch promise all async]
Calls are promises: start several and `await Promise.all([...])` to run them in parallel, e.g. `await
Promise.all(ids.map((id) => mcp.demo.get_book({ book_id: id })))`.

timeouts [timeout slow limit seconds hang time]
Limit one call with an options argument: `await mcp.s.tool(args, { timeout: 30 })` (seconds). MCP2REPL_TIMEOUT=SECONDS
limits every cell; an overrun fails with TimeoutError and the kernel lives on.

interrupts [interrupt stop cancel abort kill stuck]
Interrupt the kernel (the stop button) to stop a running cell with InterruptError; pending timers and tool calls are
cancelled, all globals are kept.

printing [print show output shape project fields truncate large compact]
`api.print(value, { projection, maxChars })` prints a compact view of a large value; `api.project(value, projection)`
keeps only the fields you name. The last expression of a cell is its result.

artifacts [artifact save store file write read export handle]
Keep large data out of the notebook: `await api.saveArtifact(name, value, { format })` (json, text, ndjson or bytes)
writes a file and returns a small handle; `await api.readArtifact(nameOrHandle)` reads it back, `await api.artifacts()`
lists them.

display [display html markdown image png render rich chart show]
Rich output, shown at once while the cell runs: `api.display(value)` (returns a handle with `.update(next)`),
`api.html(s)`, `api.markdown(s)`, `api.svg(s)`, `api.json(v)`, `api.png(bytes)`; `api.clearOutput({ wait: true })`.

discovery [discover search find tool list describe documentation signature]
`await api.searchTools(query)` ranks tools by relevance, `await api.library(query)` gives TypeScript declarations of
the best matches, `await api.describeTool(name)` a full definition and `await api.listTools()` a compact index.

servers [server connect disconnect log status state start restart]
`await api.servers()` shows each server's state and tool count; `api.connect(name, spec)` adds one from a cell,
`api.disconnect(name)` stops it, `api.serverLog(name)` shows its stderr.

login [login oauth token auth authorize needs_login credentials browser]
A remote server in state `needs_login` needs an OAuth login: `await api.login("name")` shows the login link and
continues when the browser comes back (calling one of its tools does the same). Tokens are kept and refreshed; where
nobody can log in (papermill, nbclient) configure `"auth": {"type": "client_credentials", …}` or log in once interactively.

resources and prompts [resource prompt uri template read list subscribe watch updated]
`await mcp.<server>.resources.list()` and `.read(uri)` (`.templates()` for templates); `await
mcp.<server>.prompts.list()` and `.get(name, args)`. `const sub = await mcp.<server>.resources.subscribe(uri, (e) =>
...)` runs the callback on each update the server sends, also after the cell ended; `await sub.unsubscribe()` stops it.

approvals [approve approval confirm destructive write writes plan apply declined ask once]
With `"confirm_destructive"` on, a tool not marked read-only asks first; answer `a` for all its calls in this step,
`s` for the session; a refusal throws with `code: "declined"`. Plan the writes instead: `const plan = await api.plan(async
() => { for (const k of keys) await mcp.s.put({ key: k }) })` records them (reads run), `plan.summary` shows them,
`await plan.apply()` asks once and returns `[{ ok, data | error }]`, stopping at the first failure. In a named session the
person approves with `mcp2repl sessions approve NAME ID`.

server questions [elicitation elicit ask input form answer question stdin decline defaults]
A server may ask the person for input during a call (MCP elicitation). In JupyterLab and jupyter console each field is
asked in turn (type, description, default, choices), checked against the server's schema and asked again when it does
not fit; a link (URL mode) is shown to open. Where nobody can answer (papermill, nbclient, `mcp2repl --json`) the
server's config decides: `"elicitation": "ask"` (default) declines with a notice, `"defaults"` sends the form's
defaults, `"decline"` does not offer elicitation at all.

task tools [task long running job background poll status cancel]
Tools marked `execution.taskSupport` "required" or "optional" run as MCP tasks: `await` returns their result as for any
tool, status messages and progress show in the live call display, an interrupt or the call's `{ timeout }` cancels
the task on the server.

roots and log level [roots folder directory workspace log level setLogLevel setRoots debug]
A server is offered roots only when its config lists them (`"roots": [paths]`); without, it keeps the scope it was
started with. `await api.setRoots(server, paths)` changes them and tells the server. `await api.setLogLevel(server, "debug")` (or
config `"log_level"`) sets which log messages a server sends; they go to `api.serverLog(server)`.

persistence [variable global state persist cells keep declare reuse]
Top-level `const`, `let`, `function` and `class` declarations become globals that later cells see; re-running a cell
that declares them works. Declarations inside blocks and functions stay local.

timers [sleep wait delay timer interval poll retry]
`await sleep(ms)` waits; `setTimeout`, `setInterval` and their `clear*` work. Await what you want recorded: output
after a cell ends may not be saved.

progress [progress bar live calls trace elapsed summary status running]
While a cell calls tools, a live display shows the calls so far, those in flight, server progress as a bar and the
elapsed time, then collapses into a one-line summary. MCP2REPL_PROGRESS=auto|display|stderr|off chooses where it goes
(stderr lines for jupyter console). `await api.calls()` lists this cell's calls (server, tool, ok, duration); the
execute_reply metadata carries them as `mcp2repl.calls`.
"""
GUIDE: list[tuple[str, str, str]] = [
    (head.split(" [")[0], " ".join(body), head.split(" [")[1].rstrip("]"))
    for head, *body in (block.strip().splitlines() for block in _GUIDE.split("\n\n"))
]
_guide_scorer = Scorer([{"name": words(t), "params": words(k), "description": words(x)} for t, x, k in GUIDE])


def no_match_note(query: str) -> str:
    """What to say when ``query`` matches no guidance: what was searched, every topic there is (few
    enough to list), and that tools are searched elsewhere, which is often what was meant."""
    topics = ", ".join(t for t, _, _ in GUIDE)
    return (
        f'No guidance matches "{query.strip()}" (searched {len(GUIDE)} topics: titles, keywords and texts). '
        f"Topics: {topics}. To find tools, use api.searchTools({json.dumps(query.strip(), ensure_ascii=False)})."
    )


def guide(query: str, limit: int = 6) -> list[dict[str, str]]:
    """Guidance entries best matching ``query`` (the first ``limit`` when it is empty)."""
    limit = max(1, min(int(limit), len(GUIDE)))
    if not query.strip():
        return [{"topic": t, "text": x} for t, x, _ in GUIDE[:limit]]
    scores, _ = _guide_scorer.rank(query)
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [{"topic": GUIDE[i][0], "text": GUIDE[i][1]} for i in order[:limit]]
