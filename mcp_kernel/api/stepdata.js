// `data` for one step: structured input given beside the code (mcp2repl serve's `run`, a step
// client's `data`), so nothing is ever escaped into source text. Python sends it as context data
// before the step and again (unbind) after it; each change is acknowledged with a note, so the
// step starts only once the binding is in place. The previous global `data`, if any, comes back.
(function installStepData() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  let saved = null; // {had, descriptor} while a step's data is bound

  ns.onData("step.data", (msg) => {
    let error = null;
    try {
      if (msg.bind) {
        if (saved === null) saved = { descriptor: $.getOwnPropertyDescriptor(globalThis, "data") };
        $.defineProperty(globalThis, "data", { value: msg.value, writable: true, configurable: true, enumerable: false });
      } else if (saved !== null) {
        const previous = saved.descriptor;
        saved = null;
        if (previous) $.defineProperty(globalThis, "data", previous);
        else delete globalThis.data;
      }
    } catch (e) {
      error = $.String(e && e.message);
    }
    ns.notify("step.data", { bind: !!msg.bind, error });
  });
})();
