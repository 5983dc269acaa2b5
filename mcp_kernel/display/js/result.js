// The MIME bundle of a value: its own Symbol.for("Jupyter.display") first (returning null shows
// nothing), then rich content (render.js: MCP images and audio, records, artifact handles), then
// Node-style text plus application/json for plain JSON. This file installs itself as the engine's
// cell result formatter; a result bigger than the output limit becomes a fitted view (view.js).
(function installResult() {
  "use strict";
  const ns = globalThis.__mcp2repl;

  /** MIME bundle for a value: user-defined first, then rich, then text/plain and JSON. */
  function bundle(value) {
    return measured(value).data;
  }
  ns.bundle = bundle;

  /** The bundle and the characters it puts into the notebook (the JSON text is made once). */
  function measured(value) {
    const custom = value !== null && (typeof value === "object" || typeof value === "function")
      ? value[Symbol.for("Jupyter.display")] : undefined;
    if (typeof custom === "function") {
      const b = custom.call(value);
      if (b === null) return { data: null, size: 0 }; // the value chose to show nothing (e.g. an api.print envelope)
      if (b && typeof b === "object") {
        const data = {};
        for (const [mime, v] of Object.entries(b)) {
          if (typeof v === "string") data[mime] = v;
          else if (/json$/.test(mime)) data[mime] = JSON.parse(JSON.stringify(v));
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
    return { data, size: Math.max(data["text/plain"].length, json === undefined ? 0 : json.length) };
  }

  /** Characters a bundle puts into the notebook (its text and its JSON), to decide on fitting. */
  function bundleSize(data) {
    const limit = ns.maxOutputChars();
    let n = 0;
    for (const [mime, v] of Object.entries(data)) {
      if (typeof v === "string") n = Math.max(n, mime.startsWith("image/") ? 0 : v.length);
      else if (v instanceof ns.RawJson) n = Math.max(n, v.text.length);
      else {
        const json = ns.jsonValue(v, limit * 4);
        n = Math.max(n, json === undefined ? limit + 1 : json.length);
      }
    }
    return n;
  }

  ns.setResultFormatter(async (value) => {
    const { data, size } = measured(value);
    // too big for a notebook: a fitted view, the rest as an artifact
    return data && (size === null ? bundleSize(data) : size) > ns.maxOutputChars() ? ns.fitResult(value) : data;
  });
})();
