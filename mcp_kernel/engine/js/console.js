// `console`: Node's methods, written to the current cell's stdout and stderr through the bridge
// (bridge.js: `output`, which merges consecutive writes), formatted by inspect.js as Node would.
(function installConsole() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const $ = ns.$; // built-ins captured before any cell ran: a cell that replaces one changes only its own code

  let groupIndent = "";
  const counts = new $.Map();
  const clocks = new $.Map();
  function write(name, args) {
    let text = $.apply(ns.format, undefined, args);
    if (groupIndent) text = $.join($.map($.split(text, "\n"), (l) => groupIndent + l), "\n");
    ns.output(name, text + "\n");
  }
  const stdout = (...args) => write("stdout", args);
  const stderr = (...args) => write("stderr", args);
  const consoleObject = {
    log: stdout, info: stdout, debug: stdout,
    warn: stderr, error: stderr,
    trace: (...args) => {
      const stack = $.join($.slice($.split($.String(new $.Error().stack || ""), "\n"), 2), "\n");
      write("stderr", ["Trace" + (args.length ? ": " + $.apply(ns.format, undefined, args) : "") + "\n" + stack]);
    },
    dir: (value, options) => write("stdout", [ns.inspect(value, options || {})]),
    table: (rows) => write("stdout", [ns.textTable(rows, { style: "box" })]),
    assert: (cond, ...args) => { if (!cond) write("stderr", ["Assertion failed" + (args.length ? ": " + $.apply(ns.format, undefined, args) : "")]); },
    group: (...args) => { if (args.length) write("stdout", args); groupIndent += "  "; },
    groupEnd: () => { groupIndent = $.slice(groupIndent, 2); },
    count: (label = "default") => { const n = ($.mapGet(counts, label) || 0) + 1; $.mapSet(counts, label, n); stdout(`${label}: ${n}`); },
    countReset: (label = "default") => $.mapDelete(counts, label),
    time: (label = "default") => $.mapSet(clocks, label, $.now()),
    timeLog: (label = "default", ...args) => { $.unshift(args, `${label}: ${$.now() - ($.mapGet(clocks, label) || $.now())}ms`); write("stdout", args); },
    timeEnd: (label = "default") => { stdout(`${label}: ${$.now() - ($.mapGet(clocks, label) || $.now())}ms`); $.mapDelete(clocks, label); },
  };
  consoleObject.groupCollapsed = consoleObject.group;
  const d = $.getOwnPropertyDescriptor(globalThis, "console");
  if (d && !d.configurable) globalThis.console = consoleObject;
  else $.defineProperty(globalThis, "console", $.data(consoleObject));
})();
