// Fitting any value into a JSON text of at most maxChars characters: what api.print shows and
// what an oversized cell result becomes. Cuts are deterministic and said (`steps`); a value that
// cannot fit gets its biggest fields and a projection that would. Pure JS, no I/O.
(function installFit() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const isArray = $.isArray;
  const getProto = $.getPrototypeOf;
  const objectTag = (v) => $.objectTag(v);
  const isRecord = (v) => v !== null && typeof v === "object" && !isArray(v) &&
    (getProto(v) === $.ObjectProto || getProto(v) === null || objectTag(v) === "[object Object]");
  // ---------------------------------------------------------------- JSON view of any value
  const OMIT = $.Symbol("omit");
  /** The JSON-able stand-in for `v`: a primitive, OMIT, or a container (array, record, Map, Set). */
  function normalize(v) {
    switch (typeof v) {
      case "string": case "boolean": return v;
      case "number": return $.isFinite(v) ? v : null;
      case "bigint": return `${v}n`;
      case "undefined": return OMIT;
      case "symbol": return v.toString();
      case "function": return `[Function ${v.name || "(anonymous)"}]`;
    }
    if (v === null || isArray(v)) return v;
    const proto = getProto(v);
    if ((proto === $.ObjectProto || proto === null) && typeof v.toJSON !== "function") return v;
    if (v instanceof $.Date) return $.isNaN(v.getTime()) ? null : v.toISOString();
    if ($.isView(v)) return `[${$.slice(objectTag(v), 8, -1)} ${v.byteLength} bytes]`;
    if (v instanceof $.ArrayBuffer) return `[ArrayBuffer ${v.byteLength} bytes]`;
    if (v instanceof $.Map || v instanceof $.Set) return v;
    if (v instanceof $.RegExp) return $.String(v);
    if (v instanceof $.Error) return `${v.name}: ${v.message}`;
    if (v instanceof $.Promise) return "[Promise]";
    if (v instanceof $.Number || v instanceof $.String || v instanceof $.Boolean) return normalize(v.valueOf());
    if (typeof v.toJSON === "function") {
      try { const j = v.toJSON(); return j !== null && typeof j === "object" && typeof j.toJSON === "function" ? "[toJSON]" : normalize(j); }
      catch (e) { return `[toJSON threw: ${e && e.message}]`; }
    }
    return v;
  }
  const mapKey = (k) => (typeof k === "string" ? k : k !== null && typeof k === "object" ? `[${$.slice(objectTag(k), 8, -1)}]` : $.String(k));
  function readProp(obj, k) {
    try { return obj[k]; } catch (e) { return `[getter threw: ${e && e.message}]`; }
  }
  const segment = (k) => ($.test(/^[A-Za-z_$][\w$]*$/, k) ? `.${k}` : `[${$.stringify(k)}]`);
  const showPath = (p) => (p === "" ? "(root)" : p[0] === "." ? $.slice(p, 1) : p);
  const OVER = { over: true };
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const collapsed = (list, n) => (list ? `[…${plural(n, "item")}]` : `{…${plural(n, "key")}}`);
  const NO_LIMITS = { items: Infinity, str: Infinity, depth: Infinity, keys: Infinity };
  const HARD_DEPTH = 200; // deeper containers become markers even without limits (no stack overflow)

  /**
   * Renders `v` as compact JSON under `limits`, throwing OVER as soon as the text exceeds
   * `budget`. Work is proportional to the text produced (plus Object.keys of visited objects).
   */
  function render(v, limits, budget, keyCache) {
    const st = { out: "", limits, budget, keyCache, stack: new $.Set(), path: [], cuts: new $.Map(), kinds: new $.Set(), cut: false, converted: false };
    const nv = normalize(v);
    if (nv !== v) st.converted = true;
    writeValue(nv === OMIT ? null : nv, 0, st);
    return st;
  }
  function emit(st, s) {
    st.out += s;
    if (st.out.length > st.budget) throw OVER;
  }
  function noteCut(st, kind, n) {
    st.cut = true;
    $.add(st.kinds, kind);
    const p = $.join(st.path, "");
    let rec = $.get(st.cuts, p);
    if (!rec) $.set(st.cuts, p, (rec = { items: 0, strings: 0, keys: 0, depth: 0 }));
    rec[kind] += n;
  }
  function writeString(s, st) {
    const max = st.limits.str;
    if (s.length > max) {
      let m = max;
      const code = $.charCodeAt(s, m - 1);
      if (code >= 0xd800 && code <= 0xdbff) m -= 1; // do not split a surrogate pair
      const tail = `…(${plural(s.length - m, "more char")})`;
      // Cut only when it saves a fifth or more: "…(9 more chars)" markers cost more than they save.
      if (m + tail.length <= s.length * 0.8) { s = $.slice(s, 0, m) + tail; noteCut(st, "strings", 1); }
    }
    if (st.out.length + s.length + 2 > st.budget) throw OVER; // before escaping a huge string
    emit(st, $.stringify(s));
  }
  function keysOf(v, st) {
    let keys = $.get(st.keyCache, v);
    if (!keys) { keys = $.keys(v); if (keys.length > 64) $.set(st.keyCache, v, keys); }
    return keys;
  }
  function writeValue(v, depth, st) {
    if (typeof v === "string") return writeString(v, st);
    if (v === null || typeof v !== "object") return emit(st, v === null ? "null" : $.stringify(v));
    const { limits } = st;
    if ($.has(st.stack, v)) { st.converted = true; return emit(st, '"[Circular]"'); }
    const list = isArray(v) || v instanceof $.Set;
    if (v instanceof $.Set || v instanceof $.Map) st.converted = true;
    const size = isArray(v) ? v.length : v instanceof $.Set || v instanceof $.Map ? v.size : keysOf(v, st).length;
    if (size === 0) return emit(st, list ? "[]" : "{}");
    if (depth >= limits.depth || depth >= HARD_DEPTH) {
      noteCut(st, "depth", 1);
      return emit(st, $.stringify(collapsed(list, size)));
    }
    $.add(st.stack, v);
    const max = list ? limits.items : limits.keys;
    const shown = $.min(size, max);
    emit(st, list ? "[" : "{");
    let i = 0;
    let first = true;
    const child = (key, item) => {
      const nv = normalize(item);
      if (nv !== item) st.converted = true;
      if (nv === OMIT && !list) return;
      if (!first) emit(st, ",");
      first = false;
      if (!list) emit(st, `${$.stringify(key)}:`);
      $.push(st.path, list ? "[*]" : segment(key));
      writeValue(nv === OMIT ? null : nv, depth + 1, st);
      $.pop(st.path);
    };
    if (isArray(v)) for (; i < shown; i++) child(i, v[i]);
    else if (v instanceof $.Set || v instanceof $.Map) {
      // (iterated through the captured built-ins, like every loop here: a cell may replace the iterators)
      $.iterate(v, (entry) => { if (i++ >= shown) return false; if (list) child(i, entry); else child(mapKey(entry[0]), entry[1]); });
      i = shown;
    } else {
      const keys = keysOf(v, st);
      for (; i < shown; i++) child(keys[i], readProp(v, keys[i]));
    }
    if (shown < size) {
      noteCut(st, list ? "items" : "keys", size - shown);
      if (!first) emit(st, ",");
      emit(st, list ? `"…${plural(size - shown, "more item")}"` : `"…":"${plural(size - shown, "more key")}"`);
    }
    emit(st, list ? "]" : "}");
    $.delete(st.stack, v);
  }
  function tryRender(v, limits, budget, keyCache) {
    try { return render(v, limits, budget, keyCache); } catch (e) { if (e === OVER) return null; throw e; }
  }
  /** Size of the uncut JSON view of `v`, or Infinity when it exceeds `cap`. */
  function sizeOf(v, cap) {
    const st = tryRender(v, NO_LIMITS, cap, new $.Map());
    return st && !st.cut ? st.out.length : Infinity;
  }

  // ---------------------------------------------------------------- fit
  // From generous to tight: [max array items, max string chars, max depth, max object keys].
  // Strings and long arrays shrink first; keys and depth (the structure) go last.
  const LADDER = $.map([[Infinity, 2000, Infinity, Infinity], [200, 1000, 24, 500], [100, 500, 16, 300], [50, 300, 12, 200],
    [25, 200, 10, 100], [12, 120, 8, 60], [8, 80, 6, 40], [5, 60, 5, 25], [3, 40, 4, 16], [2, 30, 3, 10],
    [1, 20, 2, 6], [1, 12, 1, 4], [0, 8, 1, 3]], ([items, str, depth, keys]) => ({ items, str, depth, keys }));
  const DIMS = [["depth", "depth"], ["keys", "keys"], ["str", "strings"], ["items", "items"]]; // structure first

  function describeCuts(cuts) {
    const lines = [];
    const all = $.mapEntries(cuts);
    for (let i = 0; i < all.length; i++) {
      const rec = all[i][1];
      const at = showPath(all[i][0]);
      if (rec.items) $.push(lines, `${at}: ${plural(rec.items, "more item")}`);
      if (rec.keys) $.push(lines, `${at}: ${plural(rec.keys, "more key")}`);
      if (rec.strings) $.push(lines, `${at}: ${rec.strings === 1 ? "string" : `${rec.strings} strings`} shortened`);
      if (rec.depth) $.push(lines, `${at}: ${rec.depth === 1 ? "value" : `${rec.depth} values`} collapsed (too deep)`);
    }
    if (lines.length <= 30) return lines;
    const kept = $.slice(lines, 0, 30);
    $.push(kept, `…and ${lines.length - 30} more`);
    return kept;
  }

  /**
   * Fits `value` into a JSON text of at most `maxChars` characters, cutting array items,
   * string lengths, depth and object keys along a fixed ladder (then widening the first
   * limits that fit by bisection). Deterministic; work is about proportional to maxChars.
   * @returns {{json: string, cut: boolean, steps: string[], limits: object|null}|
   *           {tooLarge: true, chars: number, largeFields: {path: string, chars: number}[], hint: {projection: *, note: string}}}
   *   `steps` says what was cut, e.g. "results: 940 more items".
   */
  function fit(value, maxChars = 20000) {
    maxChars = $.max(0, $.floor($.Number(maxChars))) || 0;
    const keyCache = new $.Map();
    const whole = tryRender(value, NO_LIMITS, maxChars, keyCache);
    if (whole && !whole.cut) return { json: whole.out, cut: false, steps: [], limits: null };
    let found = -1;
    let best = null;
    for (let i = 0; i < LADDER.length && found < 0; i++) {
      best = tryRender(value, LADDER[i], maxChars, keyCache);
      if (best) found = i;
    }
    if (found < 0) return tooLarge(value, maxChars);
    let limits = LADDER[found];
    const looser = found > 0 ? LADDER[found - 1] : NO_LIMITS;
    for (let d = 0; d < DIMS.length; d++) { // widen each limit that cut something, as far as it still fits
      const dim = DIMS[d][0];
      const kind = DIMS[d][1];
      if (!$.has(best.kinds, kind)) continue;
      let lo = limits[dim];
      let hi = $.min(looser[dim], 1 << 20);
      while (lo < hi) {
        const mid = $.ceil((lo + hi) / 2);
        const trial = { ...limits, [dim]: mid };
        const st = tryRender(value, trial, maxChars, keyCache);
        if (st) { lo = mid; limits = trial; best = st; } else hi = mid - 1;
      }
    }
    return { json: best.out, cut: best.cut, steps: describeCuts(best.cuts), limits };
  }

  // ---------------------------------------------------------------- too large: where is the bulk?
  /**
   * Uncut JSON size of `value`, plus sizes summed per wildcard path (array indices as [*]) for
   * paths up to 3 keys deep. Counts characters without building the text.
   */
  function measure(value) {
    const root = { size: 0, kids: new $.Map(), wildcard: false };
    const stack = new $.Set();
    let nodes = 0;
    const escapes = /[\u0000-\u001f"\\\ud800-\udfff]/;
    const strSize = (s) => ($.test(escapes, s) ? $.stringify(s).length : s.length + 2);
    const kidOf = (t, key, list, keyDepth) => {
      if (!t || keyDepth > 3) return null;
      const seg = list ? "[*]" : segment(key);
      let k = $.get(t.kids, seg);
      if (!k && nodes < 5000) { nodes++; $.set(t.kids, seg, (k = { size: 0, kids: new $.Map(), wildcard: seg === "[*]" })); }
      return k || null;
    };
    let steps = 0;
    function walk(v, depth, t, keyDepth) {
      if ((++steps & 4095) === 0) ns.checkStop(); // the whole value is walked: let an interrupt stop it
      let size;
      if (typeof v === "string") size = strSize(v);
      else if (v === null || typeof v !== "object") size = v === null ? 4 : $.stringify(v).length;
      else if ($.has(stack, v)) size = 12;
      else {
        const list = isArray(v) || v instanceof $.Set;
        const n = isArray(v) ? v.length : v instanceof $.Set || v instanceof $.Map ? v.size : $.keys(v).length;
        if (n === 0) size = 2;
        else if (depth >= HARD_DEPTH) size = strSize(collapsed(list, n));
        else {
          $.add(stack, v);
          size = 1;
          let count = 0;
          const child = (key, item) => {
            const nv = normalize(item);
            if (nv === OMIT && !list) return;
            size += (count++ ? 1 : 0) + (list ? 0 : strSize(key) + 1);
            const kd = keyDepth + (list ? 0 : 1);
            size += walk(nv === OMIT ? null : nv, depth + 1, kidOf(t, key, list, kd), kd);
          };
          if (isArray(v)) for (let i = 0; i < v.length; i++) child(i, v[i]);
          else if (v instanceof $.Set) { const items = $.setValues(v); for (let i = 0; i < items.length; i++) child(0, items[i]); }
          else if (v instanceof $.Map) { const items = $.mapEntries(v); for (let i = 0; i < items.length; i++) child(mapKey(items[i][0]), items[i][1]); }
          else { const keys = $.keys(v); for (let i = 0; i < keys.length; i++) child(keys[i], readProp(v, keys[i])); }
          size += 1;
          $.delete(stack, v);
        }
      }
      if (t) t.size += size;
      return size;
    }
    const nv = normalize(value);
    walk(nv === OMIT ? null : nv, 0, root, 0);
    return root;
  }

  /** The `count` paths holding the most JSON characters, biggest first. */
  function largeFields(tree, count = 5) {
    const all = [];
    (function collect(t, p) {
      const kids = $.mapEntries(t.kids);
      for (let i = 0; i < kids.length; i++) {
        const kid = kids[i][1];
        const q = p + kids[i][0];
        if (!kid.wildcard) $.push(all, { path: showPath(q), chars: kid.size });
        collect(kid, q);
      }
    })(tree, "");
    $.sort(all, (a, b) => b.chars - a.chars || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return $.slice(all, 0, count);
  }

  /**
   * A projection of `v` whose uncut JSON fits in `budget` chars: small fields whole, big arrays
   * sliced, big strings sliced, big records projected recursively. Returns {spec, size} or null.
   */
  function hintFor(v, budget, notes, where, level) {
    const nv = normalize(v);
    const whole = sizeOf(nv, budget);
    if (whole <= budget) return { spec: true, size: whole };
    if (level > 4) return null;
    if (typeof nv === "string" && budget >= 2) {
      let lo = 0; // longest prefix whose JSON fits (bisection on the escaped length)
      let hi = $.min(nv.length, budget);
      while (lo < hi) { const mid = $.ceil((lo + hi) / 2); if ($.stringify($.slice(nv, 0, mid)).length <= budget) lo = mid; else hi = mid - 1; }
      $.push(notes, `the first ${lo} of ${nv.length} characters of ${showPath(where)}`);
      return { spec: { $slice: lo }, size: $.stringify($.slice(nv, 0, lo)).length };
    }
    if (isArray(nv) && budget >= 2) {
      let used = 2;
      let n = 0;
      for (; n < nv.length; n++) {
        const s = sizeOf(orNull(nv[n]), budget - used - (n ? 1 : 0));
        if (used + s + (n ? 1 : 0) > budget) break;
        used += s + (n ? 1 : 0);
      }
      if (n > 0) { $.push(notes, `the first ${n} of ${nv.length} items of ${showPath(where)}`); return { spec: { $slice: n }, size: used }; }
      const sub = hintFor(nv[0], budget - 2, notes, `${where}[0]`, level + 1);
      if (sub) $.unshift(notes, `only the first of ${nv.length} items of ${showPath(where)}`);
      return sub ? { spec: { $slice: 1, $items: sub.spec }, size: sub.size + 2 } : { spec: { $slice: 0 }, size: 2 };
    }
    if (!isRecord(nv) || budget < 2) return null;
    const fields = $.filter($.map($.keys(nv), (k, i) => ({ k, i, v: readProp(nv, k) })), (f) => normalize(f.v) !== OMIT);
    for (let i = 0; i < fields.length; i++) fields[i].size = sizeOf(normalize(fields[i].v), budget);
    $.sort(fields, (a, b) => a.size - b.size || a.i - b.i);
    let used = 2;
    const picked = [];
    const sub = {};
    const cost = (f, size) => (picked.length + $.keys(sub).length ? 1 : 0) + $.stringify(f.k).length + 1 + size;
    // Small fields first (up to half the budget), then the rest whole or projected, smallest first.
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      if (used + cost(f, f.size) <= budget / 2) { used += cost(f, f.size); $.push(picked, f); f.done = true; }
    }
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      if (f.done) continue;
      if (used + cost(f, f.size) <= budget) { used += cost(f, f.size); $.push(picked, f); continue; }
      const room = budget - used - cost(f, 0);
      const h = room >= 2 && f.k[0] !== "$" ? hintFor(f.v, room, notes, where + segment(f.k), level + 1) : null;
      if (h && h.spec !== true) { used += cost(f, h.size); sub[f.k] = h.spec; }
    }
    if (!picked.length && !$.keys(sub).length) return null; // nothing worth keeping
    $.sort(picked, (a, b) => a.i - b.i);
    if (picked.length) $.unshift(notes, `${picked.length} of ${fields.length} ${where ? `fields of ${showPath(where)}` : "top-level fields"} whole`);
    const spec = picked.length ? { $pick: $.map(picked, (f) => f.k), ...sub } : sub;
    return { spec, size: used };
  }
  const orNull = (x) => { const n = normalize(x); return n === OMIT ? null : n; };

  function tooLarge(value, maxChars) {
    const tree = measure(value);
    const notes = [];
    let h = null;
    try { h = hintFor(value, maxChars, notes, "", 0); } catch { h = null; }
    // Belt and braces: only hand out a projection that really fits.
    if (h && !(sizeOf(ns.project(value, h.spec), maxChars) <= maxChars)) h = null;
    const kept = notes.length > 4 ? $.slice(notes, 0, 4) : notes;
    if (notes.length > 4) $.push(kept, "more");
    const list = kept.length > 1 ? `${$.join($.slice(kept, 0, -1), ", ")} and ${kept[kept.length - 1]}` : kept[0] || "an empty shell";
    const note = h ? `Apply this projection to keep ${list}; the result fits in ${maxChars} characters.`
      : `No projection of this value fits in ${maxChars} characters; raise maxChars or select a smaller part.`;
    return { tooLarge: true, chars: tree.size, largeFields: largeFields(tree), hint: { projection: h ? h.spec : null, note } };
  }

  /**
   * What api.print shows: the (projected) value whole when its JSON fits in maxChars (as is when it
   * is plain JSON, else its JSON view), else the JSON view cut to fit (`fit: true`, with `omitted`
   * saying what was cut) or a ResultTooLarge error with the biggest paths and a projection hint.
   * @param {*} value
   * @param {{projection?: true|object, maxChars?: number, fit?: boolean, notes?: string[]}} [opts]
   *   notes: receives what in the projection matched nothing (see project.js)
   */
  function envelope(value, { projection, maxChars = 20000, fit: doFit = true, notes } = {}) {
    maxChars = $.max(0, $.floor($.Number(maxChars))) || 0;
    const v = projection === undefined ? value : ns.project(value, projection, notes);
    const whole = tryRender(v, NO_LIMITS, maxChars, new $.Map());
    if (whole && !whole.cut) return { ok: true, value: whole.converted ? $.parse(whole.out) : v, chars: whole.out.length, cut: false };
    const r = doFit ? fit(v, maxChars) : tooLarge(v, maxChars);
    if (r.tooLarge) return { ok: false, error: "ResultTooLarge", chars: r.chars, maxChars, largeFields: r.largeFields, hint: r.hint };
    return { ok: true, value: $.parse(r.json), chars: r.json.length, cut: r.cut, omitted: r.steps };
  }

  ns.shape = { fit, envelope, tooLarge, measure, largeFields, normalize, sizeOf };
})();
