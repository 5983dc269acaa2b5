// The `api` global: the user-facing runtime API. Each concern adds its functions to it in its own
// file (display.js, artifacts.js, print.js, mcp.js, discovery.js); this file only creates it.
(function installApi() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  /** @namespace api — runtime helpers available in every cell. */
  const api = {};
  ns.api = api;
  $.defineProperty(globalThis, "api", { value: api, writable: true, configurable: true, enumerable: false });

  /** mcp2repl's version (set by the session when the context starts). */
  api.version = "";
  ns.onData("about", (about) => { api.version = $.String(about.version || ""); });
})();
