// Values saved as artifacts (files beside the notebook, .mcp2repl/artifacts/): the one serializer
// behind api.saveArtifact and behind the full values that fitted views leave out. Values are
// serialized here, once, so only text crosses to Python, which writes it as it is.
(function installArtifacts() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const FORMATS = ["json", "text", "ndjson", "bytes"];

  const replacer = (k, v) => (typeof v === "bigint" ? `${v}n` : v);
  /** JSON text for a value; BigInt becomes a string, cycles are an error worth seeing. */
  function jsonText(value, indent) {
    return $.stringify(value, replacer, indent);
  }
  ns.jsonText = jsonText;
  ns.artifactFormats = FORMATS;

  // A big value's JSON is made and sent a piece at a time: as one string it would sit in V8 beside
  // the value (and twice while JSON.stringify builds it), then be copied out whole. Pieces are cut
  // only between array elements and object members, so a string value (and any secret in it, which
  // Python masks piece by piece) is never split.
  const PIECE = 4 * 1024 * 1024; // characters per piece, about
  const LONG = 512; // an array this long is cut between its elements wherever it is
  const RUN = 1024; // elements of a long array serialised by one stringify call
  const quote = (s) => $.stringify(s);
  const plain = (v) => { const p = $.getPrototypeOf(v); return p === $.ObjectProto || p === null; };

  /** JSON text of `value` (compact, as jsonText makes it) in pieces of about `piece` characters (the
   * last may be ""); with `lines`, the array `value` as NDJSON, one element per line. */
  function* jsonPieces(value, lines, piece = PIECE) {
    let buf = "";
    const open = []; // the containers being cut, for cycles that run through them
    // (no delegating yield: it looks up the inner generator's `next`, which a cell may replace; $.next is the built-in one)
    const put = (text) => {
      buf += text;
      if (buf.length < piece) return null;
      const out = buf;
      buf = "";
      return out;
    };
    let p = null; // a full piece put() handed back, to yield
    // cut: a container without toJSON, if long, or near the top and not one of a long array's many elements
    const cuts = (v, inLong, depth) => v !== null && typeof v === "object" && typeof v.toJSON !== "function" &&
      ($.isArray(v) ? v.length >= LONG || (!inLong && depth < 2) : !inLong && depth < 2 && plain(v));
    function* walk(v, depth) {
      if ($.includes(open, v)) throw new TypeError("Converting circular structure to JSON");
      $.push(open, v);
      if ($.isArray(v)) {
        const long = v.length >= LONG;
        if (!lines || depth) if ((p = put("[")) !== null) yield p;
        for (let i = 0; i < v.length;) {
          if (i && (!lines || depth)) if ((p = put(",")) !== null) yield p;
          if (cuts(v[i], long, depth + 1)) { const w = walk(v[i++], depth + 1); for (let st = $.next(w); !st.done; st = $.next(w)) yield st.value; }
          else if (lines && !depth) { const t = jsonText(v[i++]); if ((p = put(t === undefined ? "null" : t)) !== null) yield p; }
          else { // a run of elements that are not cut, in one call
            let j = i + 1;
            while (j < v.length && j - i < RUN && !cuts(v[j], long, depth + 1)) j++;
            const t = jsonText($.slice(v, i, j));
            if ((p = put($.slice(t, 1, t.length - 1))) !== null) yield p;
            i = j;
          }
          if (lines && !depth) if ((p = put("\n")) !== null) yield p;
        }
        if (!lines || depth) if ((p = put("]")) !== null) yield p;
      } else {
        if ((p = put("{")) !== null) yield p;
        const keys = $.keys(v);
        let first = true;
        for (let i = 0; i < keys.length; i++) {
          const member = v[keys[i]];
          if (cuts(member, false, depth + 1)) {
            if ((p = put(`${first ? "" : ","}${quote(keys[i])}:`)) !== null) yield p;
            const w = walk(member, depth + 1);
            for (let st = $.next(w); !st.done; st = $.next(w)) yield st.value;
          } else {
            const t = jsonText(member);
            if (t === undefined) continue; // as JSON.stringify: no member for undefined, functions, symbols
            if ((p = put(`${first ? "" : ","}${quote(keys[i])}:${t}`)) !== null) yield p;
          }
          first = false;
        }
        if ((p = put("}")) !== null) yield p;
      }
      open.length--;
    }
    if (lines || cuts(value, false, 0)) { const w = walk(value, 0); for (let st = $.next(w); !st.done; st = $.next(w)) yield st.value; }
    else {
      const t = jsonText(value);
      if (t === undefined) throw new TypeError(`${ns.inspect(value, { depth: 0 })} has no JSON form; use format 'text'`);
      if ((p = put(t)) !== null) yield p;
    }
    yield buf;
  }
  ns.jsonPieces = jsonPieces;

  // The artifact functions here resolve with boxes (see intrinsics.js): api/artifacts.js unboxes them for users.
  /** Serialize `value` in `format` (json, text, ndjson, bytes) and save it; resolves with the handle, boxed. */
  ns.saveArtifact = async function saveArtifact(name, value, options = {}) {
    const binary = value instanceof $.ArrayBuffer || $.isView(value);
    const format = options.format || (binary ? "bytes" : typeof value === "string" ? "text" : "json");
    if (!$.includes(FORMATS, format)) throw new TypeError(`format must be one of ${$.join(FORMATS, ", ")}; got ${ns.inspect(format)}`);
    // auto: the kernel chose to save this (a cut view); such artifacts may be evicted to respect the folder's cap
    const request = { name: name == null ? "" : $.String(name), format, auto: options.auto === true };
    let data;
    if (format === "bytes") {
      if (!binary) throw new TypeError("format 'bytes' needs a Uint8Array or ArrayBuffer");
      data = ns.toBase64(value);
    } else if (format === "text") data = typeof value === "string" ? value : ns.inspect(value, { depth: Infinity, maxArrayLength: Infinity, maxStringLength: Infinity, maxChars: Infinity });
    else {
      if (format === "ndjson" && !$.isArray(value)) throw new TypeError("format 'ndjson' needs an array (one JSON value per line)");
      const pieces = jsonPieces(value, format === "ndjson");
      const first = $.next(pieces).value;
      const next = $.next(pieces);
      if (!next.done) return await $.pinned(streamed(request, first, next.value, pieces));
      // one piece: sent whole (ndjson as the array, which Python writes a line per element)
      data = format === "ndjson" ? jsonText(value) : first.length < 1000000 ? jsonText(value, 2) : first; // small: readable; big: compact
    }
    $.put(request, "data", data); // (put: a plain object, see intrinsics.js)
    return await ns.ask("artifacts.save", request);
  };

  /** A big value's pieces written one by one to an artifact that appears, whole, when the last is in. */
  async function streamed(request, first, second, pieces) {
    const { stream } = (await ns.ask("artifacts.open", request)).v;
    try {
      await ns.ask("artifacts.write", { stream, data: first });
      first = null;
      await ns.ask("artifacts.write", { stream, data: second });
      second = null;
      for (let next = $.next(pieces); !next.done; next = $.next(pieces)) {
        if (next.value) await ns.ask("artifacts.write", { stream, data: next.value });
      }
    } catch (e) {
      const ignore = () => {};
      $.when(ns.ask("artifacts.abort", { stream }), ignore, ignore); // the file never appears; the error is the cell's
      throw e;
    }
    return await ns.ask("artifacts.close", { stream });
  }

  /** Read an artifact back (boxed): JSON and NDJSON as values, text as a string, bytes as a Uint8Array. */
  ns.readArtifact = async function readArtifact(name) {
    const { format, data } = (await ns.ask("artifacts.read", { name: $.String(name) })).v;
    if (format === "json") return $.box($.parse(data));
    if (format === "ndjson") return $.box($.map($.filter($.split(data, "\n"), (l) => $.trim(l)), (l) => $.parse(l)));
    if (format === "bytes") { const bin = ns.web.atob(data); const out = new Uint8Array(bin.length); for (let i = 0; i < bin.length; i++) out[i] = $.charCodeAt(bin, i); return $.box(out); }
    return $.box(data);
  };
})();
