// Helpers agents carry over from the seeds: `api.load(path)` (helper files evaluated like a cell),
// `api.evalTool(nameOrQuery, fn, args)` (functions sent to eval-style tools such as Chrome
// DevTools' evaluate_script), and the mcp-scripting skill's `tools.search` / `tools.describe`.
// Python reads, checks and rewrites files and picks tools (mcp_kernel/api/agent.py).
// Loaded before mcp.js, which puts `ns.toolsReserved` on `tools` beside `tools.call`.
(function installAgentApi() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const api = ns.api;
  const evaluate = globalThis.eval; // indirect: the loaded file runs at global scope, like a cell
  const fnToString = Function.prototype.call.bind(Function.prototype.toString);
  const agent = {};

  // The source a function was written with: without the interrupt checks the cell rewriter put in
  // (engine/rewrite.py: CHECK, CHECK_OPEN, CHECK_CLOSE), which mean nothing where it is sent.
  const CHECK = "__mk$f[0]&&__mk$i();";
  const swap = (text, from, to) => $.join($.split(text, from), to);
  const written = (fn) => swap(swap(swap(swap(fnToString(fn), "{" + CHECK, "{"), CHECK, ""), "(__mk$f[0]&&__mk$i(),", ""), "/*__mk$*/)", "");
  ns.agent = agent;

  /** The rewritten file calls this instead of starting a cell: it runs inside the caller's cell. */
  agent.loadRun = (name, body, map) => {
    ns.mapCell(name, map);
    return body();
  };

  const internal = (k) => typeof k !== "string" || $.startsWith(k, "__mcp2repl") || $.startsWith(k, "__mk$");

  function snapshot() {
    const seen = new $.Map();
    const keys = $.ownKeys(globalThis);
    for (let i = 0; i < keys.length; i++) {
      if (internal(keys[i])) continue;
      const d = $.getOwnPropertyDescriptor(globalThis, keys[i]);
      $.mapSet(seen, keys[i], d && "value" in d ? d.value : d);
    }
    return seen;
  }

  /** Dotted paths of the functions reachable from `value`, a few levels down (`demo.add`). */
  function functionPaths(name, value, depth, out, seen) {
    if (typeof value === "function") { $.push(out, name); return; }
    if (value === null || typeof value !== "object" || depth >= 3 || $.has(seen, value)) return;
    $.add(seen, value);
    const keys = $.keys(value);
    for (let i = 0; i < keys.length && i < 200; i++) {
      let v;
      try { v = value[keys[i]]; } catch (_) { continue; } // a throwing getter is not an export
      functionPaths(`${name}.${keys[i]}`, v, depth + 1, out, seen);
    }
  }

  async function run(prepared) {
    const before = snapshot();
    await evaluate(prepared.code);
    const after = snapshot();
    const top = new $.Set(prepared.declared);
    const names = $.ownKeys(globalThis);
    for (let i = 0; i < names.length; i++) {
      const k = names[i];
      if (!$.mapHas(after, k)) continue;
      const was = $.mapGet(before, k);
      const now = $.mapGet(after, k);
      if (!$.mapHas(before, k) || (was !== now && !(was !== was && now !== now))) $.add(top, k); // NaN is NaN
    }
    const topLevel = $.sort($.setValues(top));
    const exports = [];
    const seen = new $.Set();
    for (let i = 0; i < topLevel.length; i++) functionPaths(topLevel[i], $.mapGet(after, topLevel[i]), 0, exports, seen);
    return { loaded: prepared.loaded, digest: prepared.digest, exports: $.sort(exports), topLevel };
  }

  /**
   * Evaluate a JavaScript file in this environment; its top-level declarations persist like a
   * cell's. Only `.js` files under the kernel's working directory (no `..`, absolute path or link
   * out of it): a read-only exception to the sandbox.
   * @param {string} path relative to the working directory
   * @returns {Promise<{loaded: string, digest: string, exports: string[], topLevel: string[]}>}
   */
  api.load = async (path) => run(await ns.call("api.load", { path }));
  /** `mcp2repl --load FILE`: the command read the file (the kernel may be elsewhere). */
  agent.loadSource = async (name, source) => run(await ns.call("api.loadSource", { name, source }));

  /** The value a page-eval tool returned: Chrome DevTools wraps JSON in a fenced block. */
  function pageValue(value) {
    if (typeof value !== "string") return value;
    const m = /```json\n([\s\S]*?)\n```/.exec(value);
    if (!m) return value;
    try { return $.parse(m[1]); } catch (_) { return value; }
  }

  /**
   * Run `fn` through an eval-style MCP tool (one string parameter holding code, like Chrome
   * DevTools' `evaluate_script`). `fn` must be self-contained (it runs elsewhere); `args` are
   * embedded as JSON. The tool is found by exact name, else by search; only its code parameter is sent.
   * @param {string} nameOrQuery a tool name (`server.tool` or short), or words to search for
   * @param {Function|string} fn
   * @param {*} [args] JSON-serialisable
   */
  api.evalTool = async (nameOrQuery, fn, args) => {
    if (typeof fn !== "function" && typeof fn !== "string") {
      throw new TypeError(`api.evalTool(${$.stringify($.String(nameOrQuery ?? ""))}, fn): fn must be a function (or its source as a string), got ${ns.inspect(fn, { depth: 0 })}`);
    }
    const target = await ns.call("api.evalTool", { spec: $.String(nameOrQuery ?? "") });
    let source = typeof fn === "string" ? fn : written(fn);
    if (typeof fn === "function") {
      let embedded;
      try {
        embedded = $.stringify(args === undefined ? null : args);
      } catch (e) {
        throw new TypeError(`api.evalTool(${target.path}): args must be JSON-serialisable (${e.message})`);
      }
      source = `() => {\n  const __args = ${embedded};\n  return (${source})(__args);\n}`;
    }
    return pageValue(await api.callTool(target.server, target.tool, { [target.param]: source }));
  };

  // ---- the mcp-scripting skill: tools.search, tools.describe (tools.call is in mcp.js) ----------

  const reserved = ns.toolsReserved || (ns.toolsReserved = {});
  /**
   * Tools matching a query: `{ items: [{ path, server, name, description }], total, hasMore, nextOffset }`.
   * @param {{query: string, server?: string, limit?: number, offset?: number}} options
   */
  reserved.search = (options = {}) => {
    const o = typeof options === "string" ? { query: options } : options || {};
    return ns.call("tools.search", { query: $.String(o.query ?? ""), server: o.server, limit: o.limit, offset: o.offset });
  };
  /**
   * One tool for writing its call: `{ path, inputTypeScript, inputGuidance, observedOutput: { target, typeScript } }`.
   * @param {{path: string}} options `path` is `server.tool`
   */
  reserved.describe = (options = {}) => {
    const o = typeof options === "string" ? { path: options } : options || {};
    return ns.call("tools.describe", { path: o.path });
  };
})();
