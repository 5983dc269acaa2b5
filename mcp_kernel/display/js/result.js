// The MIME bundle of a value: its own $.symbolFor("Jupyter.display") first (returning null shows
// nothing), then rich content (render.js: MCP images and audio, records, artifact handles), then
// Node-style text plus application/json for plain JSON. This file installs itself as the engine's
// cell result formatter; a result bigger than the output limit becomes a fitted view (view.js).
(function installResult() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const STEP_KEYS = "application/vnd.mcp2repl.";

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
        const entries = $.entries(b);
        for (let i = 0; i < entries.length; i++) {
          const mime = entries[i][0];
          const v = entries[i][1];
          if (typeof v === "string" || v instanceof ns.RawJson) data[mime] = v;
          else if ($.test(/json$/, mime)) {
            const json = ns.jsonValue(v, 1 << 30); // plain, JSON-safe and not too deep, or left out
            if (json !== undefined) data[mime] = new ns.RawJson(json);
          }
        }
        // only keys for step clients (api.print's answer, shown already): nothing for a notebook
        if ($.every($.keys(data), (mime) => $.startsWith(mime, STEP_KEYS))) return { data, size: 0, custom: true };
        if (!("text/plain" in data)) data["text/plain"] = ns.inspect(value);
        return { data, size: null, custom: true };
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
    const entries = $.entries(data);
    for (let i = 0; i < entries.length; i++) {
      const mime = entries[i][0];
      const v = entries[i][1];
      if (typeof v === "string") n = $.max(n, $.startsWith(mime, "image/") ? 0 : v.length);
      else if (v instanceof ns.RawJson) n = $.max(n, v.text.length);
      else {
        const json = ns.jsonValue(v, limit * 4);
        n = $.max(n, json === undefined ? limit + 1 : json.length);
      }
    }
    return n;
  }

  // The value's JSON rides along under a private key that the Session takes out of the bundle
  // (display/value.py) when the bundle has no JSON of its own (a primitive, an MCP content item):
  // steps from the shell and Python get `"abc"`, not the Node-style `'abc'`. Beside it, what a
  // step client is told about the answer (a fitted view's cut) and which display already shows it.
  const VALUE = "application/vnd.mcp2repl.value+json";
  const NOTES = "application/vnd.mcp2repl.notes+json";
  const SHOWN = "application/vnd.mcp2repl.shown";
  ns.stepKeys = { VALUE, NOTES, SHOWN };
  const primitive = (v) => v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && $.isFinite(v));
  /** The value's JSON text (a primitive's too), or undefined when it is not JSON or longer than `max`. */
  ns.valueJson = (v, max) => {
    const json = primitive(v) ? $.stringify(v) : ns.jsonValue(v, max);
    return json !== undefined && json.length <= max ? json : undefined;
  };

  // Boxed, as the engine wants it (bridge.js: setResultFormatter): a bundle is a plain object, and
  // resolving a promise with one would look up its `then`, which a cell may have set for every object.
  ns.setResultFormatter(async (value) => {
    const { data, size, custom } = measured(value);
    // too big for a notebook: a fitted view, the rest as an artifact
    const fits = !data || (size === null ? bundleSize(data) : size) <= ns.maxOutputChars();
    if (!fits) return $.box((await $.pinned(ns.fitResult(value))).v);
    if (data && !custom && !("application/json" in data)) {
      const json = ns.valueJson(value, ns.maxOutputChars());
      if (json !== undefined) data[VALUE] = new ns.RawJson(json);
    }
    return $.box(data);
  });
})();
