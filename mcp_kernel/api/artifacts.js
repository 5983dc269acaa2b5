// Artifacts: large values kept as files beside the notebook (.mcp2repl/artifacts/), so they can
// leave the notebook's output and an agent's context while staying one call away.
(function installArtifactApi() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const api = ns.api;
  const FORMATS = ["json", "text", "ndjson", "bytes"];


  /** JSON text for a value; BigInt becomes a string, cycles are an error worth seeing. */
  function jsonText(value, indent) {
    return JSON.stringify(value, (k, v) => (typeof v === "bigint" ? `${v}n` : v), indent);
  }
  ns.jsonText = jsonText;

  /**
   * Save a value as an artifact file and get a small handle back.
   * @param {string} name file name, e.g. "results.json" (extension added when missing); nothing
   *   can escape the artifact folder
   * @param {*} value the value (bytes: a Uint8Array/ArrayBuffer; ndjson: an array)
   * @param {{format?: "json"|"text"|"ndjson"|"bytes"}} [options] default: bytes for binary
   *   values, text for strings, json otherwise
   * @returns {Promise<{name: string, kind: "artifact", bytes: number, format: string, readWith: string, path: string}>}
   */
  api.saveArtifact = async function saveArtifact(name, value, options = {}) {
    const binary = value instanceof ArrayBuffer || ArrayBuffer.isView(value);
    const format = options.format || (binary ? "bytes" : typeof value === "string" ? "text" : "json");
    if (!FORMATS.includes(format)) throw new TypeError(`format must be one of ${FORMATS.join(", ")}; got ${ns.inspect(format)}`);
    let data;
    if (format === "bytes") {
      if (!binary) throw new TypeError("format 'bytes' needs a Uint8Array or ArrayBuffer");
      data = ns.toBase64(value);
    } else if (format === "text") data = typeof value === "string" ? value : ns.inspect(value, { depth: Infinity, maxArrayLength: Infinity, maxStringLength: Infinity, maxChars: Infinity });
    else if (format === "ndjson") {
      if (!Array.isArray(value)) throw new TypeError("format 'ndjson' needs an array (one JSON value per line)");
      data = jsonText(value);
    } else {
      data = jsonText(value);
      if (data !== undefined && data.length < 1000000) data = jsonText(value, 2); // small: readable; big: compact
    }
    if (data === undefined) throw new TypeError(`${ns.inspect(value, { depth: 0 })} has no JSON form; use format 'text'`);
    return ns.call("api.saveArtifact", { name: name == null ? "" : String(name), data, format });
  };

  /**
   * Read an artifact back: JSON and NDJSON as values, text as a string, bytes as a Uint8Array.
   * @param {string|{name: string}} handleOrName
   */
  api.readArtifact = async function readArtifact(handleOrName) {
    const name = handleOrName && typeof handleOrName === "object" ? handleOrName.name : handleOrName;
    const { format, data } = await ns.call("api.readArtifact", { name: String(name) });
    if (format === "json") return JSON.parse(data);
    if (format === "ndjson") return data.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    if (format === "bytes") { const bin = atob(data); const out = new Uint8Array(bin.length); for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i); return out; }
    return data;
  };

  /** Every artifact of this notebook's folder, newest first. */
  api.artifacts = () => ns.call("api.artifacts", {});
})();
