// The JavaScript half of the engine's bridge. Python never calls into V8 synchronously: every
// piece of JS here runs because Python started an eval or called `receive` with a batch of data,
// and everything JS wants from Python (output, calls, timers, a finished cell) is appended to an
// outbox that Python drains after each of those.
//
// Outbox messages (JSON objects; `cell` names the cell the output or request belongs to):
//   out          {t, cell, name: "stdout"|"stderr", text}       console output (consecutive writes merged)
//   display      {t, cell, data, metadata, id, update}          a MIME bundle, or an update of one by id
//   clear_output {t, cell, wait}
//   req          {t, id, cell, name, args, apart?}               call a Python handler; settled by id; `apart`:
//                                                                 keys of args whose big strings Python takes with `take`
//   note         {t, cell, name, args}                           tell a Python handler; no answer
//   timer        {t, id, cell, ms, repeat}                       arm a timer (Python keeps the clock)
//   clear        {t, id}                                         disarm it
//   done         {t, cell, ok, data | error}                     a cell finished: its MIME bundle or error
//   uncaught     {t, cell, error}                                an error nobody awaited (timer callback…)
// Inbound batches (`receive`, with `this` = JSON text {cell, items, texts}) hold items:
//   ["settle", id, ok, value?, paths?]   resolve (ok) or reject (value = {name, message, extra}) request id;
//                                `paths` (key lists into value) take the batch's stashed strings, in order
//   ["fire", id]                 a timer is due
//   ["data", key, value]         context data (the tool catalog, limits…) for the receiver of `key`
//   ["abort", name, message]     reject every pending request and drop every timer (interrupts)
//   ["forget", [names]]          set these globals to undefined (a cell stopped for running out of memory)
// A batch holds items of one cell only, so output produced while handling it is that cell's.
//
// Script-level `const`s below are lexical globals: reachable by injected code, invisible to
// `Object.keys(globalThis)` and to completion.

// Interrupt flag `__mk$f` (made by buffers.js): a byte Python sets from any thread, checked by code the
// rewriter injects. 1 interrupt, 2 time limit, 3 a look at memory (engine/memory.py), 4 memory limit.
/** Is the flag a stop (not 0, not a request to look at memory)? */
const __mk$s = () => __mk$f[0] !== 0 && __mk$f[0] !== 3;

/** Called by injected checks when the flag is up: a look at memory goes on if Python allows, a stop
 * throws the error the cell ends with. The runtime's own loops and a cell's end stop through it too. */
const __mk$i = (($, E, R) => function __mk$i() {
  if (__mk$f[0] === 3 && __mk$M()) return;
  if (__mk$f[0] === 4) throw new R(`Memory limit reached: array buffers held more than the ${(__mk$L() / 1048576) | 0} MB limit`);
  const timeout = __mk$f[0] === 2;
  const err = new E(timeout ? "Cell time limit reached" : "Execution interrupted");
  $.defineProperty(err, "name", $.data(timeout ? "TimeoutError" : "InterruptError", true)); // a setter a cell put on Error.prototype is not consulted
  throw err;
})(globalThis.__mcp2repl.$, Error, RangeError);

/** What a rewritten cell returns (engine/rewrite.py: `return __mk$v((value))`): the value in a box
 * with no prototype, so the cell's completion looks up no `then` a cell put on Object.prototype. */
const __mk$v = globalThis.__mcp2repl.$.box;

