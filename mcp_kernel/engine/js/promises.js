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

  /** A Promise subclass that remembers rejections nobody handles (two of them, see below). */
  function trackingPromise() {
    return class Promise extends NativePromise {
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
        return super.then(onFulfilled, onRejected);
      }

      // Promises of async functions are native: they are still promises
      static [Symbol.hasInstance](value) { return value instanceof NativePromise; }
    };
  }
  // The global one, for cells; and a private one for promises the runtime hands out (tool calls),
  // so a cell that replaces Promise.prototype.then changes its own promises, not the runtime's.
  const Promise = trackingPromise();
  const RuntimePromise = trackingPromise();

  /** A promise for users that follows `promise`, so a rejection nobody handles is reported. */
  ns.tracked = (promise) => new RuntimePromise((resolve, reject) => { $.then(promise, resolve, reject); });

  /** Called by drain(), after the microtask checkpoint: rejections nobody handled in time, oldest first. */
  ns.unhandledRejections = function unhandledRejections() {
    if (!$.mapSize(unhandled)) return [];
    const out = $.mapValues(unhandled);
    $.mapClear(unhandled);
    return out;
  };

  $.defineProperty(globalThis, "Promise", { value: Promise, writable: true, configurable: true, enumerable: false });
})();
