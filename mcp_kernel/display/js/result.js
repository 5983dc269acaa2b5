// The MIME bundle of a value: its own $.symbolFor("Jupyter.display") first (returning null shows
// nothing), then rich content (render.js: MCP images and audio, records, artifact handles), then
// Node-style text plus application/json for plain JSON. This file installs itself as the engine's
// cell result formatter; a result bigger than the output limit becomes a fitted view (view.js).
(function installResult() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;

  /** MIME bundle for a value: user-defined first, then rich, then text/plain and JSON. */
  function bundle(value) {
    return measured(value).data;
  }
  ns.bundle = bundle;

  /** The bundle and the characters it puts into the notebook (the JSON text is made once). */
  function measured(value) {
    const custom = value !== null && (typeof value === "object" || typeof value === "function")
      ? value[$.symbolFor("Jupyter.display")] : undefined;
    if (typeof custom === "function") {
      const b = $.apply(custom, value, []);
      if (b === null) return { data: null, size: 0 }; // the value chose to show nothing (e.g. an api.print envelope)
      if (b && typeof b === "object") {
        const data = {};
        for (const [mime, v] of $.entries(b)) {
          if (typeof v === "string") data[mime] = v;
          else if ($.test(/json$/, mime)) {
            const json = ns.jsonValue(v, 1 << 30); // plain, JSON-safe and not too deep, or left out
            if (json !== undefined) data[mime] = new ns.RawJson(json);
          }
        }
        if (!("text/plain" in data)) data["text/plain"] = ns.inspect(value);
        return { data, size: null };
      }
    }
    const rich = ns.richBundle(value);
    if (rich) return { data: rich, size: null };
    const data = { "text/plain": ns.inspect(value) };
    const json = ns.jsonValue(value);
    if (json !== undefined) data["application/json"] = new ns.RawJson(json);
    return { data, size: $.max(data["text/plain"].length, json === undefined ? 0 : json.length) };
  }

  /** Characters a bundle puts into the notebook (its text and its JSON), to decide on fitting. */
  function bundleSize(data) {
    const limit = ns.maxOutputChars();
    let n = 0;
    for (const [mime, v] of $.entries(data)) {
      if (typeof v === "string") n = $.max(n, $.startsWith(mime, "image/") ? 0 : v.length);
      else if (v instanceof ns.RawJson) n = $.max(n, v.text.length);
      else {
        const json = ns.jsonValue(v, limit * 4);
        n = $.max(n, json === undefined ? limit + 1 : json.length);
      }
    }
    return n;
  }

  // A primitive's JSON rides along under a private key that the Session takes out of the bundle
  // (Result.value): steps from the shell and Python get `"abc"`, not the Node-style `'abc'`.
  const VALUE = "application/vnd.mcp2repl.value+json";
  const primitive = (v) => v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && $.isFinite(v));

  ns.setResultFormatter(async (value) => {
    const { data, size } = measured(value);
    if (data && primitive(value) && size !== null && size <= ns.maxOutputChars()) data[VALUE] = new ns.RawJson($.stringify(value));
    // too big for a notebook: a fitted view, the rest as an artifact
    // awaited, not returned: a promise returned from an async function is resolved through its
    // `then`, which a cell may have replaced
    return data && (size === null ? bundleSize(data) : size) > ns.maxOutputChars() ? await ns.fitResult(value) : data;
  });
})();
