// Finding tools without reading JSON Schemas: ranked search, TypeScript-like docs, full
// descriptions and runtime guidance. The ranking and docs are computed in Python
// (mcp_kernel/servers/discovery.py, typescript.py) over the live catalog.
(function installDiscoveryApi() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const api = ns.api;

  /**
   * Ranked tool summaries for a query (tool names, descriptions, parameters; typos and plurals
   * tolerated). Page with `offset`.
   * @param {string} query
   * @param {{limit?: number, offset?: number, server?: string}} [options]
   * @returns {Promise<{query: string, total: number, hasMore: boolean, nextOffset: number|null,
   *   results: {name: string, server: string, call: string, summary: string, score: number}[], note?: string}>}
   */
  api.searchTools = (query = "", options = {}) => ns.call("api.searchTools", { query: $.String(query), options });

  // An answer with a note: the note goes to stderr, the value keeps its documented type, so that
  // `(await api.library(q)).length` and friends keep working while the user still learns why a list
  // is empty (what was searched, what exists) or which words were read as others.
  const noted = (name, answer) => {
    if (answer.note) ns.hint(`${name}: ${answer.note}`);
    return answer;
  };

  /**
   * TypeScript-like async function docs of the best matching tools, with a runnable example each.
   * When nothing matches (or words were corrected) a note on stderr says what was searched, as the
   * `note` of api.searchTools does. `{withNote: true}` returns `{docs, note}` instead, the note
   * beside the docs (what `mcp2repl --library` prints).
   * @param {string} query
   * @param {{limit?: number, withNote?: boolean}} [options]
   * @returns {Promise<string[]>}
   */
  api.library = async (query = "", options = {}) => {
    const answer = (await ns.ask("api.library", { query: $.String(query), options })).v;
    if (options && options.withNote) return { docs: answer.docs, note: answer.note || "" };
    return noted("api.library", answer).docs;
  };

  /**
   * One tool's full definition: schema, annotations, signature, example call, the shape of
   * results seen so far (`observedOutput`) and `approval`: whether a call asks a person first, and
   * why, in one line. `describeTool("server.tool")`, `describeTool(name)` or `describeTool(server, tool)`.
   */
  api.describeTool = (a, b) => ns.call("api.describeTool", b === undefined ? { tool: $.String(a) } : { server: $.String(a), tool: $.String(b) });

  /**
   * A compact index of every tool: name, server, call path, description, signature.
   * @param {{schemas?: boolean, server?: string}} [options]
   */
  api.listTools = (options = {}) => ns.call("api.listTools", { options });

  /**
   * Short runtime guidance (calling, unwrapping, printing, artifacts, errors…), ranked by query.
   * When nothing matches, a note on stderr lists the topics there are.
   * @param {string} [query]
   * @param {{limit?: number}} [options]
   * @returns {Promise<{topic: string, text: string}[]>}
   */
  api.guide = async (query = "", options = {}) =>
    noted("api.guide", (await ns.ask("api.guide", { query: $.String(query), options })).v).entries;
})();
