// Fitting any value into a JSON text of at most maxChars characters: what api.print shows and
// what an oversized cell result becomes. Cuts are deterministic and said (`steps`); a value that
// cannot fit gets its biggest fields and a projection that would. Pure JS, no I/O.
(function installFit() {
  "use strict";
  const ns = globalThis.__mcp2repl;
  const isArray = Array.isArray;
  const getProto = Object.getPrototypeOf;
  const objectTag = (v) => Object.prototype.toString.call(v);
  const isRecord = (v) => v !== null && typeof v === "object" && !isArray(v) &&
    (getProto(v) === Object.prototype || getProto(v) === null || objectTag(v) === "[object Object]");
  // ---------------------------------------------------------------- JSON view of any value
  const OMIT = Symbol("omit");
  /** The JSON-able stand-in for `v`: a primitive, OMIT, or a container (array, record, Map, Set). */
  function normalize(v) {
    switch (typeof v) {
      case "string": case "boolean": return v;
      case "number": return Number.isFinite(v) ? v : null;
      case "bigint": return `${v}n`;
      case "undefined": return OMIT;
      case "symbol": return v.toString();
      case "function": return `[Function ${v.name || "(anonymous)"}]`;
    }
    if (v === null || isArray(v)) return v;
    const proto = getProto(v);
    if ((proto === Object.prototype || proto === null) && typeof v.toJSON !== "function") return v;
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
    if (ArrayBuffer.isView(v)) return `[${objectTag(v).slice(8, -1)} ${v.byteLength} bytes]`;
    if (v instanceof ArrayBuffer) return `[ArrayBuffer ${v.byteLength} bytes]`;
    if (v instanceof Map || v instanceof Set) return v;
    if (v instanceof RegExp) return String(v);
    if (v instanceof Error) return `${v.name}: ${v.message}`;
    if (v instanceof Promise) return "[Promise]";
    if (v instanceof Number || v instanceof String || v instanceof Boolean) return normalize(v.valueOf());
    if (typeof v.toJSON === "function") {
      try { const j = v.toJSON(); return j !== null && typeof j === "object" && typeof j.toJSON === "function" ? "[toJSON]" : normalize(j); }
      catch (e) { return `[toJSON threw: ${e && e.message}]`; }
    }
    return v;
  }
  const mapKey = (k) => (typeof k === "string" ? k : k !== null && typeof k === "object" ? `[${objectTag(k).slice(8, -1)}]` : String(k));
  function readProp(obj, k) {
    try { return obj[k]; } catch (e) { return `[getter threw: ${e && e.message}]`; }
  }
  const segment = (k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`);
  const showPath = (p) => (p === "" ? "(root)" : p[0] === "." ? p.slice(1) : p);
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
    const st = { out: "", limits, budget, keyCache, stack: new Set(), path: [], cuts: new Map(), kinds: new Set(), cut: false, converted: false };
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
    st.kinds.add(kind);
    const p = st.path.join("");
    let rec = st.cuts.get(p);
    if (!rec) st.cuts.set(p, (rec = { items: 0, strings: 0, keys: 0, depth: 0 }));
    rec[kind] += n;
  }
  function writeString(s, st) {
    const max = st.limits.str;
    if (s.length > max) {
      let m = max;
      const code = s.charCodeAt(m - 1);
      if (code >= 0xd800 && code <= 0xdbff) m -= 1; // do not split a surrogate pair
      const tail = `…(${plural(s.length - m, "more char")})`;
      // Cut only when it saves a fifth or more: "…(9 more chars)" markers cost more than they save.
      if (m + tail.length <= s.length * 0.8) { s = s.slice(0, m) + tail; noteCut(st, "strings", 1); }
    }
    if (st.out.length + s.length + 2 > st.budget) throw OVER; // before escaping a huge string
    emit(st, JSON.stringify(s));
  }
  function keysOf(v, st) {
    let keys = st.keyCache.get(v);
    if (!keys) { keys = Object.keys(v); if (keys.length > 64) st.keyCache.set(v, keys); }
    return keys;
  }
  function writeValue(v, depth, st) {
    if (typeof v === "string") return writeString(v, st);
    if (v === null || typeof v !== "object") return emit(st, v === null ? "null" : JSON.stringify(v));
    const { limits } = st;
    if (st.stack.has(v)) { st.converted = true; return emit(st, '"[Circular]"'); }
    const list = isArray(v) || v instanceof Set;
    if (v instanceof Set || v instanceof Map) st.converted = true;
    const size = isArray(v) ? v.length : v instanceof Set || v instanceof Map ? v.size : keysOf(v, st).length;
    if (size === 0) return emit(st, list ? "[]" : "{}");
    if (depth >= limits.depth || depth >= HARD_DEPTH) {
      noteCut(st, "depth", 1);
      return emit(st, JSON.stringify(collapsed(list, size)));
    }
    st.stack.add(v);
    const max = list ? limits.items : limits.keys;
    const shown = Math.min(size, max);
    emit(st, list ? "[" : "{");
    let i = 0;
    let first = true;
    const child = (key, item) => {
      const nv = normalize(item);
      if (nv !== item) st.converted = true;
      if (nv === OMIT && !list) return;
      if (!first) emit(st, ",");
      first = false;
      if (!list) emit(st, `${JSON.stringify(key)}:`);
      st.path.push(list ? "[*]" : segment(key));
      writeValue(nv === OMIT ? null : nv, depth + 1, st);
      st.path.pop();
    };
    if (isArray(v)) for (; i < shown; i++) child(i, v[i]);
    else if (v instanceof Set || v instanceof Map) {
      for (const entry of v) { if (i++ >= shown) break; if (list) child(i, entry); else child(mapKey(entry[0]), entry[1]); }
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
    st.stack.delete(v);
  }
  function tryRender(v, limits, budget, keyCache) {
    try { return render(v, limits, budget, keyCache); } catch (e) { if (e === OVER) return null; throw e; }
  }
  /** Size of the uncut JSON view of `v`, or Infinity when it exceeds `cap`. */
  function sizeOf(v, cap) {
    const st = tryRender(v, NO_LIMITS, cap, new Map());
    return st && !st.cut ? st.out.length : Infinity;
  }

  // ---------------------------------------------------------------- fit
  // From generous to tight: [max array items, max string chars, max depth, max object keys].
  // Strings and long arrays shrink first; keys and depth (the structure) go last.
  const LADDER = [[Infinity, 2000, Infinity, Infinity], [200, 1000, 24, 500], [100, 500, 16, 300], [50, 300, 12, 200],
    [25, 200, 10, 100], [12, 120, 8, 60], [8, 80, 6, 40], [5, 60, 5, 25], [3, 40, 4, 16], [2, 30, 3, 10],
    [1, 20, 2, 6], [1, 12, 1, 4], [0, 8, 1, 3]].map(([items, str, depth, keys]) => ({ items, str, depth, keys }));
  const DIMS = [["depth", "depth"], ["keys", "keys"], ["str", "strings"], ["items", "items"]]; // structure first

  function describeCuts(cuts) {
    const lines = [];
    for (const [p, rec] of cuts) {
      const at = showPath(p);
      if (rec.items) lines.push(`${at}: ${plural(rec.items, "more item")}`);
      if (rec.keys) lines.push(`${at}: ${plural(rec.keys, "more key")}`);
      if (rec.strings) lines.push(`${at}: ${rec.strings === 1 ? "string" : `${rec.strings} strings`} shortened`);
      if (rec.depth) lines.push(`${at}: ${rec.depth === 1 ? "value" : `${rec.depth} values`} collapsed (too deep)`);
    }
    return lines.length > 30 ? [...lines.slice(0, 30), `…and ${lines.length - 30} more`] : lines;
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
    maxChars = Math.max(0, Math.floor(Number(maxChars))) || 0;
    const keyCache = new Map();
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
    for (const [dim, kind] of DIMS) { // widen each limit that cut something, as far as it still fits
      if (!best.kinds.has(kind)) continue;
      let lo = limits[dim];
      let hi = Math.min(looser[dim], 1 << 20);
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
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
    const root = { size: 0, kids: new Map(), wildcard: false };
    const stack = new Set();
    let nodes = 0;
    const escapes = /[\u0000-\u001f"\\\ud800-\udfff]/;
    const strSize = (s) => (escapes.test(s) ? JSON.stringify(s).length : s.length + 2);
    const kidOf = (t, key, list, keyDepth) => {
      if (!t || keyDepth > 3) return null;
      const seg = list ? "[*]" : segment(key);
      let k = t.kids.get(seg);
      if (!k && nodes < 5000) { nodes++; t.kids.set(seg, (k = { size: 0, kids: new Map(), wildcard: seg === "[*]" })); }
      return k || null;
    };
    function walk(v, depth, t, keyDepth) {
      let size;
      if (typeof v === "string") size = strSize(v);
      else if (v === null || typeof v !== "object") size = v === null ? 4 : JSON.stringify(v).length;
      else if (stack.has(v)) size = 12;
      else {
        const list = isArray(v) || v instanceof Set;
        const n = isArray(v) ? v.length : v instanceof Set || v instanceof Map ? v.size : Object.keys(v).length;
        if (n === 0) size = 2;
        else if (depth >= HARD_DEPTH) size = strSize(collapsed(list, n));
        else {
          stack.add(v);
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
          else if (v instanceof Set) for (const item of v) child(0, item);
          else if (v instanceof Map) for (const [k, item] of v) child(mapKey(k), item);
          else for (const k of Object.keys(v)) child(k, readProp(v, k));
          size += 1;
          stack.delete(v);
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
      for (const [seg, kid] of t.kids) {
        const q = p + seg;
        if (!kid.wildcard) all.push({ path: showPath(q), chars: kid.size });
        collect(kid, q);
      }
    })(tree, "");
    all.sort((a, b) => b.chars - a.chars || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return all.slice(0, count);
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
      let hi = Math.min(nv.length, budget);
      while (lo < hi) { const mid = Math.ceil((lo + hi) / 2); if (JSON.stringify(nv.slice(0, mid)).length <= budget) lo = mid; else hi = mid - 1; }
      notes.push(`the first ${lo} of ${nv.length} characters of ${showPath(where)}`);
      return { spec: { $slice: lo }, size: JSON.stringify(nv.slice(0, lo)).length };
    }
    if (isArray(nv) && budget >= 2) {
      let used = 2;
      let n = 0;
      for (; n < nv.length; n++) {
        const s = sizeOf(orNull(nv[n]), budget - used - (n ? 1 : 0));
        if (used + s + (n ? 1 : 0) > budget) break;
        used += s + (n ? 1 : 0);
      }
      if (n > 0) { notes.push(`the first ${n} of ${nv.length} items of ${showPath(where)}`); return { spec: { $slice: n }, size: used }; }
      const sub = hintFor(nv[0], budget - 2, notes, `${where}[0]`, level + 1);
      if (sub) notes.unshift(`only the first of ${nv.length} items of ${showPath(where)}`);
      return sub ? { spec: { $slice: 1, $items: sub.spec }, size: sub.size + 2 } : { spec: { $slice: 0 }, size: 2 };
    }
    if (!isRecord(nv) || budget < 2) return null;
    const fields = Object.keys(nv).map((k, i) => ({ k, i, v: readProp(nv, k) })).filter((f) => normalize(f.v) !== OMIT);
    for (const f of fields) f.size = sizeOf(normalize(f.v), budget);
    fields.sort((a, b) => a.size - b.size || a.i - b.i);
    let used = 2;
    const picked = [];
    const sub = {};
    const cost = (f, size) => (picked.length + Object.keys(sub).length ? 1 : 0) + JSON.stringify(f.k).length + 1 + size;
    // Small fields first (up to half the budget), then the rest whole or projected, smallest first.
    for (const f of fields) if (used + cost(f, f.size) <= budget / 2) { used += cost(f, f.size); picked.push(f); f.done = true; }
    for (const f of fields) {
      if (f.done) continue;
      if (used + cost(f, f.size) <= budget) { used += cost(f, f.size); picked.push(f); continue; }
      const room = budget - used - cost(f, 0);
      const h = room >= 2 && f.k[0] !== "$" ? hintFor(f.v, room, notes, where + segment(f.k), level + 1) : null;
      if (h && h.spec !== true) { used += cost(f, h.size); sub[f.k] = h.spec; }
    }
    if (!picked.length && !Object.keys(sub).length) return null; // nothing worth keeping
    picked.sort((a, b) => a.i - b.i);
    if (picked.length) notes.unshift(`${picked.length} of ${fields.length} ${where ? `fields of ${showPath(where)}` : "top-level fields"} whole`);
    const spec = picked.length ? { $pick: picked.map((f) => f.k), ...sub } : sub;
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
    const kept = notes.length > 4 ? [...notes.slice(0, 4), "more"] : notes;
    const list = kept.length > 1 ? `${kept.slice(0, -1).join(", ")} and ${kept[kept.length - 1]}` : kept[0] || "an empty shell";
    const note = h ? `Apply this projection to keep ${list}; the result fits in ${maxChars} characters.`
      : `No projection of this value fits in ${maxChars} characters; raise maxChars or select a smaller part.`;
    return { tooLarge: true, chars: tree.size, largeFields: largeFields(tree), hint: { projection: h ? h.spec : null, note } };
  }

  /**
   * What api.print shows: the (projected) value whole when its JSON fits in maxChars (as is when it
   * is plain JSON, else its JSON view), else the JSON view cut to fit (`fit: true`, with `omitted`
   * saying what was cut) or a ResultTooLarge error with the biggest paths and a projection hint.
   * @param {*} value
   * @param {{projection?: true|object, maxChars?: number, fit?: boolean}} [opts]
   */
  function envelope(value, { projection, maxChars = 20000, fit: doFit = true } = {}) {
    maxChars = Math.max(0, Math.floor(Number(maxChars))) || 0;
    const v = projection === undefined ? value : ns.project(value, projection);
    const whole = tryRender(v, NO_LIMITS, maxChars, new Map());
    if (whole && !whole.cut) return { ok: true, value: whole.converted ? JSON.parse(whole.out) : v, chars: whole.out.length, cut: false };
    const r = doFit ? fit(v, maxChars) : tooLarge(v, maxChars);
    if (r.tooLarge) return { ok: false, error: "ResultTooLarge", chars: r.chars, maxChars, largeFields: r.largeFields, hint: r.hint };
    return { ok: true, value: JSON.parse(r.json), chars: r.json.length, cut: r.cut, omitted: r.steps };
  }

  ns.shape = { fit, envelope, tooLarge, measure, largeFields, normalize, sizeOf };
})();
