// Unhandled promise rejections, reported like Node: `Promise.reject(new Error("x")); 1` or a tool
// call nobody awaits print "Uncaught (in promise) Error: x" instead of vanishing.
//
// V8 tells embedders about rejections nobody handles, but mini-racer does not pass that on, so the
// global `Promise` becomes a subclass that remembers rejections until a handler is attached
// (`then`, `catch`, `finally` and `await` all call `then`). After each drain, a rejection that
// stayed unhandled through a whole microtask checkpoint is posted as "uncaught" for the cell
// that created the promise. Promises made by the runtime for users (tool calls) are tracked too;
// a native promise of a user's own `async` function is not visible from JS.
(function installRejectionTracking() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const $ = ns.$;
  const NativePromise = $.Promise;
  const NONE = $.Symbol("none");
  const unhandled = new $.Map(); // promise -> {promise, reason, cell}
  const handled = new $.WeakSet(); // promises that got a handler (before or after rejecting)

  function rejected(promise, reason) {
    if (!$.has(handled, promise)) $.mapSet(unhandled, promise, { promise, reason, cell: ns.currentCell() });
  }

  /** A Promise subclass that remembers rejections nobody handles (three of them, see below). */
  function trackingPromise() {
    let species = null;
    const Tracking = class Promise extends NativePromise {
      constructor(executor) {
        let self = null;
        let early = NONE;
        const note = (reason) => { if (self === null) early = reason; else rejected(self, reason); };
        super((resolve, reject) => {
          const rejectAndNote = (reason) => { note(reason); reject(reason); };
          try {
            executor(resolve, rejectAndNote);
          } catch (e) {
            rejectAndNote(e);
          }
        });
        self = this;
        if (early !== NONE) rejected(this, early);
      }

      then(onFulfilled, onRejected) {
        $.add(handled, this); // a handler now exists
        $.mapDelete(unhandled, this);
        // the native then, with this class as the species: `await` of a tool call's promise calls
        // this, and a cell's change to the native prototype or to Symbol.species must not reach it
        if ($.getPrototypeOf(this) === Tracking.prototype) return $.thenAs(this, species, onFulfilled, onRejected);
        return $.then(this, onFulfilled, onRejected); // a cell's own subclass: its own species
      }

      // Promises of async functions are native: they are still promises
      static [Symbol.hasInstance](value) { return value instanceof NativePromise; }
    };
    species = $.speciesOf(Tracking);
    return Tracking;
  }
  // The global one, for cells; and a private one for promises the runtime hands out (tool calls),
  // so a cell that replaces Promise.prototype.then changes its own promises, not the runtime's.
  const Promise = trackingPromise();
  const RuntimePromise = trackingPromise();

  // A forgotten `await`: `const t = mcp.time.now({}); t.datetime` is undefined and `r.slice(…)` "is
  // not a function", saying nothing about a Promise. A tool call's promise stays a native promise of
  // its own class (fast `await`, `instanceof Promise`, inspection), but between its class's prototype
  // and Promise.prototype sits a Proxy whose `get` throws, naming the call, for a string key no
  // promise has. Its `then` and `constructor` (what `await` and Promise.all read) are found before
  // the Proxy, so the hot path never reaches the trap.
  const ToolCallPromise = trackingPromise();
  const calls = new $.WeakMap(); // promise -> how the call was written (`mcp.srv.tool({…})`)
  const PROBES = new $.Set(["inspect", "asymmetricMatch", "nodeType", "$$typeof", "toJSON"]); // libraries' feature tests: undefined, as on any promise
  const NativeProto = NativePromise.prototype;
  const ProxyC = Proxy;
  const missingAwait = (promise, key) => {
    let call = null;
    for (let o = promise; o !== null && call === null; o = $.getPrototypeOf(o)) call = $.get(calls, o) || null;
    call = call || "a tool call";
    const shown = $.test(/^[A-Za-z_$][\w$]*$/, key) ? `.${key}` : `[${$.stringify(key)}]`;
    return new $.TypeError(`this is the Promise of ${call}, not its result (it has no ${shown}): await is missing, e.g. (await ${call})${shown}`);
  };
  Object.setPrototypeOf(ToolCallPromise.prototype, new ProxyC(Object.create(NativeProto), { // (at start-up: before any cell)
    get(target, key, receiver) {
      if (typeof key === "symbol" || key in target || $.has(PROBES, key)) return $.reflectGet(target, key, receiver);
      throw missingAwait(receiver, key);
    },
  }));

  /** A promise for users that follows `promise`, so a rejection nobody handles is reported. */
  ns.tracked = (promise) => new RuntimePromise((resolve, reject) => { $.when(promise, resolve, reject); });
  /** The same for a promise of a box (intrinsics.js: box): users get what is in it. */
  ns.unboxed = (promise) => new RuntimePromise((resolve, reject) => { $.when(promise, (b) => resolve($.unbox(b)), reject); });

  /** `ns.unboxed` for a tool call written as `call` (`mcp.time.now({…})`): reading what a promise lacks says `await` is missing. */
  ns.toolCall = (promise, call) => {
    const p = new ToolCallPromise((resolve, reject) => { $.when(promise, (b) => resolve($.unbox(b)), reject); });
    $.set(calls, p, call);
    return p;
  };

  /** Called by drain(), after the microtask checkpoint: rejections nobody handled in time, oldest first. */
  ns.unhandledRejections = function unhandledRejections() {
    if (!$.mapSize(unhandled)) return [];
    const out = $.mapValues(unhandled);
    $.mapClear(unhandled);
    return out;
  };

  $.defineProperty(globalThis, "Promise", { value: Promise, writable: true, configurable: true, enumerable: false });
})();
