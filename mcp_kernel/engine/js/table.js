// Text tables of records, for terminals and agents: console.table draws Node's boxed grid,
// api.print a light table (a rule under the header, columns apart by three spaces). One renderer,
// two styles: both pick columns, stringify cells and cap widths the same way.
(function installTable() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const { isArray } = Array;
  const stringify = JSON.stringify;

  /** JSON with spaces after "," and ":" ("[1, 2]", '{"a": 1}'): easier to read in a cell. */
  function spaced(v, depth) {
    if (v === null || typeof v !== "object") {
      const t = typeof v === "bigint" ? `${v}n` : stringify(v);
      return t === undefined ? "null" : t;
    }
    if (depth > 8) return isArray(v) ? "[…]" : "{…}";
    if (isArray(v)) return "[" + $.join($.map(v, (x) => spaced(x, depth + 1)), ", ") + "]";
    return "{" + $.join($.map($.keys(v), (k) => `${stringify(k)}: ${spaced(v[k], depth + 1)}`), ", ") + "}";
  }

  function cellText(v, style) {
    if (v === null || v === undefined) return "";
    if (style === "box") return typeof v === "string" ? v : ns.inspect(v, { depth: 0 });
    const text = typeof v === "string" ? v : spaced(v, 0);
    return text.length <= 60 ? text : $.slice(text, 0, 59) + "…";
  }

  // (no spreading or for…of: they iterate with Array.prototype[Symbol.iterator], which a cell may replace)
  const cat = (a, b) => { const out = $.slice(a, 0); for (let i = 0; i < b.length; i++) $.push(out, b[i]); return out; };
  const largest = (list, from) => { let m = from; for (let i = 0; i < list.length; i++) m = $.max(m, list[i]); return m; };
  const fit = (text, width) => (text.length <= width ? $.padEnd(text, width) : $.slice(text, 0, $.max(0, width - 1)) + "…");

  /**
   * A text table of `data` (an array of records, or an object whose values are records);
   * anything else is shown with inspect().
   * @param {*} data
   * @param {{style?: "simple"|"box", maxRows?: number, maxCols?: number, width?: number}} [options]
   */
  ns.textTable = function textTable(data, options = {}) {
    const style = options.style || "simple";
    const box = style === "box";
    const rows = isArray(data) ? data : data !== null && typeof data === "object" ? $.values(data) : null;
    if (!rows || !rows.length || !$.every(rows, (r) => r !== null && typeof r === "object")) return ns.inspect(data);
    const maxRows = options.maxRows || 50;
    const maxCols = options.maxCols || (box ? 20 : 12);
    const shown = $.slice(rows, 0, maxRows);
    const cols = [];
    for (let i = 0; i < shown.length; i++) {
      const keys = $.keys(shown[i]);
      for (let j = 0; j < keys.length; j++) if (!$.includes(cols, keys[j]) && cols.length < maxCols) $.push(cols, keys[j]);
    }
    const head = box ? cat(["(index)"], cols) : cols;
    const body = $.map(shown, (r, i) => {
      const cells = $.map(cols, (c) => cellText(r[c], style));
      return box ? cat([$.String(i)], cells) : cells;
    });
    const widths = $.map(head, (h, j) => $.min(40, largest($.map(body, (row) => row[j].length), h.length)));
    if (box) {
      const line = (row) => "│ " + $.join($.map(row, (c, j) => fit(c, widths[j])), " │ ") + " │";
      const bar = (l, m, r) => l + $.join($.map(widths, (w) => $.repeat("─", w + 2)), m) + r;
      return $.join(cat(cat([bar("┌", "┬", "┐"), line(head), bar("├", "┼", "┤")], $.map(body, line)), [bar("└", "┴", "┘")]), "\n");
    }
    const limit = options.width || 120;
    const total = () => { let sum = 3 * (widths.length - 1); for (let i = 0; i < widths.length; i++) sum += widths[i]; return sum; };
    while (total() > limit) { // narrow the widest column until the table fits the terminal
      const j = $.lastIndexOf(widths, largest(widths, -Infinity));
      if (widths[j] <= 4) break;
      widths[j] -= 1;
    }
    const line = (row) => $.join($.map(row, (c, j) => fit(c, widths[j])), "   ");
    const text = $.replace($.join(cat([line(head), $.repeat("─", total())], $.map(body, line)), "\n"), /\s+$/, "");
    return rows.length > shown.length ? `${text}\n… ${rows.length - shown.length} more rows` : text;
  };
})();
