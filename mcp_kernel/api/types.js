// `api.types()`: the TypeScript declarations of the tools, the api object and the runtime's
// globals, as a .d.ts text an editor or an agent can type-check cells against offline. Rendered in
// Python (mcp_kernel/api/types.py) from the same signatures api.library shows.
(function installTypesApi() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const api = ns.api;

  /**
   * The .d.ts of this kernel: `mcp.<server>.<tool>` with argument and result types, `mcp.call`,
   * `mcp.tools[…]`, `tools.*`, `api.*` and the other globals. Save it (`api.saveArtifact("mcp2repl.d.ts",
   * await api.types(), {format: "text"})`) and type-check cells with `tsc --noEmit` (see its header).
   * @param {{server?: string}} [options] `server`: only that server's tools
   * @returns {Promise<string>}
   * @example await api.types({server: "demo"})
   */
  api.types = (options = {}) => ns.call("api.types", { options: options || {} });
})();
