// api.plan(fn): run fn with the tool calls that may write recorded instead of sent (reads run),
// then approve them once and apply exactly those. The calls are kept in Python (api/plans.py);
// a plan value here holds its id and a frozen copy for reading, so nothing a cell does to it
// changes what runs. Loaded after mcp.js (api.unwrap, ns.toolErrorMessage).
(function installPlans() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const $ = ns.$; // built-ins captured before any cell ran (intrinsics.js)
  const api = ns.api;
  const own = $.own;
  const define = (obj, name, value, enumerable) => $.defineProperty(obj, name, { __proto__: null, value, enumerable: !!enumerable, writable: false, configurable: false });

  function frozen(v) {
    if (v === null || typeof v !== "object") return v;
    const keys = $.keys(v);
    for (let i = 0; i < keys.length; i++) frozen(v[keys[i]]);
    return $.freeze(v);
  }

  /** One stored call's outcome as `plan.apply` returns it: `{ok: true, data}` or `{ok: false, error: {code, message}}`. */
  function outcome(item) {
    const reply = own(item, "reply");
    if (reply === undefined) return { ok: false, error: own(item, "error") };
    const result = reply.result;
    if (own(result, "isError")) return { ok: false, error: { code: "tool_error", message: ns.toolErrorMessage(result) } };
    return { ok: true, data: api.unwrap(result) };
  }

  // A plan shows its id, size and summary; its JSON (api.print, an artifact) has its state and calls too.
  class Plan {
    toJSON() { return { plan: this.id, state: this.state, size: this.size, summary: this.summary, calls: this.calls }; }
  }
  const stateOf = new WeakMap();
  $.defineProperty(Plan.prototype, "state", { __proto__: null, get() { return $.get(stateOf, this) || "unknown"; }, enumerable: false, configurable: false });
  /**
   * Ask once (the plan's summary), then run exactly its calls, in order. Resolves with one
   * `{ok: true, data} | {ok: false, error: {code, message}}` per call; after a failure the rest
   * are `{ok: false, error: {code: "not_run"}}` unless `continueOnError`. Rejects with code
   * `declined` when the person says no (nothing ran); a plan runs once.
   * @param {{continueOnError?: boolean}} [options]
   * @returns {Promise<({ok: true, data: any} | {ok: false, error: {code: string, message: string}})[]>}
   */
  const apply = async function apply(options) {
    const plan = this;
    const id = $.get(ids, plan);
    if (id === undefined) throw new TypeError("plan.apply(): call it on a plan that api.plan returned");
    const continueOnError = !!(options && own(options, "continueOnError"));
    let items;
    try {
      items = (await ns.ask("api.plan.apply", { id, continueOnError })).v;
    } catch (e) {
      if (e && e.code === "declined") $.set(stateOf, plan, "declined");
      if (e && e.code === "already_applied" && $.get(stateOf, plan) === "ready") $.set(stateOf, plan, "applied");
      throw e;
    }
    $.set(stateOf, plan, "applied");
    return $.map(items, outcome);
  };
  define(Plan.prototype, "apply", apply);
  const ids = new WeakMap();

  async function makePlan(fn) {
    if (typeof fn !== "function") throw new TypeError(`api.plan(fn) expects a function whose tool calls are planned, like api.plan(async () => { … }); got ${ns.inspect(fn, { depth: 0 })}`);
    const id = (await ns.ask("api.plan.begin", {})).v.id;
    try {
      const ran = fn();
      await $.pinned(new $.Promise((resolve, reject) => $.follow(ran, () => resolve(undefined), reject)));
    } catch (e) {
      await ns.ask("api.plan.end", { id, discard: true });
      throw e;
    }
    const made = (await ns.ask("api.plan.end", { id })).v;
    const p = new Plan();
    define(p, "id", made.id, true);
    define(p, "size", made.calls.length, true);
    define(p, "summary", frozen(made.summary), true);
    define(p, "calls", frozen(made.calls), false); // readable, not shown: the summary says it in a few lines
    $.set(ids, p, made.id);
    $.set(stateOf, p, "ready");
    ns.compactForm(p, () => ({ plan: p.id, state: p.state, size: p.size, summary: p.summary })); // api.print: no call list
    return $.box($.freeze(p));
  }
  /**
   * Plan the writes of `fn` instead of making them: while `fn` runs, every tool call that may
   * write (not annotated readOnlyHint) is recorded and answers `{planned: true, server, tool,
   * index}`; read-only tools run. Calls this step makes while `fn` runs are recorded, from any
   * of its code (not only fn's own). The plan: `plan.calls` (`{server, tool, args}` in order),
   * `plan.summary` (count per tool, the first arguments), `plan.apply()`; keep it in a global to
   * apply in a later step, save it with api.saveArtifact (its JSON).
   * @param {() => any} fn usually `async () => { … }`
   * @returns {Promise<{id: string, calls: {server: string, tool: string, args: object}[], summary: {tool: string, count: number, first: object}[], state: string, apply(options?: {continueOnError?: boolean}): Promise<({ok: true, data: any} | {ok: false, error: {code: string, message: string}})[]>}>}
   * @example const plan = await api.plan(async () => { for (const k of keys) await mcp.ledger.put({ key: k, value: 1 }) })
   */
  api.plan = (fn) => ns.unboxed(makePlan(fn));
})();
