// The built-ins the runtime uses, captured before any user code runs, and the runtime's own
// namespace, locked. A cell may replace `JSON.stringify`, `Array.prototype.push` or
// `Promise.prototype.then`, or set `Object.prototype.toJSON`: that changes what its own code does,
// never how the kernel runs, reports or shows a cell. Runtime files call `$.push(list, x)` and the
// like instead of methods looked up at run time.
(function installIntrinsics() {
  "use strict";
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const ns = {};
  // Locked: `globalThis.__mcp2repl = null` in a cell does nothing (a TypeError in strict code).
  Object.defineProperty(globalThis, "__mcp2repl", { value: ns, writable: false, configurable: false, enumerable: false });

  const { stringify, parse } = JSON;
  const OP = Object.prototype;
  const AP = Array.prototype;
  const SP = String.prototype;
  const hasOwn = uncurry(OP.hasOwnProperty);
  const TAP = Object.getPrototypeOf(Uint8Array.prototype);
  // constructors as they are now: the functions below must not look globals up when they run
  const [MapC, SetC, WeakMapC, WeakSetC] = [Map, Set, WeakMap, WeakSet];
  const mapForEach = uncurry(Map.prototype.forEach);
  const setForEach = uncurry(Set.prototype.forEach);
  const [mapGetFn, mapSetFn, mapHasFn, mapDeleteFn] = ["get", "set", "has", "delete"].map((k) => uncurry(Map.prototype[k]));
  const [setAddFn, setHasFn, setDeleteFn] = ["add", "has", "delete"].map((k) => uncurry(Set.prototype[k]));
  const [weakGet, weakSet, weakMapHas, weakMapDelete] = ["get", "set", "has", "delete"].map((k) => uncurry(WeakMap.prototype[k]));
  const [weakAdd, weakSetHas, weakSetDelete] = ["add", "has", "delete"].map((k) => uncurry(WeakSet.prototype[k]));
  const isView = ArrayBuffer.isView;
  const apply = Reflect.apply;
  const { trunc, max: mathMax, min: mathMin } = Math;
  // Array methods that make no new array through `array.constructor[Symbol.species]` (which a cell
  // can replace for every array at once) and need no iterator: written out, holes kept as holes.
  const arraySlice = (a, start, end) => {
    const n = a.length;
    const rel = (x, d) => { const v = x === undefined ? d : trunc(+x) || 0; return v < 0 ? mathMax(n + v, 0) : mathMin(v, n); };
    const from = rel(start, 0);
    const to = rel(end, n);
    const out = [];
    for (let i = from; i < to; i++) if (i in a) out[i - from] = a[i];
    out.length = to > from ? to - from : 0;
    return out;
  };
  const arrays = {
    map: (a, fn) => { const n = a.length; const out = []; for (let i = 0; i < n; i++) if (i in a) out[i] = fn(a[i], i, a); out.length = n; return out; },
    filter: (a, fn) => { const n = a.length; const out = []; for (let i = 0; i < n; i++) if (i in a) { const v = a[i]; if (fn(v, i, a)) out[out.length] = v; } return out; },
    slice: arraySlice,
    splice: (a, start, count, ...items) => {
      const n = a.length;
      const at = start < 0 ? mathMax(n + start, 0) : mathMin(start, n);
      const removed = arraySlice(a, at, count === undefined ? n : at + mathMax(0, count));
      const tail = arraySlice(a, at + removed.length);
      a.length = at;
      for (let i = 0; i < items.length; i++) a[a.length] = items[i];
      for (let i = 0; i < tail.length; i++) a[a.length] = tail[i];
      return removed;
    },
  };
  // Methods that strings, arrays and typed arrays share: dispatched on the receiver's type (without
  // spreading the arguments, which would iterate them with a replaceable iterator).
  const shared = (name) => {
    const onString = SP[name];
    const onArray = arrays[name] ? null : AP[name];
    const onTyped = TAP[name] || AP[name];
    return (x, ...args) => (typeof x === "string" ? apply(onString, x, args) : isView(x) ? apply(onTyped, x, args)
      : onArray === null ? apply(arrays[name], undefined, [x, args[0], args[1]]) : apply(onArray, x, args));
  };

  // ---- promises the runtime waits for, whatever a cell did to the prototypes -----------------
  // Resolving a promise with an object looks up that object's `then` (every plain object inherits
  // one from Object.prototype once a cell sets it there), and `await p` and `then` look up
  // `p.constructor` and its Symbol.species. So the runtime resolves the promises it waits for with
  // primitives or null-prototype boxes (`box`), awaits only promises pinned to the native
  // constructor (`pinned`), and follows any other promise with `when`, which pins it for the one
  // moment `await` looks.
  const NativePromise = Promise;
  const nativeThen = uncurry(Promise.prototype.then);
  const { defineProperty, freeze, isExtensible, getOwnPropertyDescriptor } = Object;
  const deleteProperty = Reflect.deleteProperty;
  const fixed = (value, configurable) => ({ __proto__: null, value, writable: false, enumerable: false, configurable });
  const PINNED = fixed(NativePromise, false);
  const PINNED_NOW = fixed(NativePromise, true);
  /** `p`, safe to `await`: its own `constructor` is the native Promise (for promises the runtime made). */
  const pinned = (p) => { defineProperty(p, "constructor", PINNED); return p; };
  const isPinned = (p) => { const d = getOwnPropertyDescriptor(p, "constructor"); return d !== undefined && d.value === NativePromise && !d.configurable; };
  async function awaited(p, ok, fail) {
    let value;
    try { value = await p; } catch (e) { fail(e); return; }
    ok(value);
  }
  /** Call `ok(value)` or `fail(reason)` when the native promise `p` settles. A promise with a
   * `constructor` of its own, or one that cannot take one, is awaited as JS would. */
  function when(p, ok, fail) {
    if (isPinned(p) || hasOwn(p, "constructor") || !isExtensible(p)) { awaited(p, ok, fail); return; }
    defineProperty(p, "constructor", PINNED_NOW);
    try { awaited(p, ok, fail); } finally { deleteProperty(p, "constructor"); }
  }
  // The shared prototypes: a `then` a cell puts there makes every value a thenable, and is not followed.
  const SHARED = [Object.prototype, Array.prototype, Function.prototype];
  const getPrototypeOf = Object.getPrototypeOf;
  /** A cell's value as JS would await it: a promise is followed (without consulting its `constructor`
   * or `then`), a thenable of the cell's own is resolved, anything else is the value itself. */
  function follow(value, ok, fail) {
    if (value === null || (typeof value !== "object" && typeof value !== "function")) return ok(value);
    try {
      let owner = null;
      for (let o = value; o !== null; o = getPrototypeOf(o)) {
        if (o === NativePromise.prototype) return when(value, ok, fail); // (a fake one fails as JS would fail it)
        if (owner === null && getOwnPropertyDescriptor(o, "then") !== undefined) owner = o;
      }
      if (owner === null || owner === SHARED[0] || owner === SHARED[1] || owner === SHARED[2]) return ok(value);
      when(new NativePromise((resolve) => resolve(value)), ok, fail); // the cell's own thenable: its then runs
    } catch (e) {
      fail(e); // a Proxy's trap threw
    }
  }
  const SPECIES = Symbol.species;
  /** For `thenAs`: a `constructor` whose Symbol.species is `Species`, whatever a cell changes. */
  const speciesOf = (Species) => fixed(freeze({ __proto__: null, [SPECIES]: Species }), true);
  /** The native `then` on `p`, its derived promise made by the class `species` (from speciesOf)
   * names rather than by `p.constructor[Symbol.species]` (for the runtime's own Promise classes). */
  function thenAs(p, species, onFulfilled, onRejected) {
    if (hasOwn(p, "constructor") || !isExtensible(p)) return nativeThen(p, onFulfilled, onRejected);
    defineProperty(p, "constructor", species);
    try { return nativeThen(p, onFulfilled, onRejected); } finally { deleteProperty(p, "constructor"); }
  }

  // Regular expressions through the built-in exec only: `test`, `replace` and `split` look up
  // `exec`, `flags` and Symbol.replace on the RegExp, all of which a cell can replace.
  const regexpExec = uncurry(RegExp.prototype.exec);
  const regexpGlobal = uncurry(Object.getOwnPropertyDescriptor(RegExp.prototype, "global").get);
  const stringSlice = uncurry(SP.slice);
  const stringReplace = uncurry(SP.replace);
  const StringC = String;
  /** `s.replace(re, repl)` for a RegExp (global or not) and a function or a literal string (no `$` patterns). */
  function replace(s, re, repl) {
    if (typeof re === "string") return stringReplace(s, re, repl);
    const global = regexpGlobal(re);
    if (global) re.lastIndex = 0;
    let out = "";
    let last = 0;
    for (;;) {
      const m = regexpExec(re, s);
      if (m === null) break;
      const at = m.index;
      const found = m[0];
      let args = null;
      if (typeof repl === "function") { args = []; for (let i = 0; i < m.length; i++) args[i] = m[i]; args[m.length] = at; args[m.length + 1] = s; }
      out += stringSlice(s, last, at) + (args === null ? repl : StringC(apply(repl, undefined, args)));
      last = at + found.length;
      if (!global) break;
      if (found === "") re.lastIndex = last + 1; // an empty match: step past it
    }
    if (global) re.lastIndex = 0;
    return out + stringSlice(s, last);
  }

  // A descriptor is a plain object: `d.get` of a data property would read Object.prototype.get.
  const rawDescriptor = Object.getOwnPropertyDescriptor;
  const setPrototypeOf = Object.setPrototypeOf;
  /** A property's descriptor with no prototype, so that `d.get` and `"value" in d` say what the property is. */
  const descriptorOf = (o, k) => { const d = rawDescriptor(o, k); if (d !== undefined) setPrototypeOf(d, null); return d; };

  // Sets and Maps walked with the built-in iterators, captured: a cell may replace their `next`.
  const setIterator = uncurry(Set.prototype.values);
  const mapIterator = uncurry(Map.prototype.entries);
  const setNext = uncurry(Object.getPrototypeOf(new Set().values()).next);
  const mapNext = uncurry(Object.getPrototypeOf(new Map().entries()).next);
  /** Call `fn(item)` for a Set's items (`fn([key, value])` for a Map's entries) until it returns false. */
  function iterate(c, fn) {
    const isMap = c instanceof MapC;
    const it = isMap ? mapIterator(c) : setIterator(c);
    const next = isMap ? mapNext : setNext;
    for (let step = next(it); !step.done; step = next(it)) if (fn(step.value) === false) return;
  }

  const boxes = new WeakSetC();
  const box = (v) => { const b = { __proto__: null, v }; weakAdd(boxes, b); return b; };

  ns.$ = Object.freeze({
    stringify,
    parse,
    keys: Object.keys,
    entries: Object.entries,
    assign: Object.assign,
    freeze: Object.freeze,
    defineProperty: Object.defineProperty,
    getOwnPropertyDescriptor: descriptorOf,
    getPrototypeOf: Object.getPrototypeOf,
    hasOwn,
    objectTag: uncurry(OP.toString),
    isArray: Array.isArray,
    isInteger: Number.isInteger,
    // arrays
    push: uncurry(AP.push),
    pop: uncurry(AP.pop),
    unshift: uncurry(AP.unshift),
    splice: arrays.splice,
    join: uncurry(AP.join),
    map: arrays.map,
    filter: arrays.filter,
    some: uncurry(AP.some),
    every: uncurry(AP.every),
    sort: uncurry(AP.sort),
    find: uncurry(AP.find),
    // strings, arrays and typed arrays
    slice: shared("slice"),
    includes: shared("includes"),
    indexOf: shared("indexOf"),
    lastIndexOf: shared("lastIndexOf"),
    // strings
    split: uncurry(SP.split),
    replace,
    startsWith: uncurry(SP.startsWith),
    endsWith: uncurry(SP.endsWith),
    repeat: uncurry(SP.repeat),
    padStart: uncurry(SP.padStart),
    padEnd: uncurry(SP.padEnd),
    trim: uncurry(SP.trim),
    charCodeAt: uncurry(SP.charCodeAt),
    toWellFormed: uncurry(SP.toWellFormed),
    test: (re, s) => regexpExec(re, s) !== null,
    exec: regexpExec,
    Promise,
    then: nativeThen,
    reject: Promise.reject.bind(Promise),
    /** A null-prototype box for a value an internal promise resolves with: it has no `then` to look up. */
    box,
    /** What was boxed, or `r` itself if it is no box. */
    unbox: (r) => (weakSetHas(boxes, r) ? r.v : r),
    pinned,
    when,
    follow,
    thenAs,
    speciesOf,
    /** `o[k]` if `o` has it as its own property, else undefined: never what a prototype says. */
    own: (o, k) => (o !== null && o !== undefined && hasOwn(o, k) ? o[k] : undefined),
    /** A descriptor for defineProperty that a property set on Object.prototype (`get`, `value`…) cannot change. */
    data: (value, enumerable) => ({ __proto__: null, value, writable: true, enumerable: !!enumerable, configurable: true }),
    /** `o[k] = v` as it goes when nothing intercepts it: an own, ordinary property (a setter or a
     * getter-only accessor a cell put on Object.prototype is not consulted). */
    put: (o, k, v) => { defineProperty(o, k, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true }); return v; },
    Map,
    Set,
    mapGet: uncurry(Map.prototype.get),
    mapSet: uncurry(Map.prototype.set),
    mapHas: uncurry(Map.prototype.has),
    mapDelete: uncurry(Map.prototype.delete),
    mapClear: uncurry(Map.prototype.clear),
    mapValues: (m) => { const out = []; mapForEach(m, (v) => { out[out.length] = v; }); return out; },
    iterate,
    /** A generator's next step, by the built-in `next` (a cell may replace the generators' one). */
    next: uncurry(Object.getPrototypeOf(Object.getPrototypeOf((function* () {})())).next),
    mapEntries: (m) => { const out = []; mapForEach(m, (v, k) => { out[out.length] = [k, v]; }); return out; },
    mapSize: uncurry(Object.getOwnPropertyDescriptor(Map.prototype, "size").get),
    setAdd: uncurry(Set.prototype.add),
    setDelete: uncurry(Set.prototype.delete),
    setValues: (set) => { const out = []; setForEach(set, (v) => { out[out.length] = v; }); return out; },
    setSize: uncurry(Object.getOwnPropertyDescriptor(Set.prototype, "size").get),
    // collections (dispatched on the receiver: Map, Set, WeakMap, WeakSet)
    get: (c, k) => (c instanceof WeakMapC ? weakGet : mapGetFn)(c, k),
    set: (c, k, v) => (c instanceof WeakMapC ? weakSet : mapSetFn)(c, k, v),
    add: (c, v) => (c instanceof WeakSetC ? weakAdd : setAddFn)(c, v),
    has: (c, k) => (c instanceof SetC ? setHasFn : c instanceof WeakMapC ? weakMapHas : c instanceof WeakSetC ? weakSetHas : mapHasFn)(c, k),
    delete: (c, k) => (c instanceof SetC ? setDeleteFn : c instanceof WeakMapC ? weakMapDelete : c instanceof WeakSetC ? weakSetDelete : mapDeleteFn)(c, k),
    WeakMap,
    WeakSet,
    Date,
    RegExp,
    Boolean,
    ArrayBuffer,
    isView: ArrayBuffer.isView,
    values: Object.values,
    ObjectProto: OP,
    isFinite: Number.isFinite,
    isNaN: Number.isNaN,
    ceil: Math.ceil,
    abs: Math.abs,
    symbolFor: Symbol.for,
    reflectGet: Reflect.get,
    ownKeys: Reflect.ownKeys,
    Error,
    TypeError,
    captureStackTrace: Error.captureStackTrace,
    apply,
    now: Date.now,
    max: Math.max,
    min: Math.min,
    floor: Math.floor,
    round: Math.round,
    sqrt: Math.sqrt,
    String,
    Number,
    Symbol,
  });

  // JSON.stringify consults an inherited toJSON on every object it serialises, the runtime's own
  // messages included. These two places are claimed (as undefined, which JSON ignores) so that no
  // cell can put a toJSON there; a toJSON on a cell's own objects or classes still works.
  for (const proto of [OP, AP]) {
    if (!hasOwn(proto, "toJSON")) Object.defineProperty(proto, "toJSON", { value: undefined, writable: false, configurable: false, enumerable: false });
  }
})();
