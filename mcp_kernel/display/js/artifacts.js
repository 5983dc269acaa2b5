// Values saved as artifacts (files beside the notebook, .mcp2repl/artifacts/): the one serializer
// behind api.saveArtifact and behind the full values that fitted views leave out. Values are
// serialized here, once, so only text crosses to Python, which writes it as it is.
(function installArtifacts() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const FORMATS = ["json", "text", "ndjson", "bytes"];

  /** JSON text for a value; BigInt becomes a string, cycles are an error worth seeing. */
  function jsonText(value, indent) {
    return $.stringify(value, (k, v) => (typeof v === "bigint" ? `${v}n` : v), indent);
  }
  ns.jsonText = jsonText;
  ns.artifactFormats = FORMATS;

  /** Serialize `value` in `format` (json, text, ndjson, bytes) and save it; resolves with the handle. */
  ns.saveArtifact = function saveArtifact(name, value, options = {}) {
    const binary = value instanceof $.ArrayBuffer || $.isView(value);
    const format = options.format || (binary ? "bytes" : typeof value === "string" ? "text" : "json");
    if (!$.includes(FORMATS, format)) throw new TypeError(`format must be one of ${$.join(FORMATS, ", ")}; got ${ns.inspect(format)}`);
    let data;
    if (format === "bytes") {
      if (!binary) throw new TypeError("format 'bytes' needs a Uint8Array or ArrayBuffer");
      data = ns.toBase64(value);
    } else if (format === "text") data = typeof value === "string" ? value : ns.inspect(value, { depth: Infinity, maxArrayLength: Infinity, maxStringLength: Infinity, maxChars: Infinity });
    else if (format === "ndjson") {
      if (!$.isArray(value)) throw new TypeError("format 'ndjson' needs an array (one JSON value per line)");
      data = jsonText(value);
    } else {
      data = jsonText(value);
      if (data !== undefined && data.length < 1000000) data = jsonText(value, 2); // small: readable; big: compact
    }
    if (data === undefined) throw new TypeError(`${ns.inspect(value, { depth: 0 })} has no JSON form; use format 'text'`);
    // auto: the kernel chose to save this (a cut view); such artifacts may be evicted to respect the folder's cap
    return ns.call("artifacts.save", { name: name == null ? "" : $.String(name), data, format, auto: options.auto === true });
  };

  /** Read an artifact back: JSON and NDJSON as values, text as a string, bytes as a Uint8Array. */
  ns.readArtifact = async function readArtifact(name) {
    const { format, data } = await ns.call("artifacts.read", { name: $.String(name) });
    if (format === "json") return $.parse(data);
    if (format === "ndjson") return $.map($.filter($.split(data, "\n"), (l) => $.trim(l)), (l) => $.parse(l));
    if (format === "bytes") { const bin = ns.web.atob(data); const out = new Uint8Array(bin.length); for (let i = 0; i < bin.length; i++) out[i] = $.charCodeAt(bin, i); return out; }
    return data;
  };
})();
