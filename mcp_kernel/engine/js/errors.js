// How a thrown value crosses to Python (engine/errors.py reads it): an Error's name, message and
// stack, plus the fields tool errors carry; anything else thrown, inspected. Never runs more of the
// value's code than reading those fields, and a getter that throws only leaves its field out.
(function installErrors() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const $ = ns.$; // built-ins captured before any cell ran (intrinsics.js)

  /** `{name, message, stack, extra}` of a thrown value. */
  function describeError(e) {
    let errorLike = false;
    try {
      errorLike = e instanceof $.Error || (e && typeof e === "object" && typeof e.stack === "string" && typeof e.message === "string");
    } catch (_) { /* a Proxy whose traps throw: shown as a value */ }
    if (errorLike) {
      let name = "Error";
      let message = "";
      let stack = "";
      try { name = $.String(e.name || (e.constructor && e.constructor.name) || "Error"); } catch (_) { /* hostile getter */ }
      try { message = $.String(e.message); } catch (_) { /* hostile getter */ }
      try { stack = $.String(e.stack || ""); } catch (_) { /* hostile getter */ }
      const extra = { __proto__: null }; // filled by assignment: nothing on Object.prototype may intercept it
      const fields = ["server", "tool", "code", "data", "context"];
      for (let i = 0; i < fields.length; i++) {
        const k = fields[i];
        try {
          const d = $.getOwnPropertyDescriptor(e, k);
          if (d && d.value !== undefined) extra[k] = typeof d.value === "string" ? d.value : ns.inspect(d.value, { depth: 2 });
        } catch (_) { /* ignore */ }
      }
      return { name, message, stack, extra };
    }
    let shown = "<a value that cannot be shown>";
    try { shown = ns.inspect(e, { depth: 2 }); } catch (_) { /* its traps throw even for inspect */ }
    return { name: "Uncaught", message: shown, stack: "", extra: {} };
  }
  ns.describeError = describeError;
})();
