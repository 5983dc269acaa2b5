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

  /** Validates a projection spec once and turns it into a node tree that `applyNode` walks. */
  function compile(spec, where) {
    if (spec === true) return KEEP;
    if (!isSpecObject(spec)) {
      const tip = spec === false || spec === 0 ? " (to drop fields use $omit)" : "";
      throw new TypeError(`api.project: the projection at ${where} must be true or an object, got ${describe(spec)}${tip}`);
    }
    const node = { path: null, slice: null, items: null, fields: null, omit: null };
    const addField = (name, child) => $.set((node.fields ||= new $.Map()), name, child);
    for (const key of $.keys(spec)) {
      const arg = spec[key];
      const at = `${where}.${key}`;
      if (key[0] !== "$") { addField(key, compile(arg, at)); continue; }
      if (key === "$path") {
        if (typeof arg !== "string" && !isStringList(arg)) throw new TypeError(`api.project: ${at} must be a dotted path string such as "a.b.0.c", got ${describe(arg)}`);
        node.path = typeof arg === "string" ? (arg === "" ? [] : $.split(arg, ".")) : $.slice(arg);
      } else if (key === "$slice") {
        const ok = isInt(arg) || (isArray(arg) && arg.length >= 1 && arg.length <= 2 && isInt(arg[0]) && (arg[1] == null || isInt(arg[1])));
        if (!ok) throw new TypeError(`api.project: ${at} must be an integer n (negative: the last n) or [start, end], got ${describe(arg)}`);
        node.slice = isInt(arg) ? (arg >= 0 ? [0, arg] : [arg, undefined]) : [arg[0], arg[1] ?? undefined];
      } else if (key === "$items") {
        node.items = compile(arg, at);
      } else if (key === "$pick" || key === "$omit") {
        if (!isStringList(arg)) throw new TypeError(`api.project: ${at} must be an array of field names, got ${describe(arg)}`);
        if (key === "$omit") node.omit = new $.Set(arg);
        else { node.fields ||= new $.Map(); for (const name of arg) if (!$.has(node.fields, name)) addField(name, KEEP); }
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

  function getPath(v, segments) {
    for (const seg of segments) {
      if (isArray(v) && /^-?\d+$/.test(seg)) {
        const i = $.Number(seg) < 0 ? v.length + $.Number(seg) : $.Number(seg);
        if (i < 0 || i >= v.length) return MISSING;
        v = v[i];
      } else if (v instanceof $.Map) {
        if (!$.has(v, seg)) return MISSING;
        v = $.get(v, seg);
      } else if (v !== null && typeof v === "object" && hasOwn(v, seg)) {
        v = v[seg];
      } else return MISSING;
    }
    return v;
  }

  function applyRecord(v, node) {
    if (isArray(v)) return $.map(v, (x) => orUndefined(applyRecord(x, node)));
    if (!isRecord(v)) return v; // numbers, null, Dates, Maps...: kept whole
    const out = {};
    if (node.fields) {
      for (const [name, child] of node.fields) {
        if (!hasOwn(v, name) || (node.omit && $.has(node.omit, name))) continue;
        const r = applyNode(v[name], child);
        if (r !== MISSING) setField(out, name, r);
      }
    } else {
      for (const name of $.keys(v)) if (!$.has(node.omit, name)) setField(out, name, v[name]);
    }
    return out;
  }
  // An own "__proto__" field (JSON.parse makes those) must stay a field, not become the prototype.
  const setField = (o, k, x) => (k === "__proto__" ? $.defineProperty(o, k, { value: x, enumerable: true, writable: true, configurable: true }) : (o[k] = x));

  function applyNode(v, node) {
    if (node === KEEP) return v;
    if (node.path) { v = getPath(v, node.path); if (v === MISSING) return MISSING; }
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
   * @returns {*} the projected value (undefined when a $path is missing)
   * @throws {TypeError} on an unknown $operator or a malformed spec
   * @example api.project(res, {$path: "results", $slice: 5, $pick: ["id", "title"]})
   */
  ns.project = function project(value, projection) {
    return orUndefined(applyNode(value, compile(projection, "projection")));
  };
})();
