// Projections of JSON-like values: the engine of api.project, and of the projections api.print
// and ResultTooLarge hints use. Pure JS, no I/O.
(function installProject() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const isArray = $.isArray;
  const getProto = $.getPrototypeOf;
  const hasOwn = (o, k) => $.hasOwn(o, k);
  const objectTag = (v) => $.objectTag(v);
  const MISSING = $.Symbol("missing");

  const OPERATORS = ["$path", "$slice", "$items", "$pick", "$omit"];
  const KEEP = { keep: true };
  const isSpecObject = (s) => s !== null && typeof s === "object" && !isArray(s);
  const describe = (v) => (typeof v === "function" ? "a function" : isArray(v) ? "an array"
    : typeof v === "object" && v !== null ? "an object" : typeof v === "string" ? $.stringify(v) : $.String(v));
  const isInt = (n) => $.isInteger(n);
  const isStringList = (a) => isArray(a) && $.every(a, (x) => typeof x === "string");
  // Plain records (not Date, Map, Set, typed arrays or other exotic objects) are projected field by field.
  const isRecord = (v) => v !== null && typeof v === "object" && !isArray(v) &&
    (getProto(v) === $.ObjectProto || getProto(v) === null || objectTag(v) === "[object Object]");

  /**
   * Validates a projection spec once and turns it into a node tree that `applyNode` walks. `where`
   * is the node's place in the spec (projection.a.$items) and `label` the data it reaches (a[*]),
   * both for notes. Nodes are made per call, so they also keep what did not match (see `notes`).
   */
  function compile(spec, where, label) {
    if (spec === true) return KEEP;
    if (!isSpecObject(spec)) {
      const tip = spec === false || spec === 0 ? " (to drop fields use $omit)" : "";
      throw new TypeError(`api.project: the projection at ${where} must be true or an object, got ${describe(spec)}${tip}`);
    }
    const node = { path: null, slice: null, items: null, fields: null, omit: null, where, label,
      pathHits: 0, pathMisses: 0, pathMiss: null, fieldHits: null, fieldMisses: null };
    const addField = (name, child) => $.set((node.fields ||= new $.Map()), name, child);
    const specKeys = $.keys(spec);
    for (let s = 0; s < specKeys.length; s++) { // (index loops throughout: a cell may replace the iterators)
      const key = specKeys[s];
      const arg = spec[key];
      const at = `${where}.${key}`;
      if (key[0] !== "$") { addField(key, compile(arg, at, label ? `${label}.${key}` : key)); continue; }
      if (key === "$path") {
        if (typeof arg !== "string" && !isStringList(arg)) throw new TypeError(`api.project: ${at} must be a dotted path string such as "a.b.0.c", got ${describe(arg)}`);
        node.path = typeof arg === "string" ? (arg === "" ? [] : $.split(arg, ".")) : $.slice(arg);
      } else if (key === "$slice") {
        const ok = isInt(arg) || (isArray(arg) && arg.length >= 1 && arg.length <= 2 && isInt(arg[0]) && (arg[1] == null || isInt(arg[1])));
        if (!ok) throw new TypeError(`api.project: ${at} must be an integer n (negative: the last n) or [start, end], got ${describe(arg)}`);
        node.slice = isInt(arg) ? (arg >= 0 ? [0, arg] : [arg, undefined]) : [arg[0], arg[1] ?? undefined];
      } else if (key === "$items") {
        node.items = compile(arg, at, `${label}[*]`);
      } else if (key === "$pick" || key === "$omit") {
        if (!isStringList(arg)) throw new TypeError(`api.project: ${at} must be an array of field names, got ${describe(arg)}`);
        if (key === "$omit") node.omit = new $.Set(arg);
        else { node.fields ||= new $.Map(); for (let i = 0; i < arg.length; i++) if (!$.has(node.fields, arg[i])) addField(arg[i], KEEP); }
      } else {
        throw new TypeError(`api.project: unknown operator ${key} at ${where}; valid operators are ${$.join(OPERATORS, ", ")}`);
      }
    }
    if (node.items && (node.fields || node.omit)) {
      throw new TypeError(`api.project: ${where} combines $items with field selections; put the fields inside $items`);
    }
    node.record = !!(node.fields || node.omit);
    return node;
  }

  function getPath(v, node) {
    const segments = node.path;
    for (let k = 0; k < segments.length; k++) {
      const seg = segments[k];
      if (isArray(v) && $.test(/^-?\d+$/, seg)) {
        const i = $.Number(seg) < 0 ? v.length + $.Number(seg) : $.Number(seg);
        if (i < 0 || i >= v.length) return missed(node, v, k);
        v = v[i];
      } else if (v instanceof $.Map) {
        if (!$.has(v, seg)) return missed(node, v, k);
        v = $.get(v, seg);
      } else if (v !== null && typeof v === "object" && hasOwn(v, seg)) {
        v = v[seg];
      } else return missed(node, v, k);
    }
    node.pathHits++;
    return v;
  }
  // The first miss is kept (where the walk stopped, and on what) for the note; the text is made only then.
  const missed = (node, v, k) => { if (node.pathMisses++ === 0) node.pathMiss = { v, k }; return MISSING; };

  function applyRecord(v, node) {
    if (isArray(v)) return $.map(v, (x) => orUndefined(applyRecord(x, node)));
    if (!isRecord(v)) return v; // numbers, null, Dates, Maps...: kept whole
    const out = {};
    if (node.fields) {
      const fields = $.mapEntries(node.fields);
      for (let i = 0; i < fields.length; i++) {
        const name = fields[i][0];
        const child = fields[i][1];
        if (!hasOwn(v, name)) { fieldMissed(node, name, v); continue; }
        $.add((node.fieldHits ||= new $.Set()), name);
        if (node.omit && $.has(node.omit, name)) continue;
        const r = applyNode(v[name], child);
        if (r !== MISSING) setField(out, name, r);
      }
    } else {
      const names = $.keys(v);
      for (let i = 0; i < names.length; i++) if (!$.has(node.omit, names[i])) setField(out, names[i], v[names[i]]);
    }
    return out;
  }
  function fieldMissed(node, name, v) {
    const misses = (node.fieldMisses ||= new $.Map());
    const seen = $.get(misses, name);
    if (seen) seen.count++;
    else $.set(misses, name, { count: 1, v });
  }
  // An own "__proto__" field (JSON.parse makes those) must stay a field, not become the prototype.
  const setField = (o, k, x) => (k === "__proto__" ? $.defineProperty(o, k, { __proto__: null, value: x, enumerable: true, writable: true, configurable: true }) : (o[k] = x));

  function applyNode(v, node) {
    if (node === KEEP) return v;
    if (node.path) { v = getPath(v, node); if (v === MISSING) return MISSING; }
    if (typeof v === "string" && node.slice) return $.slice(v, node.slice[0], node.slice[1]);
    if (isArray(v)) {
      if (node.slice) v = $.slice(v, node.slice[0], node.slice[1]);
      if (node.items) return $.map(v, (x) => orUndefined(applyNode(x, node.items)));
      if (node.record) return applyRecord(v, node);
      return node.slice ? v : $.slice(v);
    }
    return node.record ? applyRecord(v, node) : v;
  }
  const orUndefined = (r) => (r === MISSING ? undefined : r);

  /**
   * A projected copy of `value` (never mutates it; parts kept with `true` are shared, not cloned).
   * A spec is `true` (keep whole) or an object of field names and operators:
   *   {a: true, b: {c: true}}  select fields (a missing field is left out); fields come out in spec order
   *   {$pick: ["a", "b"]}      keep just these fields    {$omit: ["x"]}  drop these fields
   *   {$slice: 3}              first 3 items (-3: the last 3; [start, end] also accepted); on strings too
   *   {$items: spec}           project each array item (after $slice)
   *   {$path: "a.b.0.c"}       go to that value first (numeric segments index arrays, -1 is the last item;
   *                            an array of segments also works)
   * Fields whose names start with "$" can only be selected with $pick.
   * An object spec with fields applied to an array applies to each element, so
   * `api.project(rows, {$slice: 2, title: true})` gives the titles of the first two rows.
   * Numbers, null, Dates, Maps and other exotic values are kept whole.
   * @param {*} value
   * @param {true|object} projection
   * @param {string[]} [notes] receives one line per $path or field that matched nothing, saying what
   *   was there instead (api.project writes them on stderr; the value stays what the spec gives)
   * @returns {*} the projected value (undefined when a $path is missing)
   * @throws {TypeError} on an unknown $operator or a malformed spec
   * @example api.project(res, {$path: "results", $slice: 5, $pick: ["id", "title"]})
   */
  ns.project = function project(value, projection, notes) {
    const root = compile(projection, "projection", "");
    const out = orUndefined(applyNode(value, root));
    if (notes) collectNotes(root, notes);
    return out;
  };

  // ---- notes: what matched nothing, and what was there instead ------------------------------

  const KEYS_SHOWN = 20;
  const quoteKey = (k) => ($.test(/^[A-Za-z_$][\w$]*$/, k) ? k : $.stringify(k));
  function keysThere(v) {
    try {
      let keys = [];
      let total;
      if (v instanceof $.Map) {
        $.iterate(v, (entry) => { $.push(keys, $.String(entry[0])); return keys.length <= KEYS_SHOWN; });
        total = $.mapSize(v);
      } else {
        keys = $.keys(v);
        total = keys.length;
      }
      if (!total) return "it has no keys";
      const more = total - $.min(keys.length, KEYS_SHOWN);
      return `keys there: ${$.join($.map($.slice(keys, 0, KEYS_SHOWN), quoteKey), ", ")}${more > 0 ? `, … (${more} more)` : ""}`;
    } catch (_) {
      return "its keys could not be read"; // a Proxy or a Map whose iterator throws: the note must not
    }
  }
  const items = (n) => `${n} item${n === 1 ? "" : "s"}`;
  const kindOf = (v) => (v === null || v === undefined ? $.String(v)
    : typeof v === "string" || typeof v === "symbol" || typeof v === "function" ? `a ${typeof v}`
    : `a ${typeof v} (${$.String(v)})`); // number, boolean, bigint: the value says what went wrong

  /** Why a $path stopped at segment k of value v: the segment, where, and what was there. */
  function pathMissText(node, { v, k }) {
    const seg = node.path[k];
    let at = node.label; // where the walk stopped, written as JS would reach it: a.b[0].c
    for (let i = 0; i < k; i++) at += $.test(/^-?\d+$/, node.path[i]) ? `[${node.path[i]}]` : at ? `.${node.path[i]}` : node.path[i];
    if (isArray(v)) {
      return $.test(/^-?\d+$/, seg) ? `${at || "the value"} has ${items(v.length)}, no index ${seg}`
        : `${at || "the value"} is an array of ${items(v.length)}; ${$.stringify(seg)} is not an index`;
    }
    if (v !== null && typeof v === "object") return `no key ${$.stringify(seg)} ${at ? `in ${at}` : "at the top level"}; ${keysThere(v)}`;
    return `${at || "the value"} is ${kindOf(v)}, which has no key ${$.stringify(seg)}`;
  }

  /** One line per $path or field that matched nothing anywhere (a miss in some items is data, not a mistake). */
  function collectNotes(node, out) {
    if (node === KEEP) return;
    const at = node.where === "projection" ? "" : ` at ${node.where}`;
    const times = (n, what) => (n > 1 ? ` (in ${n} ${what})` : "");
    if (node.path && node.pathMisses && !node.pathHits) {
      const shown = $.stringify($.join(node.path, "."));
      $.push(out, `$path ${shown}${at} matched nothing${times(node.pathMisses, "values")}: ${pathMissText(node, node.pathMiss)}`);
    }
    if (node.fields) {
      const fields = $.mapEntries(node.fields);
      for (let i = 0; i < fields.length; i++) {
        const name = fields[i][0];
        const child = fields[i][1];
        const miss = node.fieldMisses && $.get(node.fieldMisses, name);
        if (miss && !(node.fieldHits && $.has(node.fieldHits, name))) {
          $.push(out, `field ${$.stringify(name)}${at} matched nothing${times(miss.count, "records")}; ${keysThere(miss.v)}`);
        }
        collectNotes(child, out);
      }
    }
    if (node.items) collectNotes(node.items, out);
  }
})();
