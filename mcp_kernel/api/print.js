// api.print and emit: show a compact, shaped view of a value while the value itself stays in
// the kernel. Anything cut from the view is saved whole as an artifact, and the view says so.
// The same path keeps oversized cell results from flooding a notebook or an agent's context.
(function installPrint() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const api = ns.api;
  /** Characters a cell result or api.print view may take (MCP2REPL_MAX_OUTPUT_CHARS). */
  if (!ns.maxOutputChars) ns.maxOutputChars = 20000;
  const pending = new Set();
  ns.pendingOutput = pending;
  const isRecords = (v) => Array.isArray(v) && v.length > 0 && v.every((r) => r !== null && typeof r === "object" && !Array.isArray(r));

  const hidden = (obj) => Object.defineProperty(obj, Symbol.for("Jupyter.display"), { value: () => null, enumerable: false });

  function notes(env) {
    const lines = [];
    if (env.ok && env.cut) lines.push(`(view cut to ${env.chars} of max ${env.maxChars} chars: ${(env.omitted || []).join("; ") || "shortened"})`);
    if (env.artifact) lines.push(`full value: artifact ${env.artifact.name} (${env.artifact.bytes} bytes) — ${env.artifact.readWith}`);
    return lines;
  }

  /** The display bundle of a print envelope: the view plus notes on what was cut and where it went. */
  async function printBundle(env) {
    if (!env.ok) {
      const fields = env.largeFields.map((f) => `${f.path || "(value)"} ${f.chars} chars`).join(", ");
      const hint = env.hint.projection ? `\nTry: api.print(value, { projection: ${JSON.stringify(env.hint.projection)} })` : "";
      const text = `ResultTooLarge: the value's JSON is ${env.chars} chars; the limit is ${env.maxChars}.\nLargest fields: ${fields}\n${env.hint.note}${hint}`;
      const extra = env.artifact ? `\nfull value: artifact ${env.artifact.name} — ${env.artifact.readWith}` : "";
      return { "text/plain": text + extra, "application/json": JSON.parse(JSON.stringify(env)) };
    }
    const data = ns.richBundle(env.value) || { "text/plain": ns.inspect(env.value, { depth: 6, maxArrayLength: 200 }) };
    if (isRecords(env.value)) {
      try {
        data["text/plain"] = await ns.call("api.textTable", { rows: env.value });
      } catch (_) { /* keep the inspect view */ }
    }
    // Records: no JSON, so JupyterLab shows the table rather than its (higher-ranked) JSON viewer.
    const json = isRecords(env.value) ? undefined : ns.jsonValue(env.value);
    if (json !== undefined) data["application/json"] = JSON.parse(json);
    else delete data["application/json"];
    const extra = notes(env);
    if (extra.length) {
      data["text/plain"] += "\n" + extra.join("\n");
      if (data["text/html"]) data["text/html"] += extra.map((l) => `<div style="opacity:.7;font-family:monospace">${ns.escapeHtml(l)}</div>`).join("");
      if (env.artifact) data["text/html"] = (data["text/html"] || "") + ns.handleBundle(env.artifact)["text/html"];
    }
    return data;
  }

  async function shaped(value, options) {
    const maxChars = options.maxChars === undefined ? ns.maxOutputChars : options.maxChars;
    const env = ns.shape.envelope(value, { projection: options.projection, maxChars, fit: options.fit !== false });
    env.maxChars = maxChars;
    if (!env.ok || env.cut) {
      try {
        env.artifact = await api.saveArtifact(options.artifactName || "", value, { format: "json" });
      } catch (e) {
        env.artifactError = String(e && e.message);
      }
    }
    return env;
  }

  /**
   * Show a compact view of a value and return the envelope an agent reads. Never changes the
   * value. When the view had to be cut (or cannot fit), the whole value is saved as an
   * artifact and `envelope.artifact` is its handle.
   * @param {*} value
   * @param {{projection?: object|true, maxChars?: number, fit?: boolean, artifactName?: string}} [options]
   * @returns {Promise<{ok: true, value: *, chars: number, cut: boolean, omitted?: string[], artifact?: object}
   *   | {ok: false, error: "ResultTooLarge", chars: number, maxChars: number, largeFields: object[], hint: object, artifact?: object}>}
   */
  api.print = async function print(value, options = {}) {
    const env = await shaped(value, options);
    ns.display(await printBundle(env), { "application/json": { expanded: false } }, null, false);
    return hidden(env); // already shown: as a cell result it adds nothing
  };

  /** Show a value now, before the cell's result (same view as api.print); returns nothing. */
  const emit = (value, options = {}) => {
    const p = api.print(value, options).then(() => undefined);
    pending.add(p);
    p.finally(() => pending.delete(p));
    return undefined;
  };
  api.emit = emit;
  Object.defineProperty(globalThis, "emit", { value: emit, writable: true, configurable: true, enumerable: false });

  /** bridge.js: a cell result too large to show whole becomes a fitted view plus an artifact. */
  ns.fitResult = async function fitResult(value) {
    return printBundle(await shaped(value, {}));
  };
})();
