// Helpers agents carry over from the seeds: `api.load(path)` (helper files evaluated like a cell),
// `api.evalTool(nameOrQuery, fn, args, toolArgs)` (functions sent to eval-style tools such as Chrome
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
    await $.pinned(evaluate(prepared.code)); // the file's body (agent.loadRun): a native promise
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
  api.load = async (path) => run((await ns.ask("api.load", { path })).v);
  /** `mcp2repl --load FILE`: the command read the file (the kernel may be elsewhere). */
  agent.loadSource = async (name, source) => run((await ns.ask("api.loadSource", { name, source })).v);

  const own = $.own;
  const IDENT = /^[A-Za-z_$][\w$]*$/;
  /** `{ pageId: 1 }` as a person writes it; a value "…" stays a placeholder. */
  function objectText(o) {
    const keys = $.keys(o);
    if (!keys.length) return "{}";
    const parts = $.map(keys, (k) => `${$.test(IDENT, k) ? k : $.stringify(k)}: ${o[k] === "…" ? "…" : $.stringify(o[k])}`);
    return `{ ${$.join(parts, ", ")} }`;
  }
  /** The call a message shows: `api.evalTool("tool", fn, args, toolArgs)`, trailing parts left out when empty. */
  function shownCall(target, fnText, argsText, toolArgs) {
    let out = `api.evalTool(${$.stringify(target.tool)}, ${fnText}`;
    if (argsText !== undefined || toolArgs !== undefined) out += `, ${argsText === undefined ? "undefined" : argsText}`;
    if (toolArgs !== undefined) out += `, ${objectText(toolArgs)}`;
    return `${out})`;
  }
  const fnShown = (source) => (source.length <= 80 && !$.includes(source, "\n") ? source : "fn");

  /** The tool's other arguments, checked: the required ones besides the code are named in one error, before any call. */
  function checkToolArgs(target, toolArgs, source, args) {
    if (toolArgs === undefined) toolArgs = {};
    if (toolArgs === null || typeof toolArgs !== "object" || $.isArray(toolArgs)) {
      throw new TypeError(`api.evalTool(${target.path}, fn, args, toolArgs): toolArgs are the tool's other arguments, an object like { pageId: 1 }; got ${ns.inspect(toolArgs, { depth: 0 })}`);
    }
    if (own(toolArgs, target.param) !== undefined) {
      throw new TypeError(`api.evalTool(${target.path}): toolArgs cannot hold "${target.param}": api.evalTool sends the function there`);
    }
    const missing = $.filter(target.required, (k) => own(toolArgs, k) === undefined);
    if (missing.length) {
      const given = {};
      const keys = $.keys(toolArgs);
      for (let i = 0; i < keys.length; i++) $.put(given, keys[i], toolArgs[keys[i]]);
      for (let i = 0; i < missing.length; i++) $.put(given, missing[i], "…");
      const names = $.join($.map(missing, (k) => `"${k}"`), ", ");
      const example = shownCall(target, fnShown(source), args === undefined ? undefined : "args", given);
      throw new TypeError(`api.evalTool(${target.path}): the tool also requires ${names}; give the tool's other arguments after the function's args: ${example}`);
    }
    return toolArgs;
  }

  // `X is not defined` from the page, where X is a name the function reads: it ran in the page,
  // where the kernel's variables do not exist. The hint shows the call that passes them.
  const NOT_DEFINED = /(?:^|[^\w$])([A-Za-z_$][\w$]*) is not defined\b/;
  const NO_PARAMS = /^(async\s*)?\(\s*\)\s*=>/;
  function closureHint(e, target, source, args, toolArgs) {
    if (!(e instanceof $.Error) || own(e, "name") !== "ToolError" || typeof own(e, "message") !== "string") return;
    const m = $.exec(NOT_DEFINED, e.message);
    if (m === null) return;
    const name = m[1];
    const escaped = $.replace(name, /\$/g, "\\$");
    if (!$.test(new $.RegExp(`(?:^|[^\\w$.])${escaped}(?![\\w$])`), source)) return; // a name the page's own code read
    let call;
    if (args === undefined && $.test(NO_PARAMS, source) && fnShown(source) !== "fn") {
      call = shownCall(target, $.replace(source, NO_PARAMS, (_, a) => `${a || ""}({ ${name} }) =>`), `{ ${name} }`, toolArgs);
    } else {
      call = shownCall(target, `(args) => … args.${name} …`, args === undefined ? `{ ${name} }` : `{ ...args, ${name} }`, toolArgs);
    }
    $.put(e, "message", `${e.message}\n  hint: the function runs in the page, not in the kernel, so it cannot see the kernel's ${name}; pass values in through args: ${call}`);
  }

  /**
   * Run `fn` in the page (or wherever an eval-style MCP tool runs code: a string parameter for code,
   * like Chrome DevTools' `evaluate_script`). `fn` must be self-contained: it runs elsewhere and sees
   * none of the kernel's variables; `args` (JSON) are its first parameter. `toolArgs` are the tool's
   * other arguments (`{ pageId: 1 }`); an `args` array of element uids there passes the elements
   * after `args`. The result is unwrapped like any call's (fenced JSON included).
   * @param {string} nameOrQuery a tool name (`server.tool` or short), or words to search for
   * @param {Function|string} fn a function, or the source to send as it is
   * @param {*} [args] JSON-serialisable, the function's first parameter
   * @param {{[key: string]: unknown}} [toolArgs] the tool's other arguments
   */
  api.evalTool = async (nameOrQuery, fn, args, toolArgs) => {
    if (typeof fn !== "function" && typeof fn !== "string") {
      throw new TypeError(`api.evalTool(${$.stringify($.String(nameOrQuery ?? ""))}, fn): fn must be a function (or its source as a string), got ${ns.inspect(fn, { depth: 0 })}`);
    }
    const target = (await ns.ask("api.evalTool", { spec: $.String(nameOrQuery ?? "") })).v;
    const text = typeof fn === "string" ? fn : written(fn);
    const rest = checkToolArgs(target, toolArgs, text, args);
    let source = text;
    if (typeof fn === "function") {
      let embedded;
      try {
        embedded = $.stringify(args === undefined ? null : args);
      } catch (e) {
        throw new TypeError(`api.evalTool(${target.path}): args must be JSON-serialisable (${e.message})`);
      }
      source = `(...__elements) => {\n  const __args = ${embedded};\n  return (${text})(__args, ...__elements);\n}`;
    }
    const call = { __proto__: null }; // nothing a cell put on Object.prototype (a toJSON) is sent
    const keys = $.keys(rest);
    for (let i = 0; i < keys.length; i++) call[keys[i]] = rest[keys[i]];
    call[target.param] = source;
    try {
      return await api.callTool(target.server, target.tool, call);
    } catch (e) {
      if (typeof fn === "function") closureHint(e, target, text, args, toolArgs);
      throw e;
    }
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
