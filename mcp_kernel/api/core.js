// The `api` global: the user-facing runtime API. Each concern adds its functions to it in its
// own file (display.js, later servers and tools); this file only creates it.
(function installApi() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  /** @namespace api — runtime helpers available in every cell. */
  const api = {};
  ns.api = api;
  Object.defineProperty(globalThis, "api", { value: api, writable: true, configurable: true, enumerable: false });
  /** HTML-escape text (every api file that writes HTML uses this one). */
  ns.escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

  /** Base64 of bytes (Uint8Array, any typed array view, ArrayBuffer); strings pass through. */
  ns.toBase64 = function toBase64(bytes) {
    if (typeof bytes === "string") return bytes;
    const view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let bin = "";
    for (let i = 0; i < view.length; i += 0x8000) bin += String.fromCharCode.apply(null, view.subarray(i, i + 0x8000));
    return btoa(bin);
  };

  /** mcp2repl's version and the engine it runs on. */
  api.version = ns.version || "";
})();
