// api.print, emit and api.project: show a compact, shaped view of a value while the value itself
// stays in the kernel. Shaping and views are the display layer's (display/js/fit.js, view.js).
(function installPrint() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const api = ns.api;

  /**
   * A projected copy of `value` (never mutates it; parts kept with `true` are shared, not cloned).
   * A spec is `true` (keep whole) or an object of field names and operators:
   *   {a: true, b: {c: true}}  select fields (a missing field is left out); fields come out in spec order
   *   {$pick: ["a", "b"]}      keep just these fields    {$omit: ["x"]}  drop these fields
   *   {$slice: 3}              first 3 items (-3: the last 3; [start, end] also accepted); on strings too
   *   {$items: spec}           project each array item (after $slice)
   *   {$path: "a.b.0.c"}       go to that value first (numeric segments index arrays, -1 is the last item)
   * An object spec with fields applied to an array applies to each element.
   * A $path or field that matches nothing anywhere gets one line on stderr saying where it stopped
   * and which keys were there; the result stays what the spec gives (undefined, or the field left out).
   * @template [T=any]
   * @param {*} value
   * @param {true|object} projection
   * @returns {T} the projected value (undefined when a $path is missing); `api.project<Book[]>(…)` says what it is
   * @example api.project(res, {$path: "results", $slice: 5, $pick: ["id", "title"]})
   */
  api.project = function project(value, projection) {
    const notes = [];
    const out = ns.project(value, projection, notes);
    for (let i = 0; i < notes.length; i++) ns.hint(`api.project: ${notes[i]}`);
    return out;
  };

  // As a cell's result the envelope adds nothing to a notebook (it is shown already); a step client
  // gets the view as the step's answer, and is told which display it was, not to repeat it.
  const answer = (env, shown) => $.defineProperty(env, $.symbolFor("Jupyter.display"), $.data(() => ns.view.stepKeys(env, shown)));
  let prints = 0;

  /**
   * Show a compact view of a value and return the envelope an agent reads. Never changes the
   * value. When the view had to be cut (or cannot fit), the whole value is saved as an
   * artifact and `envelope.artifact` is its handle.
   * @param {*} value
   * @param {{projection?: object|true, maxChars?: number, fit?: boolean, artifactName?: string}} [options]
   * @returns {Promise<{ok: true, value: *, chars: number, cut: boolean, omitted?: string[], artifact?: object}
   *   | {ok: false, error: "ResultTooLarge", chars: number, maxChars: number, largeFields: object[], hint: object, artifact?: object}>}
   */
  const NONE = $.freeze({ __proto__: null }); // default options: nothing inherited is read as one
  api.print = async function print(value, options = NONE) {
    return (await $.pinned(show(value, options))).v;
  };

  // Values of the runtime's own with a compact form to show (a plan: its summary, not every call; plan.js).
  const compactForms = new WeakMap();
  ns.compactForm = (value, form) => $.set(compactForms, value, form);

  /** api.print's work, its envelope boxed: emit waits for it, whatever `then` a cell put on objects. */
  async function show(value, options) {
    const compact = value !== null && typeof value === "object" ? $.get(compactForms, value) : undefined;
    if (compact !== undefined) value = compact();
    const notes = [];
    const env = (await $.pinned(ns.view.shaped(value, options, notes))).v;
    for (let i = 0; i < notes.length; i++) ns.hint(`api.print: projection ${notes[i]}`);
    const shown = `mcp2repl-print-${++prints}`;
    ns.display(ns.view.bundle(env), { "application/json": { expanded: false } }, shown, false);
    return $.box(answer(env, shown));
  }

  /**
   * Show a value now, before the cell's result (same view as api.print); returns nothing.
   * @param {*} value
   * @param {{projection?: object|true, maxChars?: number, fit?: boolean, artifactName?: string}} [options]
   * @returns {void}
   */
  const emit = (value, options = NONE) => {
    ns.hold(show(value, options));
    return undefined;
  };
  api.emit = emit;
  $.defineProperty(globalThis, "emit", { value: emit, writable: true, configurable: true, enumerable: false });
})();
