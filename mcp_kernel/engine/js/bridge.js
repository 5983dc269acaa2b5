// The JavaScript half of the engine's bridge. Python never calls into V8 synchronously: every
// piece of JS here runs because Python started an `eval_cancelable`, and everything JS wants
// from Python (output, tool calls, timers, a finished cell) is appended to an outbox that
// Python drains with the next eval. See docs/architecture.md, "The bridge".
//
// Script-level `const`s below are lexical globals: reachable by injected code, invisible to
// `Object.keys(globalThis)` and to completion.

/** Interrupt flag: a byte Python sets from any thread; checked by code the rewriter injects. */
const __mk$f = new Uint8Array(new SharedArrayBuffer(8));

/** Thrown by injected checks when the flag is up. */
function __mk$i() {
  const reason = __mk$f[0] === 2 ? "TimeoutError" : "InterruptError";
  const err = new Error(reason === "TimeoutError" ? "Cell time limit reached" : "Execution interrupted");
  err.name = reason;
  throw err;
}

(function installBridge() {
  "use strict";
  if (!globalThis.__mcp2repl) Object.defineProperty(globalThis, "__mcp2repl", { value: {}, writable: true, configurable: true, enumerable: false });
  const ns = globalThis.__mcp2repl;
  ns.flagBuffer = __mk$f.buffer;

  let outbox = [];
  let outboxChars = 0;
  let dropped = 0;
  const OUTBOX_LIMIT = 8 * 1024 * 1024; // output text held between two drains

  /** The cell whose code is running now; output and new timers are attributed to it. */
  let current = "";
  const pending = new Map(); // request id -> {resolve, reject}
  let nextRequest = 1;
  const timers = new Map(); // timer id -> {fn, args, cell, repeat}
  let nextTimer = 1;

  function post(msg) { outbox.push(msg); }

  function postText(name, text) {
    if (outboxChars + text.length > OUTBOX_LIMIT) { dropped += text.length; return; }
    outboxChars += text.length;
    const last = outbox[outbox.length - 1];
    // Coalesce consecutive writes so a chatty loop costs one message, not thousands.
    if (last && last.t === "out" && last.name === name && last.cell === current) last.text += text;
    else post({ t: "out", cell: current, name, text });
  }

  /** Python: everything JS produced since the last drain, as one JSON string ("" if none). */
  ns.drain = function drain() {
    if (dropped) {
      post({ t: "out", cell: current, name: "stderr", text: `[mcp2repl] ${dropped} characters of output were dropped (more than ${OUTBOX_LIMIT} between two flushes)\n` });
      dropped = 0;
    }
    if (!outbox.length) return "";
    const batch = outbox;
    outbox = [];
    outboxChars = 0;
    return JSON.stringify(batch);
  };

  // ---- cells -------------------------------------------------------------------------

  function describeError(e) {
    if (e instanceof Error || (e && typeof e === "object" && typeof e.stack === "string" && typeof e.message === "string")) {
      let name = "Error";
      let message = "";
      let stack = "";
      try { name = String(e.name || (e.constructor && e.constructor.name) || "Error"); } catch (_) { /* hostile getter */ }
      try { message = String(e.message); } catch (_) { /* hostile getter */ }
      try { stack = String(e.stack || ""); } catch (_) { /* hostile getter */ }
      const extra = {};
      for (const k of ["server", "tool", "code", "data"]) {
        try {
          const d = Object.getOwnPropertyDescriptor(e, k);
          if (d && "value" in d && d.value !== undefined) extra[k] = typeof d.value === "string" ? d.value : ns.inspect(d.value, { depth: 2 });
        } catch (_) { /* ignore */ }
      }
      return { name, message, stack, extra };
    }
    return { name: "Uncaught", message: ns.inspect(e, { depth: 2 }), stack: "", extra: {} };
  }
  ns.describeError = describeError;

  /** MIME bundle for a cell result: user-defined first, then text/plain and JSON. */
  function bundle(value) {
    const custom = value !== null && (typeof value === "object" || typeof value === "function")
      ? value[Symbol.for("Jupyter.display")] : undefined;
    if (typeof custom === "function") {
      const b = custom.call(value);
      if (b === null) return null; // the value chose to show nothing (e.g. an api.print envelope)
      if (b && typeof b === "object") {
        const data = {};
        for (const [mime, v] of Object.entries(b)) {
          if (typeof v === "string") data[mime] = v;
          else if (/json$/.test(mime)) data[mime] = JSON.parse(JSON.stringify(v));
        }
        if (!("text/plain" in data)) data["text/plain"] = ns.inspect(value);
        return data;
      }
    }
    const rich = typeof ns.richBundle === "function" ? ns.richBundle(value) : undefined;
    if (rich) return rich;
    const data = { "text/plain": ns.inspect(value) };
    const json = ns.jsonValue(value);
    if (json !== undefined) data["application/json"] = JSON.parse(json);
    return data;
  }

  /** Characters a bundle puts into the notebook (its text and its JSON), to decide on fitting. */
  function bundleSize(data) {
    let n = 0;
    for (const [mime, v] of Object.entries(data)) {
      if (typeof v === "string") n = Math.max(n, mime.startsWith("image/") ? 0 : v.length);
      else n = Math.max(n, (ns.jsonValue(v, ns.maxOutputChars * 4) || "x".repeat(ns.maxOutputChars + 1)).length);
    }
    return n;
  }
  ns.bundle = bundle;

  /** Start a rewritten cell; its outcome is posted as a "done" message. */
  ns.run = function run(cell, body) {
    current = cell;
    const finish = async (ok, value) => {
      try {
        if (ns.pendingOutput && ns.pendingOutput.size) await Promise.allSettled([...ns.pendingOutput]); // emit() first
        if (!ok) return post({ t: "done", cell, ok: false, error: describeError(value) });
        let data = value === undefined ? null : bundle(value);
        if (data && bundleSize(data) > (ns.maxOutputChars || Infinity) && typeof ns.fitResult === "function") {
          data = await ns.fitResult(value); // too big for a notebook: a fitted view, the rest as an artifact
        }
        post({ t: "done", cell, ok: true, data });
      } catch (e) {
        // Showing the value failed (e.g. a throwing Jupyter.display); report that instead.
        post({ t: "done", cell, ok: false, error: describeError(e) });
      }
    };
    body().then((v) => finish(true, v), (e) => finish(false, e));
  };

  // ---- calls into Python ---------------------------------------------------------------

  /** Call a Python-side handler; resolves with its JSON result. */
  ns.call = function call(name, args) {
    let payload;
    try {
      payload = JSON.stringify(args === undefined ? null : args, (k, v) => {
        if (typeof v === "bigint") throw new TypeError(`Cannot send a BigInt (${v}n) to ${name}: convert it to a Number or String first`);
        return v;
      });
    } catch (e) {
      return Promise.reject(e);
    }
    // The stack of the call site, so a failure points at the user's line, not at settle().
    const site = {};
    Error.captureStackTrace(site, call);
    return new Promise((resolve, reject) => {
      const id = nextRequest++;
      pending.set(id, { resolve, reject, site });
      post({ t: "req", id, cell: current, name, args: payload });
    });
  };

  function makeError(spec, site) {
    const err = new Error(spec.message);
    err.name = spec.name || "Error";
    for (const [k, v] of Object.entries(spec.extra || {})) err[k] = v;
    if (site && typeof site.stack === "string") {
      err.stack = `${err.name}: ${err.message}\n` + site.stack.split("\n").slice(1).join("\n");
    }
    return err;
  }

  /** Python: settle requests, `[[id, ok, jsonText], …]`, on behalf of `cell`. */
  ns.settle = function settle(cell, batch) {
    current = cell;
    for (const [id, ok, text] of batch) {
      const p = pending.get(id);
      if (!p) continue;
      pending.delete(id);
      if (ok) p.resolve(text === "" ? undefined : JSON.parse(text));
      else p.reject(makeError(JSON.parse(text), p.site));
    }
  };

  /** Python: stop everything in flight (interrupt, timeout, shutdown). */
  ns.abort = function abort(name, message) {
    const reasons = Array.from(pending.values());
    pending.clear();
    timers.clear();
    for (const p of reasons) p.reject(makeError({ name, message }, p.site));
  };

  // ---- timers (Python keeps the clock; JS keeps the callbacks) ----------------------------

  function addTimer(fn, ms, args, repeat) {
    if (typeof fn !== "function") throw new TypeError(`The "callback" argument must be of type function. Received ${ns.inspect(fn)}`);
    const id = nextTimer++;
    const delay = Math.max(0, Number(ms) || 0);
    timers.set(id, { fn, args, cell: current, repeat });
    post({ t: "timer", id, ms: delay, repeat, cell: current });
    return id;
  }
  function clearTimer(id) {
    if (timers.delete(Number(id))) post({ t: "clear", id: Number(id) });
  }

  /** Python: a timer is due. */
  ns.fire = function fire(id) {
    const t = timers.get(id);
    if (!t) return;
    if (!t.repeat) timers.delete(id);
    current = t.cell;
    try {
      Reflect.apply(t.fn, undefined, t.args);
    } catch (e) {
      post({ t: "uncaught", cell: t.cell, error: describeError(e) });
    }
  };

  // mini-racer's own setTimeout polyfill is a non-configurable `var`: overwrite those in place.
  const define = (name, value) => {
    const d = Object.getOwnPropertyDescriptor(globalThis, name);
    if (d && !d.configurable) globalThis[name] = value;
    else Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  };
  define("setTimeout", (fn, ms, ...args) => addTimer(fn, ms, args, false));
  define("setInterval", (fn, ms, ...args) => addTimer(fn, Math.max(1, Number(ms) || 0), args, true));
  define("setImmediate", (fn, ...args) => addTimer(fn, 0, args, false));
  define("clearTimeout", clearTimer);
  define("clearInterval", clearTimer);
  define("clearImmediate", clearTimer);
  define("sleep", (ms) => new Promise((resolve) => addTimer(resolve, ms, [], false)));
  // performance.now(): bare V8 has no high-resolution clock; Date.now() is the best there is.
  const timeOrigin = Date.now();
  define("performance", { timeOrigin, now: () => Date.now() - timeOrigin });
  define("reportError", (e) => post({ t: "uncaught", cell: current, error: describeError(e) }));

  // ---- console ------------------------------------------------------------------------

  let groupIndent = "";
  const counts = new Map();
  const clocks = new Map();
  function write(name, args) {
    let text = ns.format(...args);
    if (groupIndent) text = text.split("\n").map((l) => groupIndent + l).join("\n");
    postText(name, text + "\n");
  }
  const stdout = (...args) => write("stdout", args);
  const stderr = (...args) => write("stderr", args);
  const consoleObject = {
    log: stdout, info: stdout, debug: stdout,
    warn: stderr, error: stderr,
    trace: (...args) => {
      const stack = String(new Error().stack || "").split("\n").slice(2).join("\n");
      write("stderr", ["Trace" + (args.length ? ": " + ns.format(...args) : "") + "\n" + stack]);
    },
    dir: (value, options) => write("stdout", [ns.inspect(value, options || {})]),
    table: (data) => write("stdout", [ns.table ? ns.table(data) : ns.inspect(data)]),
    assert: (cond, ...args) => { if (!cond) write("stderr", ["Assertion failed" + (args.length ? ": " + ns.format(...args) : "")]); },
    group: (...args) => { if (args.length) stdout(...args); groupIndent += "  "; },
    groupEnd: () => { groupIndent = groupIndent.slice(2); },
    count: (label = "default") => { const n = (counts.get(label) || 0) + 1; counts.set(label, n); stdout(`${label}: ${n}`); },
    countReset: (label = "default") => counts.delete(label),
    time: (label = "default") => clocks.set(label, Date.now()),
    timeLog: (label = "default", ...args) => stdout(`${label}: ${Date.now() - (clocks.get(label) || Date.now())}ms`, ...args),
    timeEnd: (label = "default") => { stdout(`${label}: ${Date.now() - (clocks.get(label) || Date.now())}ms`); clocks.delete(label); },
  };
  consoleObject.groupCollapsed = consoleObject.group;
  define("console", consoleObject);

  // ---- display ------------------------------------------------------------------------

  /** Publish a MIME bundle now (display_data), or update an earlier one by id. */
  ns.display = function display(data, metadata, displayId, update) {
    post({ t: "display", cell: current, data, metadata: metadata || {}, id: displayId || null, update: !!update });
  };

  /** Clear the current cell's output (wait: only when the next output arrives, to avoid flicker). */
  ns.clearOutput = function clearOutput(wait) {
    post({ t: "clear_output", cell: current, wait: !!wait });
  };

})();
