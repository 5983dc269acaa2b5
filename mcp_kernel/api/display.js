// api.display and friends: publish rich output from a cell, now, and update it later by id.
// `__mcp2repl.display` (engine/js/bridge.js) sends; `__mcp2repl.bundle` (display/js/result.js)
// decides how a value looks (MCP images and audio render natively, records get a table).
(function installDisplayApi() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const api = ns.api;

  function dataOf(value, opts) {
    if (opts.raw) return value;
    if (opts.mime) {
      const text = typeof value === "string" ? value : ns.inspect(value);
      // JSON text goes into the bundle as it is (RawJson), past the depth check of the bundle itself
      if ($.test(/json$/, opts.mime) && ns.tooDeep(value)) {
        throw new $.TypeError(`Cannot display a value nested more than ${ns.maxDepth} levels deep as ${opts.mime}; show a part of it, or its text with api.display(value)`);
      }
      const json = $.test(/json$/, opts.mime) ? ns.jsonText(value) : undefined;
      const body = json !== undefined ? new ns.RawJson(json) : $.test(/json$/, opts.mime) ? null : text;
      return { [opts.mime]: body, "text/plain": opts.mime === "text/plain" ? text : `<${opts.mime}>` };
    }
    return ns.bundle(value) || { "text/plain": "" };
  }

  let nextId = 1;
  /**
   * Show a value now, before the cell's result, as the notebook would show it as a result.
   * @param {*} value a value, or a MIME bundle with `{raw: true}`
   * @param {{raw?: boolean, mime?: string, metadata?: object, display_id?: string, update?: boolean}} [opts]
   *   `mime` sends the value under that MIME type; `display_id` names the display so later
   *   calls with `{update: true}` (or the returned handle) replace it in place.
   * @returns {{display_id: string, update(value: *, opts?: object): void}}
   */
  // Options the runtime makes have no prototype: only what the caller gave is read.
  const NONE = $.freeze({ __proto__: null });
  api.display = function display(value, opts = NONE) {
    if (opts.update && !opts.display_id) throw new TypeError("api.display(value, {update: true}) needs the display_id of the display to update");
    const id = opts.display_id ? $.String(opts.display_id) : `mcp2repl-display-${nextId++}`;
    ns.display(dataOf(value, opts), opts.metadata || {}, id, !!opts.update);
    const handle = {
      display_id: id,
      update: (next, more = NONE) => { ns.display(dataOf(next, more), more.metadata || {}, id, true); },
    };
    // as a cell's last value the handle would show itself again: it shows nothing
    return $.defineProperty(handle, $.symbolFor("Jupyter.display"), $.data(() => null));
  };

  /**
   * Clear this cell's output; `{wait: true}` clears only when new output arrives (no flicker).
   * @param {{wait?: boolean}} [opts]
   * @returns {void}
   */
  api.clearOutput = function clearOutput(opts = NONE) { ns.clearOutput(!!opts.wait); };

  /**
   * Display HTML.
   * @param {string} html
   * @param {{display_id?: string, update?: boolean, metadata?: object}} [opts]
   * @returns {{display_id: string, update(value: *, opts?: object): void}}
   */
  api.html = (html, opts = NONE) => api.display($.String(html), { __proto__: null, ...opts, mime: "text/html" });
  /**
   * Display Markdown.
   * @param {string} md
   * @param {{display_id?: string, update?: boolean, metadata?: object}} [opts]
   * @returns {{display_id: string, update(value: *, opts?: object): void}}
   */
  api.markdown = (md, opts = NONE) => api.display($.String(md), { __proto__: null, ...opts, mime: "text/markdown" });
  /**
   * Display an SVG image from its source text.
   * @param {string} svg
   * @param {{display_id?: string, update?: boolean, metadata?: object}} [opts]
   * @returns {{display_id: string, update(value: *, opts?: object): void}}
   */
  api.svg = (svg, opts = NONE) => api.display($.String(svg), { __proto__: null, ...opts, mime: "image/svg+xml" });
  /**
   * Display a value in JupyterLab's JSON viewer.
   * @param {*} value
   * @param {{display_id?: string, update?: boolean, metadata?: object}} [opts]
   * @returns {{display_id: string, update(value: *, opts?: object): void}}
   */
  api.json = (value, opts = NONE) => api.display(value, { __proto__: null, ...opts, mime: "application/json" });
  /**
   * Display PNG bytes (Uint8Array, ArrayBuffer or base64 text).
   * @param {Uint8Array|ArrayBuffer|string} bytes
   * @param {{display_id?: string, update?: boolean, metadata?: object}} [opts]
   * @returns {{display_id: string, update(value: *, opts?: object): void}}
   */
  api.png = (bytes, opts = NONE) => api.display({ "image/png": ns.toBase64(bytes), "text/plain": "<image/png>" }, { __proto__: null, ...opts, raw: true });
  /**
   * Display JPEG bytes (Uint8Array, ArrayBuffer or base64 text).
   * @param {Uint8Array|ArrayBuffer|string} bytes
   * @param {{display_id?: string, update?: boolean, metadata?: object}} [opts]
   * @returns {{display_id: string, update(value: *, opts?: object): void}}
   */
  api.jpeg = (bytes, opts = NONE) => api.display({ "image/jpeg": ns.toBase64(bytes), "text/plain": "<image/jpeg>" }, { __proto__: null, ...opts, raw: true });
})();
