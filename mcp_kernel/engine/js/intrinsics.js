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
  // Methods that strings, arrays and typed arrays share: dispatched on the receiver's type.
  const shared = (name) => {
    const onString = uncurry(SP[name]);
    const onArray = uncurry(AP[name]);
    const onTyped = TAP[name] ? uncurry(TAP[name]) : onArray;
    return (x, ...args) => (typeof x === "string" ? onString : isView(x) ? onTyped : onArray)(x, ...args);
  };

  ns.$ = Object.freeze({
    stringify,
    parse,
    keys: Object.keys,
    entries: Object.entries,
    assign: Object.assign,
    freeze: Object.freeze,
    defineProperty: Object.defineProperty,
    getOwnPropertyDescriptor: Object.getOwnPropertyDescriptor,
    getPrototypeOf: Object.getPrototypeOf,
    hasOwn,
    objectTag: uncurry(OP.toString),
    isArray: Array.isArray,
    isInteger: Number.isInteger,
    // arrays
    push: uncurry(AP.push),
    pop: uncurry(AP.pop),
    unshift: uncurry(AP.unshift),
    splice: uncurry(AP.splice),
    join: uncurry(AP.join),
    map: uncurry(AP.map),
    filter: uncurry(AP.filter),
    some: uncurry(AP.some),
    every: uncurry(AP.every),
    sort: uncurry(AP.sort),
    flatMap: uncurry(AP.flatMap),
    find: uncurry(AP.find),
    // strings, arrays and typed arrays
    slice: shared("slice"),
    includes: shared("includes"),
    indexOf: shared("indexOf"),
    lastIndexOf: shared("lastIndexOf"),
    concat: (x, ...args) => (typeof x === "string" ? uncurry(SP.concat) : uncurry(AP.concat))(x, ...args),
    // strings
    split: uncurry(SP.split),
    replace: uncurry(SP.replace),
    startsWith: uncurry(SP.startsWith),
    endsWith: uncurry(SP.endsWith),
    repeat: uncurry(SP.repeat),
    padStart: uncurry(SP.padStart),
    padEnd: uncurry(SP.padEnd),
    trim: uncurry(SP.trim),
    charCodeAt: uncurry(SP.charCodeAt),
    toWellFormed: uncurry(SP.toWellFormed),
    test: uncurry(RegExp.prototype.test),
    Promise,
    then: uncurry(Promise.prototype.then),
    resolve: Promise.resolve.bind(Promise),
    reject: Promise.reject.bind(Promise),
    Map,
    Set,
    mapGet: uncurry(Map.prototype.get),
    mapSet: uncurry(Map.prototype.set),
    mapHas: uncurry(Map.prototype.has),
    mapDelete: uncurry(Map.prototype.delete),
    mapClear: uncurry(Map.prototype.clear),
    mapValues: (m) => { const out = []; mapForEach(m, (v) => { out[out.length] = v; }); return out; },
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
    apply: Reflect.apply,
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
