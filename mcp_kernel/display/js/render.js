// How values look in a notebook: MCP content (images, audio, resources, links) renders
// natively, artifact handles as small cards, and arrays of records get an HTML table beside the
// JSON. result.js's bundle() asks `__mcp2repl.richBundle(value)` first; undefined means "use the
// defaults".
(function installRender() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  /** HTML-escape text (every display file that writes HTML uses this one). */
  ns.escapeHtml = (s) => $.replace($.String(s), /[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

  const MAX_ROWS = 50;
  const MAX_COLS = 20;
  const esc = ns.escapeHtml;
  const isPlain = (v) => v !== null && typeof v === "object" && !$.isArray(v) && ($.getPrototypeOf(v) === $.ObjectProto || $.getPrototypeOf(v) === null);
  const kb = (b64) => `${((b64.length * 3) / 4 / 1024).toFixed(1)} KB`;

  // Values are told apart by their own fields (content items and handles are plain JSON data):
  // what a cell put on Object.prototype makes no value one.
  const own = $.own;
  /** Is this an MCP content item (from a tool result)? */
  function contentKind(v) {
    if (!isPlain(v)) return null;
    const type = own(v, "type");
    if (typeof type !== "string") return null;
    if ((type === "image" || type === "audio") && typeof own(v, "data") === "string" && typeof own(v, "mimeType") === "string") return type;
    if (type === "resource" && isPlain(own(v, "resource")) && typeof own(v.resource, "uri") === "string") return "resource";
    if (type === "resource_link" && typeof own(v, "uri") === "string") return "resource_link";
    if (type === "text" && typeof own(v, "text") === "string") return "text";
    return null;
  }

  function itemHtml(v) {
    switch (contentKind(v)) {
      case "image": return `<img src="data:${esc(v.mimeType)};base64,${v.data}" alt="${esc(v.mimeType)} image">`;
      case "audio": return `<audio controls src="data:${esc(v.mimeType)};base64,${v.data}"></audio>`;
      case "resource": {
        const r = v.resource;
        if (typeof r.text === "string") return `<div><code>${esc(r.uri)}</code><pre>${esc(r.text)}</pre></div>`;
        return `<div><code>${esc(r.uri)}</code> (${esc(r.mimeType || "binary")}, ${kb(r.blob || "")})</div>`;
      }
      case "resource_link": return `<a href="${esc(v.uri)}" target="_blank">${esc(v.title || v.name || v.uri)}</a>${v.description ? " – " + esc(v.description) : ""}`;
      case "text": return `<p>${esc(v.text)}</p>`;
      default: return typeof v === "string" ? `<p>${esc(v)}</p>` : `<pre>${esc(ns.inspect(v))}</pre>`;
    }
  }

  function itemText(v) {
    switch (contentKind(v)) {
      case "image": case "audio": return `<${v.mimeType} ${v.type}, ${kb(v.data)}>`;
      case "resource": return typeof v.resource.text === "string" ? `${v.resource.uri}:\n${v.resource.text}` : `<${v.resource.mimeType || "binary"} resource ${v.resource.uri}>`;
      case "resource_link": return `${v.title || v.name || v.uri} <${v.uri}>`;
      case "text": return v.text;
      default: return typeof v === "string" ? v : ns.inspect(v);
    }
  }

  /** One MCP content item as a MIME bundle. */
  function contentBundle(v) {
    const kind = contentKind(v);
    const data = { "text/plain": itemText(v) };
    if (kind === "image" && $.test(/^image\/(png|jpeg|gif|webp|svg\+xml)$/, v.mimeType)) {
      data[v.mimeType] = v.mimeType === "image/svg+xml" ? ns.web.atob(v.data) : v.data;
    } else if (kind === "resource" && typeof v.resource.text === "string" && $.test(/^text\/(markdown|html)$/, v.resource.mimeType || "")) {
      data[v.resource.mimeType] = v.resource.text;
    } else if (kind === "resource_link") {
      data["text/markdown"] = `[${v.title || v.name || v.uri}](${v.uri})`;
      data["text/html"] = itemHtml(v);
    } else if (kind !== "text") {
      data["text/html"] = itemHtml(v);
    }
    return data;
  }

  /** An HTML table for an array of records, capped, escaped. */
  function table(rows) {
    const shown = $.slice(rows, 0, MAX_ROWS);
    const cols = [];
    for (let i = 0; i < shown.length; i++) {
      const keys = $.keys(shown[i]);
      for (let j = 0; j < keys.length; j++) if (!$.includes(cols, keys[j]) && cols.length < MAX_COLS) $.push(cols, keys[j]);
    }
    const cell = (v) => {
      if (v === null || v === undefined) return "";
      if (typeof v === "object") { const s = ns.inspect(v, { depth: 1, breakLength: Infinity }); return esc(s.length > 120 ? $.slice(s, 0, 119) + "…" : s); }
      const s = $.String(v);
      return esc(s.length > 200 ? $.slice(s, 0, 199) + "…" : s);
    };
    let out = '<table class="mcp2repl-table"><thead><tr>' + $.join($.map(cols, (c) => `<th>${esc(c)}</th>`), "") + "</tr></thead><tbody>";
    for (let i = 0; i < shown.length; i++) out += "<tr>" + $.join($.map(cols, (c) => `<td>${cell(shown[i][c])}</td>`), "") + "</tr>";
    out += "</tbody></table>";
    if (rows.length > shown.length) out += `<p><em>${rows.length - shown.length} more rows</em></p>`;
    return out;
  }
  const isHandle = (v) => isPlain(v) && own(v, "kind") === "artifact" && typeof own(v, "name") === "string" && typeof own(v, "readWith") === "string";
  const size = (n) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`);

  /** An artifact handle as a small card: name, size, format, how to read it, a link to the file. */
  function handleBundle(h) {
    const link = h.relPath && !$.startsWith(h.relPath, "..") ? ` · <a href="${esc(h.relPath)}" target="_blank">open file</a>` : "";
    return {
      "text/plain": `artifact ${h.name} (${size(h.bytes)}, ${h.format}); read it with ${h.readWith}`,
      "text/html": `<div class="mcp2repl-artifact" style="border:1px solid #8884;border-radius:6px;padding:6px 10px;display:inline-block;font-family:monospace">` +
        `📦 <b>${esc(h.name)}</b> · ${size(h.bytes)} · ${esc(h.format)}${link}<br><code>${esc(h.readWith)}</code></div>`,
      "application/json": h,
    };
  }
  ns.handleBundle = handleBundle;

  /** Rich bundle for values that have one; undefined for everything else. */
  ns.richBundle = function richBundle(value) {
    if (isHandle(value)) return handleBundle(value);
    if (contentKind(value)) return contentBundle(value);
    if ($.isArray(value) && value.length && $.some(value, (v) => contentKind(v) && contentKind(v) !== "text")) {
      return {
        "text/plain": $.join($.map(value, itemText), "\n"),
        "text/html": `<div class="mcp2repl-content">${$.join($.map(value, itemHtml), "\n")}</div>`,
      };
    }
    if ($.isArray(value) && value.length && $.every(value, isPlain)) {
      // A cell result keeps application/json (agents read it; JupyterLab shows its JSON viewer,
      // which it ranks above HTML); api.print drops it so the table is what Lab shows.
      const data = { "text/plain": ns.inspect(value), "text/html": table(value) };
      const json = ns.jsonValue(value);
      if (json !== undefined) data["application/json"] = new ns.RawJson(json);
      return data;
    }
    return undefined;
  };
})();
