// MCP tools as JavaScript functions: `mcp.*`, `tools.*`, and the server functions of `api.*`.
// Python owns the connections and resolves names (mcp_kernel/api/tools.py over servers/); this
// file gives them a JS shape, and is the one place where a tool result becomes a value (unwrap).
// Names not in the catalog yet (a server still starting, or just connected) are forwarded
// anyway, and Python waits for the server before resolving them.
(function installMcpApi() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const api = ns.api;
  const define = (obj, name, value) => $.defineProperty(obj, name, $.data(value));
  // A catalog can arrive after any cell: what builds it is taken now, and its loops do not iterate
  // (a cell may replace Array.prototype[Symbol.iterator]).
  const ProxyC = Proxy;
  const ownDescriptor = Reflect.getOwnPropertyDescriptor;

  /** A tool returned an error result, or its server failed. */
  // (fields are put, not assigned: a setter or getter-only accessor on Object.prototype must not stop them)
  class ToolError extends Error {
    constructor(message, details = {}) {
      super(message);
      $.put(this, "name", "ToolError");
      $.put(this, "server", details.server);
      $.put(this, "tool", details.tool);
      $.put(this, "code", details.code);
      // shown once, before the message, where the error is rendered (the message stays the server's)
      if (details.server && details.tool) $.put(this, "context", `${details.server}.${details.tool}`);
      if (details.data !== undefined) $.put(this, "data", details.data);
    }
  }
  define(globalThis, "ToolError", ToolError);

  // ---- results ----------------------------------------------------------------------------

  function parseText(text) {
    const t = $.trim(text);
    if ($.test(/^[[{"]/, t) || $.test(/^(-?\d|true$|false$|null$)/, t)) {
      try { return $.parse(t); } catch (_) { /* not JSON after all */ }
    }
    const block = fencedJson(t);
    return block === NOT_FENCED ? text : block;
  }

  // A text that is exactly one fenced JSON block, after at most one line that introduces it (one
  // ending in ":"), is that JSON: Chrome DevTools' evaluate_script answers "Script ran on page and
  // returned:\n```json\n{…}\n```". `undefined` in the block (a page function returned nothing) is
  // undefined. Prose around the block, a second block or a block that is not JSON keep the text.
  const NOT_FENCED = { __proto__: null };
  const FENCE_OPEN = /^(?:[^\n`]*:[ \t]*\r?\n)?```json[ \t]*\r?\n/; // anchored: reads the first two lines at most
  function fencedJson(t) {
    if (!$.endsWith(t, "\n```")) return NOT_FENCED; // most texts stop here, whatever their size
    const open = $.exec(FENCE_OPEN, t);
    if (open === null) return NOT_FENCED;
    const body = $.trim($.slice(t, open[0].length, t.length - 3));
    if (body === "undefined") return undefined;
    try { return $.parse(body); } catch (_) { return NOT_FENCED; } // a second block inside is no JSON either
  }

  // A result's fields are read as its own: what a cell put on Object.prototype is no part of it.
  const own = $.own;
  function contentItem(item) {
    if (item && own(item, "type") === "text") return parseText(own(item, "text"));
    return item; // image, audio, resource, resource_link: kept whole for display
  }

  /**
   * The useful value of an MCP tool result: `structuredContent` when present; otherwise a
   * single text item (parsed as JSON when it is JSON, or when it is one fenced ```json block after
   * at most one lead-in line ending in ":"); otherwise each content item, with image, audio and
   * resource items kept as objects the display layer renders. Strings are read the same way.
   * Anything else is returned unchanged.
   * @param {*} value a tool result (raw or not), or a string
   * @returns {*}
   */
  function unwrap(value) {
    if (typeof value === "string") return parseText(value);
    if (!value || typeof value !== "object" || $.isArray(value)) return value;
    if (own(value, "structuredContent") !== undefined) return own(value, "structuredContent");
    const content = own(value, "content");
    if ($.isArray(content)) {
      if (content.length === 0) return null;
      if (content.length === 1) return contentItem(content[0]);
      return $.map(content, contentItem);
    }
    return value;
  }
  api.unwrap = unwrap;

  /** What an error result (`isError`) says: its text items (also a planned call's outcome, plan.js). */
  function toolErrorMessage(result) {
    const texts = $.map($.filter((own(result, "content") || []), (c) => own(c, "type") === "text"), (c) => own(c, "text"));
    // The Python SDK prefixes every tool error with this; the server and tool are named anyway.
    return $.replace($.join(texts, "\n"), /^Error executing tool [^:]+: /, "") || "the tool reported an error";
  }
  ns.toolErrorMessage = toolErrorMessage;

  function toolError(result, where) {
    const data = own(result, "structuredContent");
    return new ToolError(toolErrorMessage(result), { server: where.server, tool: where.tool, code: "tool_error", data });
  }

  // ---- calls ------------------------------------------------------------------------------

  /** Where the value of a result sits, as the observed-shape docs name it (`value`: the result unwrapped). */
  function source(result, value) {
    if (own(result, "structuredContent") !== undefined) return "structuredContent";
    const items = own(result, "content") || [];
    // the text was parsed already (unwrap): parsing it again would hold a big value twice
    if (items.length === 1 && items[0] && own(items[0], "type") === "text") {
      const text = own(items[0], "text");
      if (value === text) return "text";
      if (typeof text === "string" && $.test(/```\s*$/, $.slice(text, -8))) return "fenced json"; // its tail only: a big text is not copied
      return "json text";
    }
    return items.length ? "content items" : null;
  }

  // Python asks for a sample of results (`observe`): their shape becomes the documented return
  // type. Big values are not worth the transfer.
  const OBSERVE_MAX_CHARS = 65536;
  function observe(reply, result, value) {
    const where = source(result, value);
    if (where === null || value === undefined) return;
    const json = ns.jsonValue(value, OBSERVE_MAX_CHARS);
    if (json !== undefined) ns.notify("mcp.observed", { server: reply.server, tool: reply.tool, source: where, json });
  }

  async function invoke(target, label, args, options) {
    if (args === undefined) args = {};
    if (args === null || typeof args !== "object" || $.isArray(args)) {
      throw new TypeError(`${label} expects one argument object, like ${label}({ key: value }); got ${ns.inspect(args, { depth: 0 })}`);
    }
    const opts = options || { __proto__: null };
    // reply: {server, tool, observe, result} — result is the MCP CallToolResult as the server sent it
    const answer = await ns.ask("mcp.call", { target, args, raw: !!opts.raw, timeout: opts.timeout });
    const reply = answer.v;
    if (own(reply, "planned") !== undefined) return $.box(reply.planned); // recorded by api.plan, not sent (plan.js)
    const result = reply.result;
    if (own(result, "isError")) throw ns.restack(toolError(result, reply), answer.site);
    if (opts.raw && !reply.observe) return $.box(result); // a raw 50 MB text is not parsed for nothing
    const value = unwrap(result);
    if (reply.observe) observe(reply, result, value);
    return $.box(opts.raw ? result : value); // boxed: the value's `then` is looked up only where users get it (unboxed)
  }

  let catalog = { servers: [], tools: [], problems: [] };
  const IGNORED = new $.Set(["then", "toJSON", "constructor", "inspect", "valueOf", "toString", "asymmetricMatch", "nodeType"]);

  // Feature detection works (`typeof tools.x === "function"`, `mcp.fs.delete_file?.(…)`): a name
  // the catalog does not have is undefined. Only while an answer may still come — a server still
  // starting, or a config with problems (the server would be there were it valid) — is an unknown
  // name a function, whose call waits for the servers and then names the tool or the problem.
  const undecided = () => $.some(catalog.servers, (s) => s.state === "starting") || (catalog.problems || []).length > 0;

  /** A target object whose unknown string keys become late-bound functions while `open()` says so. */
  function lateBound(target, make, open) {
    return new ProxyC(target, {
      get(obj, prop, receiver) {
        if (typeof prop === "symbol" || prop in obj || $.has(IGNORED, prop)) return $.reflectGet(obj, prop, receiver);
        return open() ? make(prop) : undefined;
      },
    });
  }

  function toolFunction(target, label, description) {
    // tracked: a failing call nobody awaits is reported (engine/js/promises.js)
    const fn = (args, options) => ns.toolCall(invoke(target, label, args, options), `${label}({…})`); // and a missing await is named (promises.js)
    define(fn, "name", label);
    if (description) define(fn, "__doc__", description);
    return fn;
  }

  function serverNamespace(server) {
    const base = {};
    const qualified = server.name;
    const mine = $.filter(catalog.tools, (t) => t.server === qualified);
    for (let i = 0; i < mine.length; i++) {
      const t = mine[i];
      base[t.toolSafe] = toolFunction({ server: t.server, tool: t.name }, `mcp.${server.safe}.${t.toolSafe}`, t.description);
      if (t.name !== t.toolSafe) define(base, t.name, base[t.toolSafe]); // mcp.srv["get-sum"]: the real name too, not listed
    }
    const request = (method, ...args) => ns.ask("mcp.request", { server: qualified, method, args }); // boxed
    define(base, "resources", {
      /**
       * Watch a resource: `onUpdate({server, uri})` runs each time the server sends
       * `notifications/resources/updated` for it, also after this cell ended (its output goes to
       * this cell, as a timer's does). Returns `{uri, unsubscribe()}`.
       */
      subscribe: async (uri, onUpdate) => {
        if (typeof onUpdate !== "function") throw new TypeError(`mcp.${server.safe}.resources.subscribe(uri, onUpdate): onUpdate must be a function`);
        const { id } = (await ns.ask("mcp.subscribe", { server: qualified, uri: $.String(uri) })).v;
        $.mapSet(subscriptions, id, onUpdate);
        return {
          uri: $.String(uri),
          unsubscribe: async () => {
            $.mapDelete(subscriptions, id);
            return ns.call("mcp.unsubscribe", { id });
          },
        };
      },
      /** The server's resources: `[{uri, name, mimeType, description}]`. */
      list: async () => (await request("list_resources")).v.resources,
      /** Resource templates: `[{uriTemplate, name, …}]`. */
      templates: async () => (await request("list_resource_templates")).v.resourceTemplates,
      /** A resource's contents: text (parsed when JSON), a blob item, or a list when several. */
      read: async (uri) => {
        const contents = (await request("read_resource", $.String(uri))).v.contents || [];
        const one = (c) => (typeof c.text === "string" ? parseText(c.text) : c);
        return contents.length === 1 ? one(contents[0]) : $.map(contents, one);
      },
    });
    define(base, "prompts", {
      /** The server's prompts: `[{name, description, arguments}]`. */
      list: async () => (await request("list_prompts")).v.prompts,
      /** A rendered prompt: `{description, messages}`. */
      get: async (name, args) => {
        const r = (await request("get_prompt", $.String(name), args || {})).v;
        return { description: r.description, messages: r.messages };
      },
    });
    // a server that is not ready (starting, failed) answers every tool name: the call says why
    const open = () => server.state !== "ready" || undecided();
    return lateBound(base, (prop) => toolFunction({ serverSafe: server.safe, toolSafe: prop }, `mcp.${server.safe}.${prop}`), open);
  }

  // resource subscriptions: id -> callback; Python posts an event per update, to the subscribing cell
  const subscriptions = new $.Map();
  ns.onData("mcp.resourceUpdated", (event) => {
    const fn = $.mapGet(subscriptions, event.id);
    if (!fn) return;
    const out = fn({ server: event.server, uri: event.uri });
    if (out && typeof out.then === "function") ns.tracked(out); // a rejection is reported, not lost
  });

  let mcpTarget = {};
  let toolsTarget = {};

  /** Python: a new catalog snapshot `{servers: [{name, safe, state}], tools: [summary…], problems: [config problem…]}`. */
  function setCatalog(next) {
    catalog = next;
    const m = {};
    for (let i = 0; i < catalog.servers.length; i++) m[catalog.servers[i].safe] = serverNamespace(catalog.servers[i]);
    // mcp["chrome-devtools"]: a server's real name reaches its namespace too, unlisted (as tools' real names do)
    for (let i = 0; i < catalog.servers.length; i++) {
      const server = catalog.servers[i];
      if (server.name !== server.safe && !(server.name in m)) define(m, server.name, m[server.safe]);
    }
    define(m, "call", (name, args, options) => ns.toolCall(invoke({ name: $.String(name) }, `mcp.call("${name}")`, args, options), `mcp.call(${$.stringify($.String(name))}, {…})`));
    const byName = {};
    for (let i = 0; i < catalog.tools.length; i++) {
      const t = catalog.tools[i];
      byName[t.qualified] = toolFunction({ server: t.server, tool: t.name }, `mcp.tools["${t.qualified}"]`, t.description);
      if (t.safe) byName[t.name] = toolFunction({ server: t.server, tool: t.name }, `mcp.tools["${t.name}"]`, t.description);
      // every other spelling of server.tool (real or JS name in each part) reaches the same tool, unlisted
      const aliases = [`${t.serverSafe}.${t.toolSafe}`, `${t.server}.${t.toolSafe}`, `${t.serverSafe}.${t.name}`, t.safe];
      for (let a = 0; a < aliases.length; a++) {
        const alias = aliases[a];
        if (alias && !(alias in byName)) define(byName, alias, byName[t.qualified]);
      }
      // a name several servers have: calling it says which to pick
      if (!t.safe && !(t.name in byName)) define(byName, t.name, toolFunction({ name: t.name }, `mcp.tools["${t.name}"]`));
    }
    define(m, "tools", lateBound(byName, (prop) => toolFunction({ name: prop }, `mcp.tools["${prop}"]`), undecided));
    define(m, "servers", () => api.servers());
    const t = {};
    for (let i = 0; i < catalog.tools.length; i++) {
      const entry = catalog.tools[i];
      if (entry.safe) t[entry.safe] = toolFunction({ server: entry.server, tool: entry.name }, `tools.${entry.safe}`, entry.description);
    }
    // a name several servers have exists too (typeof says "function"); calling it says which to pick
    for (let i = 0; i < catalog.tools.length; i++) {
      const entry = catalog.tools[i];
      if (!entry.safe && !(entry.toolSafe in t)) define(t, entry.toolSafe, toolFunction({ name: entry.name }, `tools.${entry.toolSafe}`));
    }
    // the mcp-scripting skill's contract: data is the raw CallToolResult, a failure is a value
    define(t, "call", async (path, args, options) => {
      try {
        return { ok: true, data: (await $.pinned(invoke({ name: $.String(path) }, `tools.call("${path}")`, args, { ...options, raw: true }))).v };
      } catch (e) {
        return { ok: false, error: { code: e.code || e.name || "Error", message: $.String(e.message) } };
      }
    });
    const reserved = ns.toolsReserved || {}; // tools.search, tools.describe (agent.js)
    const names = $.keys(reserved);
    for (let i = 0; i < names.length; i++) define(t, names[i], reserved[names[i]]);
    mcpTarget = m;
    toolsTarget = t;
  }

  // Stable global objects that always reflect the latest snapshot.
  function forwarding(getTarget, make) {
    return new ProxyC({}, {
      get(_, prop) {
        const target = getTarget();
        if (typeof prop === "symbol" || prop in target || $.has(IGNORED, prop)) return $.reflectGet(target, prop);
        return undecided() ? make(prop) : undefined;
      },
      has: (_, prop) => prop in getTarget(),
      ownKeys: () => $.ownKeys(getTarget()),
      getOwnPropertyDescriptor: (_, prop) => {
        const d = ownDescriptor(getTarget(), prop);
        if (d) d.configurable = true;
        return d;
      },
      set: () => false,
      defineProperty: () => false,
      deleteProperty: () => false,
    });
  }
  define(globalThis, "mcp", forwarding(() => mcpTarget, (prop) => serverNamespace({ name: prop, safe: prop, state: "unknown" })));
  define(globalThis, "tools", forwarding(() => toolsTarget, (prop) => toolFunction({ safe: prop }, `tools.${prop}`)));
  setCatalog(catalog);
  ns.onData("catalog", setCatalog);

  // ---- api: servers ------------------------------------------------------------------------

  /**
   * Call a tool by exact server and tool name.
   * @param {string} server
   * @param {string} tool
   * @param {{[key: string]: unknown}} [args]
   * @param {{timeout?: number, raw?: boolean}} [options] `raw: true` returns the whole MCP result
   * @returns {Promise<*>}
   */
  api.callTool = (server, tool, args, options) => ns.toolCall(
    invoke({ server: $.String(server), tool: $.String(tool) }, `api.callTool("${server}", "${tool}")`, args, options),
    `api.callTool(${$.stringify($.String(server))}, ${$.stringify($.String(tool))}, {…})`,
  );
  /**
   * Each server: name, transport, state, tool count, config source, MCP protocol revision, last error. `{wait: true}` waits for starting servers.
   * @param {{wait?: boolean}} [options]
   * @returns {Promise<{name: string, transport: string, state: string, tools: number | null, source: string, description?: string, protocol: string | null, lastError: string | null, [key: string]: unknown}[]>}
   */
  api.servers = (options) => ns.call("api.servers", options || {});
  /**
   * Connect a server from a cell (same spec shape as a config entry); its tools are usable at once.
   * @param {string} name
   * @param {{command?: string|string[], args?: string[], env?: {[key: string]: string}, cwd?: string, url?: string, headers?: {[key: string]: string}, type?: string, timeout?: number, [key: string]: unknown}} spec
   * @returns {Promise<*>}
   */
  api.connect = (name, spec) => ns.call("api.connect", { name: $.String(name), spec });
  /**
   * Log in to a remote server that uses OAuth (state "needs_login"): shows the authorization link
   * (clickable in JupyterLab, printed in terminals) and resolves when the browser comes back.
   * Tokens are kept (owner-only) and refreshed silently; `{force: true}` forgets them first.
   * Where nobody can follow a link (papermill, nbclient, --json) it fails at once and says what to do.
   * @param {string} name
   * @param {{force?: boolean}} [options]
   * @returns {Promise<{name: string, state: string, tools: number}>}
   */
  api.login = (name, options) => ns.call("api.login", { name: $.String(name), force: !!(options || {}).force });
  /**
   * Close a server's connection and stop its process.
   * @param {string} name
   * @returns {Promise<*>}
   */
  api.disconnect = (name) => ns.call("api.disconnect", { name: $.String(name) });
  /**
   * The last lines a server wrote to stderr (never mixed into cell output).
   * @param {string} name
   * @param {{lines?: number}} [options]
   * @returns {Promise<*>}
   */
  api.serverLog = (name, options) => ns.call("api.serverLog", { name: $.String(name), lines: (options || {}).lines });
  /**
   * Ask a server to send log messages from `level` up (MCP `logging/setLevel`). They go to
   * `api.serverLog(server)` (a cell's stderr names only a server's first error). Kept across reconnects;
   * the config's `"log_level"` sets it at start.
   * @param {string} server
   * @param {"debug"|"info"|"notice"|"warning"|"error"|"critical"|"alert"|"emergency"} level
   * @returns {Promise<{server: string, level: string}>}
   */
  api.setLogLevel = (server, level) => ns.call("api.setLogLevel", { server: $.String(server), level });
  /**
   * Offer other folders as the client's roots to a server (relative paths: from the kernel's
   * folder) and tell it with `notifications/roots/list_changed`. Only a server whose config lists
   * `"roots"` has them (the capability is fixed at start); by default a server is offered none, so
   * it keeps the scope it was started with.
   * @param {string} server
   * @param {string[]} paths
   * @returns {Promise<{server: string, roots: string[]}>}
   */
  api.setRoots = (server, paths) => ns.call("api.setRoots", { server: $.String(server), paths });
  /**
   * The tool calls made by this cell so far: server, tool, ok, duration (a call still running: `ok: null, unfinished: true`).
   * @returns {Promise<{server: string, tool: string, ok: boolean | null, ms: number | null, bytesIn: number, bytesOut: number, error: string | null, unfinished?: boolean}[]>}
   */
  api.calls = () => ns.call("api.calls", {});
})();