(function installBridge() {
  "use strict";
  const ns = globalThis.__mcp2repl; // made and locked by intrinsics.js
  const $ = ns.$; // built-ins captured before any cell ran: a cell that replaces one changes only its own code
  const apart = ns.apart; // big strings beside the JSON (apart.js)
  ns.flagBuffer = __mk$f.buffer;

  const { stringify, parse, String } = $;
  const quote = (s) => stringify(String(s));
  const ErrorCtor = $.Error;
  const captureStack = $.captureStackTrace;
  const PromiseCtor = $.Promise;

  /** JSON text to splice into a message as it is (e.g. a bundle's application/json, made once). */
  const RawJson = ns.RawJson = class RawJson { text = ""; constructor(text) { this.text = text; } }; // a field: defined, never set through a prototype
  /** A MIME bundle as JSON text; RawJson values go in unchanged. */
  function bundleText(data) {
    let out = "{";
    const keys = $.keys(data);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      const v = data[k];
      if (v === undefined) continue;
      out += (out.length > 1 ? "," : "") + quote(k) + ":" + (v instanceof RawJson ? v.text : stringify(v));
    }
    return out + "}";
  }

  /** Outgoing messages: JSON texts, joined into one array by drain(). */
  let outbox = [];
  let lastOut = null; // the last "out" message, still an object so consecutive writes merge
  let outboxChars = 0;
  let dropped = 0;
  const OUTBOX_LIMIT = 8 * 1024 * 1024; // output text held between two drains

  /** The cell whose code is running now; output and new timers are attributed to it. */
  let current = "";
  const pending = new $.Map(); // request id -> {resolve, reject, site}
  let nextRequest = 1;
  const timers = new $.Map(); // timer id -> {fn, args, cell, repeat}
  let nextTimer = 1;
  const dataReceivers = new $.Map(); // key -> function(value)

  function post(text) { outbox[outbox.length] = text; lastOut = null; }

  function postText(name, text) {
    if (outboxChars + text.length > OUTBOX_LIMIT) { dropped += text.length; return; }
    outboxChars += text.length;
    // Coalesce consecutive writes so a chatty loop costs one message, not thousands.
    if (lastOut && lastOut.name === name && lastOut.cell === current) { lastOut.text += text; return; }
    lastOut = { t: "out", cell: current, name, text };
    outbox[outbox.length] = lastOut;
  }

  /** Is the running cell being stopped (interrupt or time limit)? Code that catches every error
   * (inspect.js) lets those through. */
  ns.stopping = __mk$s;
  /** For the runtime's own long loops (formatting a big value), which no injected check reaches. */
  ns.checkStop = () => { if (__mk$f[0]) __mk$i(); };

  /** The cell whose code is running now (promises.js notes it for rejections). */
  ns.currentCell = () => current;

  /** Console output of the current cell (console.js), `name` "stdout" or "stderr". */
  ns.output = postText;

  /** A runtime hint on the current cell's stderr ("[mcp2repl] …"), in order with its console output. */
  ns.hint = (text) => postText("stderr", `[mcp2repl] ${text}\n`);

  /** Python: everything JS produced since the last drain, as one JSON text ("" if none). */
  ns.drain = function drain() {
    const unhandled = ns.unhandledRejections ? ns.unhandledRejections() : [];
    for (let i = 0; i < unhandled.length; i++) {
      post(`{"t":"uncaught","cell":${quote(unhandled[i].cell)},"promise":true,"error":${errorText(unhandled[i].reason)}}`);
    }
    if (dropped) {
      outbox[outbox.length] = { t: "out", cell: current, name: "stderr", text: `[mcp2repl] ${dropped} characters of output were dropped (more than ${OUTBOX_LIMIT} between two flushes)\n` };
      dropped = 0;
    }
    if (!outbox.length) return "";
    const batch = outbox;
    outbox = []; lastOut = null; outboxChars = 0; // a fresh outbox
    let text = "[";
    for (let i = 0; i < batch.length; i++) {
      const m = batch[i];
      if (i) text += ",";
      text += typeof m === "string" ? m : `{"t":"out","cell":${quote(m.cell)},"name":${quote(m.name)},"text":${quote(m.text)}}`;
    }
    return text + "]";
  };

  // ---- cells -------------------------------------------------------------------------

  const describeError = ns.describeError; // errors.js
  const errorText = (e) => stringify(describeError(e));

  /** The MIME bundle of a cell result, boxed. The display layer replaces this (setResultFormatter). */
  let formatResult = async (value) => {
    const data = { "text/plain": ns.inspect(value) };
    const json = ns.jsonValue(value);
    if (json !== undefined) data["application/json"] = new RawJson(json);
    return $.box(data);
  };
  /** Install `fn(value) -> Promise<box of bundle | null>` as the cell result formatter (boxed, see
   * intrinsics.js: a bundle is a plain object, and its `then` is a cell's to set). */
  ns.setResultFormatter = (fn) => { formatResult = fn; };

  /** Promises a cell waits for before it reports done (e.g. emit() output still being made). */
  const holds = new $.Set(); // of pinned promises that resolve with undefined when theirs settles
  ns.hold = (promise) => {
    let release;
    const held = $.pinned(new PromiseCtor((resolve) => { release = resolve; }));
    $.setAdd(holds, held);
    const done = () => { $.setDelete(holds, held); release(); };
    $.when(promise, done, done);
  };

  /** Start a rewritten cell; its outcome is posted as a "done" message. `forget`: past cells' maps to drop. */
  ns.run = function run(cell, body, map, forget) {
    current = cell;
    if (forget) ns.forgetCells(forget);
    ns.mapCell(cell, map);
    const finish = async (ok, value) => {
      try {
        const waits = $.setValues(holds);
        for (let i = 0; i < waits.length; i++) {
          try { await waits[i]; } catch (_) { /* its own error is reported where it happened */ }
        }
        if (!ok) return post(`{"t":"done","cell":${quote(cell)},"ok":false,"error":${errorText(value)}}`);
        const data = value === undefined ? null : (await $.pinned(formatResult(value))).v;
        // Stopped while its value was being shown (formatting runs no injected checks): not a success.
        if (__mk$s()) __mk$i(); // throws the stop's error
        post(`{"t":"done","cell":${quote(cell)},"ok":true,"data":${data ? bundleText(data) : "null"}}`);
      } catch (e) {
        // Showing the value failed (e.g. a throwing Jupyter.display); report that instead.
        post(`{"t":"done","cell":${quote(cell)},"ok":false,"error":${errorText(e)}}`);
      }
    };
    // The rewritten body returns its value boxed (engine/rewrite.py): its completion looks up no `then`.
    $.when(body(), (r) => $.follow($.unbox(r), (v) => finish(true, v), (e) => finish(false, e)), (e) => finish(false, e));
  };

  // ---- calls into Python ---------------------------------------------------------------

  // Python reads every message with a recursive parser; keep what JS sends well inside its limit.
  const MAX_DEPTH = 200;
  /** Is `value` nested deeper than `limit` arrays/objects? Walks containers only, without recursion. */
  function tooDeep(value, limit) {
    if (value === null || typeof value !== "object") return false;
    const stack = [value, 1];
    while (stack.length) {
      const depth = $.pop(stack);
      const v = $.pop(stack);
      if (depth > limit) return true;
      const keys = $.isArray(v) ? null : $.keys(v);
      const n = keys === null ? v.length : keys.length;
      for (let i = 0; i < n; i++) {
        const child = keys === null ? v[i] : v[keys[i]];
        if (child !== null && typeof child === "object") { stack[stack.length] = child; stack[stack.length] = depth + 1; }
      }
    }
    return false;
  }
  ns.tooDeep = (value) => tooDeep(value, MAX_DEPTH);
  ns.maxDepth = MAX_DEPTH;

  function serialize(name, args) {
    if (tooDeep(args, MAX_DEPTH)) throw new $.TypeError(`Cannot send a value nested more than ${MAX_DEPTH} levels deep to ${name}`);
    const text = stringify(args === undefined ? null : args, (k, v) => {
      if (typeof v === "bigint") throw new TypeError(`Cannot send a BigInt (${v}n) to ${name}: convert it to a Number or String first`);
      return v;
    });
    return text === undefined ? "null" : text; // a function or a symbol has no JSON form
  }

  /** Call a Python-side handler; resolves with its result. */
  ns.call = function call(name, args) { return request(name, args, false, call); };
  /** The same for the runtime's own use: a pinned promise (safe to `await`) of a box of the result
   * (`.v`; `.site`: the call site's stack holder, for ns.restack). */
  ns.ask = function ask(name, args) { return request(name, args, true, ask); };

  function request(name, args, boxed, caller) {
    const id = nextRequest++;
    let payload;
    let sent = null; // big strings set aside (apart.js), mostly none
    try {
      sent = apart.setAside(id, args);
      payload = serialize(name, sent === null ? args : sent.args);
    } catch (e) {
      if (sent !== null) apart.forget(sent.keys);
      return $.reject(e);
    }
    // The stack of the call site, so a failure points at the user's line, not at receive().
    const site = { __proto__: null };
    captureStack(site, caller);
    const promise = new PromiseCtor((resolve, reject) => {
      $.mapSet(pending, id, { resolve, reject, site, boxed });
      post(`{"t":"req","id":${id},"cell":${quote(current)},"name":${quote(name)},"args":${payload}${sent === null ? "" : sent.apart}}`);
    });
    return boxed ? $.pinned(promise) : promise;
  }

  /** Tell a Python handler something; nothing comes back. */
  ns.notify = function notify(name, args) {
    post(`{"t":"note","cell":${quote(current)},"name":${quote(name)},"args":${serialize(name, args)}}`);
  };

  // (fields are defined, not assigned: a setter or getter a cell put on a prototype must not intercept them)
  function makeError(spec, site) {
    const err = new ErrorCtor($.own(spec, "message"));
    $.defineProperty(err, "name", $.data($.own(spec, "name") || "Error", true));
    const extra = $.entries($.own(spec, "extra") || {});
    for (let i = 0; i < extra.length; i++) $.defineProperty(err, extra[i][0], $.data(extra[i][1], true));
    return restack(err, site);
  }

  /** `err` with the frames of `site` (a request's call site) as its stack: an error made after the
   * answer came (a tool's error) points at the user's line, not at the runtime that made it. */
  function restack(err, site) {
    let stack;
    try { stack = site && site.stack; } catch (_) { /* a cell's Error.prepareStackTrace threw */ }
    if (typeof stack === "string") {
      err.stack = `${err.name}: ${err.message}\n` + $.join($.slice($.split(stack, "\n"), 1), "\n"); // its own accessor
    }
    return err;
  }
  ns.restack = restack;

  function abort(name, message) {
    const reasons = $.mapValues(pending);
    $.mapClear(pending);
    $.mapClear(timers);
    apart.clear();
    for (let i = 0; i < reasons.length; i++) reasons[i].reject(makeError({ name, message, extra: null }, reasons[i].site));
  }

  /** Register the receiver of context data `key` (called now if the data already came). */
  const data = new $.Map();
  ns.onData = function onData(key, fn) {
    $.mapSet(dataReceivers, key, fn);
    if ($.mapHas(data, key)) fn($.mapGet(data, key));
  };

  /** Python: a batch of inbound items for one cell; `this` is its JSON text (see the table above). */
  ns.receive = function receive() {
    const batch = parse(this);
    current = batch.cell;
    const items = batch.items;
    const texts = apart.stashed($.own(batch, "texts"));
    let used = 0;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      try {
        const kind = item[0];
        if (kind === "settle") {
          const p = $.mapGet(pending, item[1]);
          if (!p) continue;
          $.mapDelete(pending, item[1]);
          if (item.length > 4 && item[4]) used = apart.place(item[3], item[4], texts, used);
          const value = item.length > 3 ? item[3] : undefined;
          if (!item[2]) p.reject(makeError(value, p.site));
          else if (p.boxed) {
            const box = $.box(value);
            box.site = p.site; // for an error the runtime makes from the answer (ns.restack)
            p.resolve(box);
          } else p.resolve(value);
        } else if (kind === "fire") {
          fire(item[1]);
        } else if (kind === "data") {
          $.mapSet(data, item[1], item[2]);
          const fn = $.mapGet(dataReceivers, item[1]);
          if (fn) fn(item[2]);
        } else if (kind === "abort") {
          abort(item[1], item[2]);
        } else if (kind === "forget") {
          // after an out-of-memory stop: the cell's own globals may hold what filled the heap
          const names = item[1];
          for (let k = 0; k < names.length; k++) {
            try { globalThis[names[k]] = undefined; } catch (_) { /* a non-writable global stays */ }
          }
        }
      } catch (e) {
        post(`{"t":"uncaught","cell":${quote(current)},"error":${errorText(e)}}`);
      }
    }
  };

  // ---- timers (Python keeps the clock; JS keeps the callbacks) ----------------------------

  const MAX_DELAY = 2147483647; // what fits in 32 bits, as in Node and browsers
  /** A delay as Node takes it: missing, negative or NaN is 0; beyond 32 bits is 1 ms, with a warning. */
  function delayOf(ms) {
    const delay = $.Number(ms);
    if (delay > MAX_DELAY) {
      postText("stderr", `TimeoutOverflowWarning: ${delay} does not fit into a 32-bit signed integer.\nTimeout duration was set to 1.\n`);
      return 1;
    }
    return delay >= 0 ? delay : 0;
  }

  function addTimer(fn, ms, args, repeat) {
    if (typeof fn !== "function") throw new $.TypeError(`The "callback" argument must be of type function. Received ${ns.inspect(fn)}`);
    const id = nextTimer++;
    const delay = repeat ? $.max(1, delayOf(ms)) : delayOf(ms);
    $.mapSet(timers, id, { fn, args, cell: current, repeat });
    post(`{"t":"timer","id":${id},"cell":${quote(current)},"ms":${stringify(delay)},"repeat":${repeat ? "true" : "false"}}`);
    return id;
  }
  function clearTimer(id) {
    if ($.mapDelete(timers, $.Number(id))) post(`{"t":"clear","id":${stringify($.Number(id))}}`);
  }

  function fire(id) {
    const t = $.mapGet(timers, id);
    if (!t) return;
    if (!t.repeat) $.mapDelete(timers, id);
    current = t.cell;
    if (__mk$s()) return; // interrupted: the cell is being stopped
    try {
      $.apply(t.fn, undefined, t.args);
    } catch (e) {
      post(`{"t":"uncaught","cell":${quote(t.cell)},"error":${errorText(e)}}`);
    }
  }

  // mini-racer's own setTimeout polyfill is a non-configurable `var`: overwrite those in place.
  const define = (name, value) => {
    const d = $.getOwnPropertyDescriptor(globalThis, name);
    if (d && !d.configurable) globalThis[name] = value;
    else $.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  };
  define("setTimeout", (fn, ms, ...args) => addTimer(fn, ms, args, false));
  define("setInterval", (fn, ms, ...args) => addTimer(fn, ms, args, true));
  define("setImmediate", (fn, ...args) => addTimer(fn, 0, args, false));
  define("clearTimeout", clearTimer);
  define("clearInterval", clearTimer);
  define("clearImmediate", clearTimer);
  // a runtime promise (promises.js), so `await sleep(ms)` works whatever a cell did to Promise.prototype
  define("sleep", (ms) => ns.tracked(new PromiseCtor((resolve) => addTimer(resolve, ms, [], false))));
  // performance.now(): bare V8 has no high-resolution clock; Date.now() is the best there is.
  const timeOrigin = $.now();
  define("performance", { timeOrigin, now: () => $.now() - timeOrigin });
  define("reportError", (e) => post(`{"t":"uncaught","cell":${quote(current)},"error":${errorText(e)}}`));

  // ---- display ------------------------------------------------------------------------

  /** Publish a MIME bundle now (display_data), or update an earlier one by id. */
  ns.display = function display(bundle, metadata, displayId, update) {
    if (tooDeep(bundle, MAX_DEPTH) || tooDeep(metadata, MAX_DEPTH)) {
      throw new $.TypeError(`Cannot display a bundle nested more than ${MAX_DEPTH} levels deep`);
    }
    post(`{"t":"display","cell":${quote(current)},"data":${bundleText(bundle)},"metadata":${stringify(metadata || {})},` +
      `"id":${displayId ? quote(displayId) : "null"},"update":${update ? "true" : "false"}}`);
  };

  /** Clear the current cell's output (wait: only when the next output arrives, to avoid flicker). */
  ns.clearOutput = function clearOutput(wait) {
    post(`{"t":"clear_output","cell":${quote(current)},"wait":${wait ? "true" : "false"}}`);
  };
})();
