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

  /** What a step client is told beside a view (the view itself says it in its footer): what was cut. */
  function stepNotes(env) {
    const lines = [];
    if (env.ok && env.cut) $.push(lines, `view cut to ${env.chars} of max ${env.maxChars} chars: ${$.join((env.omitted || []), "; ") || "shortened"}`);
    if (env.artifactError) $.push(lines, `the whole value could not be saved as an artifact: ${env.artifactError}`);
    return lines;
  }

  function notes(env) {
    const lines = [];
    if (env.ok && env.cut) $.push(lines, `(${stepNotes(env)[0]})`);
    if (env.artifact) $.push(lines, `full value: artifact ${env.artifact.name} (${env.artifact.bytes} bytes) — ${env.artifact.readWith}`);
    return lines;
  }

  /** The keys a step client reads a view by (result.js): the view as JSON, the notes, the display showing it. */
  function stepKeys(env, shown) {
    const keys = ns.stepKeys;
    const data = {};
    const json = ns.valueJson(env.ok ? env.value : env, 1 << 30);
    if (json === undefined) return data;
    data[keys.VALUE] = new ns.RawJson(json);
    const lines = stepNotes(env);
    if (lines.length) data[keys.NOTES] = lines;
    if (shown) data[keys.SHOWN] = shown;
    return data;
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

  /** The print envelope of `value`, boxed: projected, fitted into maxChars, the whole saved when cut.
   * `notes` receives what in the projection matched nothing (see project.js). */
  async function shaped(value, options, notes) {
    const maxChars = options.maxChars === undefined ? maxOutputChars : options.maxChars;
    const env = ns.shape.envelope(value, { projection: options.projection, maxChars, fit: options.fit !== false, notes });
    $.put(env, "maxChars", maxChars); // (put, not assigned: the envelope is a plain object, see intrinsics.js)
    if (!env.ok || env.cut) {
      try {
        $.put(env, "artifact", (await $.pinned(ns.saveArtifact(options.artifactName || "", value, { format: "json", auto: !options.artifactName }))).v);
      } catch (e) {
        if (e && (e.name === "InterruptError" || e.name === "TimeoutError")) throw e; // the cell is being stopped
        $.put(env, "artifactError", $.String(e && e.message));
      }
    }
    return $.box(env);
  }

  ns.view = { bundle, shaped, stepKeys };
  /** A cell result too large to show whole: its fitted view (boxed), the rest as an artifact; a
   * step client reads the view as JSON (the value once) and what was cut as a note. */
  ns.fitResult = async (value) => {
    const env = (await $.pinned(shaped(value, { __proto__: null }))).v;
    return $.box($.assign(bundle(env), stepKeys(env, null)));
  };
})();
