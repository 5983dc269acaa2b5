// Views of shaped values: the bundle api.print shows, and what a cell result too large for the
// notebook becomes. A view that had to be cut says what was cut, and the whole value is saved as
// an artifact whose handle the view shows, so nothing is lost, only moved out of the way.
(function installView() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  let maxOutputChars = 20000;
  ns.onData("limits", (limits) => { maxOutputChars = $.max(200, $.Number(limits.maxOutputChars) || 20000); });
  /** Characters a cell result or api.print view may take (MCP2REPL_MAX_OUTPUT_CHARS). */
  ns.maxOutputChars = () => maxOutputChars;

  const isRecords = (v) => $.isArray(v) && v.length > 0 && $.every(v, (r) => r !== null && typeof r === "object" && !$.isArray(r));

  function notes(env) {
    const lines = [];
    if (env.ok && env.cut) $.push(lines, `(view cut to ${env.chars} of max ${env.maxChars} chars: ${$.join((env.omitted || []), "; ") || "shortened"})`);
    if (env.artifact) $.push(lines, `full value: artifact ${env.artifact.name} (${env.artifact.bytes} bytes) — ${env.artifact.readWith}`);
    return lines;
  }

  /** The display bundle of a print envelope: the view plus notes on what was cut and where it went. */
  function bundle(env) {
    if (!env.ok) {
      const fields = $.join($.map(env.largeFields, (f) => `${f.path || "(value)"} ${f.chars} chars`), ", ");
      const hint = env.hint.projection ? `\nTry: api.print(value, { projection: ${$.stringify(env.hint.projection)} })` : "";
      const text = `ResultTooLarge: the value's JSON is ${env.chars} chars; the limit is ${env.maxChars}.\nLargest fields: ${fields}\n${env.hint.note}${hint}`;
      const extra = env.artifact ? `\nfull value: artifact ${env.artifact.name} — ${env.artifact.readWith}` : "";
      return { "text/plain": text + extra, "application/json": $.parse($.stringify(env)) };
    }
    const data = ns.richBundle(env.value) || { "text/plain": ns.inspect(env.value, { depth: 6, maxArrayLength: 200 }) };
    if (isRecords(env.value)) data["text/plain"] = ns.textTable(env.value, { style: "simple" });
    // Records: no JSON, so JupyterLab shows the table rather than its (higher-ranked) JSON viewer.
    const json = isRecords(env.value) ? undefined : ns.jsonValue(env.value);
    if (json !== undefined) data["application/json"] = new ns.RawJson(json);
    else delete data["application/json"];
    const extra = notes(env);
    if (extra.length) {
      data["text/plain"] += "\n" + $.join(extra, "\n");
      if (data["text/html"]) data["text/html"] += $.join($.map(extra, (l) => `<div style="opacity:.7;font-family:monospace">${ns.escapeHtml(l)}</div>`), "");
      if (env.artifact) data["text/html"] = (data["text/html"] || "") + ns.handleBundle(env.artifact)["text/html"];
    }
    return data;
  }

  /** The print envelope of `value`: projected, fitted into maxChars, the whole saved when cut.
   * `notes` receives what in the projection matched nothing (see project.js). */
  async function shaped(value, options, notes) {
    const maxChars = options.maxChars === undefined ? maxOutputChars : options.maxChars;
    const env = ns.shape.envelope(value, { projection: options.projection, maxChars, fit: options.fit !== false, notes });
    env.maxChars = maxChars;
    if (!env.ok || env.cut) {
      try {
        env.artifact = await ns.saveArtifact(options.artifactName || "", value, { format: "json", auto: !options.artifactName });
      } catch (e) {
        if (e && (e.name === "InterruptError" || e.name === "TimeoutError")) throw e; // the cell is being stopped
        env.artifactError = $.String(e && e.message);
      }
    }
    return env;
  }

  ns.view = { bundle, shaped };
  /** A cell result too large to show whole: its fitted view, the rest as an artifact. */
  ns.fitResult = async (value) => bundle(await shaped(value, {}));
})();
