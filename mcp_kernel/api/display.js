// api.display and friends: publish rich output from a cell. Loaded into every context after
// the engine runtime; `__mcp2repl.display` (bridge.js) does the sending.
(function installDisplayApi() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const api = ns.api;

  function toBase64(bytes) {
    if (typeof bytes === "string") return bytes;
    const view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let bin = "";
    for (let i = 0; i < view.length; i += 0x8000) bin += String.fromCharCode.apply(null, view.subarray(i, i + 0x8000));
    return btoa(bin);
  }

  let nextId = 1;
  /**
   * Show a value (or, with `{raw: true}`, a MIME bundle) now, before the cell's result.
   * @param {*} value
   * @param {{raw?: boolean, mime?: string, metadata?: object, display_id?: string, update?: boolean}} [opts]
   * @returns {{display_id: string|null, update(value: *): void}} a handle to update this display later
   */
  api.display = function display(value, opts = {}) {
    let data;
    if (opts.mime) data = { [opts.mime]: value, "text/plain": typeof value === "string" ? value : ns.inspect(value) };
    else if (opts.raw) data = value;
    else data = ns.bundle(value);
    const id = opts.display_id || (opts.update ? null : null);
    ns.display(data, opts.metadata || {}, id, !!opts.update);
    return {
      display_id: id,
      update(next) {
        const nid = id || `mcp2repl-${nextId++}`;
        ns.display(ns.bundle(next), {}, nid, true);
      },
    };
  };

  /** Clear this cell's output; `{wait: true}` clears only when new output arrives (no flicker). */
  api.clearOutput = function clearOutput(opts = {}) { ns.clearOutput(!!opts.wait); };

  api.html = (html) => api.display(String(html), { mime: "text/html" });
  api.markdown = (md) => api.display(String(md), { mime: "text/markdown" });
  api.svg = (svg) => api.display(String(svg), { mime: "image/svg+xml" });
  api.json = (value) => api.display(value, { mime: "application/json" });
  api.png = (bytes) => api.display({ "image/png": toBase64(bytes), "text/plain": "<image/png>" }, { raw: true });
  api.jpeg = (bytes) => api.display({ "image/jpeg": toBase64(bytes), "text/plain": "<image/jpeg>" }, { raw: true });
})();
