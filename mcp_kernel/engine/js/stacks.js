// Stack traces as the user wrote the code. Cells run rewritten (wrapped in an async function,
// declarations turned into globals, interrupt checks in loops), so V8's positions are in code the
// user never saw, and the runtime's own frames (mcp2repl/…) would show up in every error that
// passes through it. Like Node with source maps, `Error.prepareStackTrace` maps cell positions
// back and leaves the runtime out, so `e.stack`, inspected errors, `console.log(e)` and the
// kernel's tracebacks all agree. A cell that installs its own prepareStackTrace gets its own format.
(function installStacks() {
  "use strict";
  const ns = __mcp2repl;
  const $ = ns.$;
  const RUNTIME = "mcp2repl/";
  /** cell name -> {line: [[generatedColumn, originalColumn, inserted], …]} for lines the rewrite changed */
  const maps = new $.Map();

  // CallSite methods, taken from a real call site now: a cell cannot swap them later.
  let site = null;
  const grab = Error.prepareStackTrace;
  Error.prepareStackTrace = (_, sites) => { site = sites[0]; return ""; };
  new Error().stack; // eslint-disable-line no-unused-expressions
  Error.prepareStackTrace = grab;
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const proto = $.getPrototypeOf(site);
  const [scriptName, lineOf, columnOf, siteText, isAsync] = ["getScriptNameOrSourceURL", "getLineNumber", "getColumnNumber", "toString", "isAsync"].map((k) => uncurry(proto[k]));
  const errorText = uncurry(Error.prototype.toString);

  ns.mapCell = (cell, map) => { $.mapSet(maps, cell, map); };
  /** Drop the maps of past cells the kernel no longer keeps (engine/cellmaps.py). */
  ns.forgetCells = (cells) => { for (let i = 0; i < cells.length; i++) $.mapDelete(maps, cells[i]); };

  /** [line, column] in the user's cell, or null for the cell wrapper itself. */
  function original(map, line, col) {
    const segs = map[line];
    if (!segs) return [line, col];
    let i = -1;
    for (let k = 0; k < segs.length && segs[k][0] <= col - 1; k++) i = k;
    if (i < 0) return [line, col];
    if (line === 1 && i === 0 && segs[0][2] && segs.length > 1) return null; // the wrapper's prefix
    const [gen, orig, inserted] = segs[i];
    return inserted ? [line, orig + 1] : [line, orig + (col - 1 - gen) + 1];
  }

  function frame(callSite) {
    const file = scriptName(callSite);
    if (typeof file === "string" && $.startsWith(file, RUNTIME)) return null;
    const text = siteText(callSite);
    const map = typeof file === "string" ? $.mapGet(maps, file) : undefined;
    if (map === undefined) return text;
    const line = lineOf(callSite);
    const col = columnOf(callSite);
    const at = original(map, line, col);
    if (at === null) return null;
    // the cell's own body (V8 names it after the wrapper call): top-level code, as Node shows it
    if ($.includes(text, "__mcp2repl")) return `${isAsync(callSite) ? "async " : ""}${file}:${at[0]}:${at[1]}`;
    const from = `${file}:${line}:${col}`;
    const pos = $.lastIndexOf(text, from);
    return pos < 0 ? text : `${$.slice(text, 0, pos)}${file}:${at[0]}:${at[1]}${$.slice(text, pos + from.length)}`;
  }

  Error.prepareStackTrace = function prepareStackTrace(error, sites) {
    let head;
    try {
      head = errorText(error);
    } catch (_) {
      head = "<error>";
    }
    let out = head;
    for (let i = 0; i < sites.length; i++) {
      const shown = frame(sites[i]);
      if (shown !== null) out += `\n    at ${shown}`;
    }
    return out;
  };
})();
