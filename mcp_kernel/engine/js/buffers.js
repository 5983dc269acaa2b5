// Memory outside the V8 heap, bounded where it is allocated. mini-racer's limit sees only the heap,
// so without this 3 GB of Uint8Arrays passed a 256 MB limit until the host's OOM killer came.
// Loaded first, before any file captures a constructor: the ArrayBuffer, SharedArrayBuffer and
// typed-array constructors (and the methods that make bigger buffers) are replaced by wrappers that
// refuse one allocation above the limit (the heap limit, set once by Python: `__mk$L`). The
// wrappers keep the real prototypes (`instanceof`, subclasses, `Uint8Array.from` all work) and the
// real constructors stay in this closure: `.constructor`, species and `Object.getPrototypeOf` give
// the wrappers. The total held by ArrayBuffers is bounded by the Python side (engine/memory.py),
// which reads V8's own count; SharedArrayBuffers, which V8 does not count, are summed here.
// WebAssembly is removed: its memories and compiled modules would bypass all of this.

/** `__mk$L(bytes)` sets the limit, once (Python does, before any cell runs; 0 until then: none) and
 * returns it. `__mk$f` is the interrupt flag (bridge.js), a byte Python sets from any thread and code
 * the rewriter injects checks. `__mk$M()` is the total's check (engine/memory.py asked for it with flag[0] = 3):
 * a full collection now, then a wait for Python's verdict on what is still held (engine.py stops
 * the code if it is over the limit, flag[0] = 4); true if the code may go on. */
const [__mk$L, __mk$M, __mk$f] = (() => {
  "use strict";
  let limit = 0;
  const { construct, apply, defineProperty, getOwnPropertyDescriptor, ownKeys, getPrototypeOf } = Reflect;
  const RangeErrorC = RangeError;
  const { floor, trunc } = Math;
  const NumberC = Number;
  const isArray = Array.isArray;
  const ITERATOR = Symbol.iterator;
  const WeakRefC = WeakRef;
  const Int32ArrayC = Int32Array;
  const deref = Function.prototype.call.bind(WeakRef.prototype.deref);
  const TypedArray = getPrototypeOf(Uint8Array);
  const typedLength = getOwnPropertyDescriptor(TypedArray.prototype, "length").get;
  const typedBytes = getOwnPropertyDescriptor(TypedArray.prototype, "byteLength").get;
  const abBytes = getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
  const sabBytes = getOwnPropertyDescriptor(SharedArrayBuffer.prototype, "byteLength").get;
  const brand = (getter, x) => { try { apply(getter, x, []); return true; } catch (_) { return false; } };
  const mb = (n) => `${floor(n / 1048576)} MB`;
  const refuse = (bytes, what) => {
    throw new RangeErrorC(`${what} of ${mb(bytes)} refused: one buffer may hold at most ${mb(limit)}, the heap limit ` +
      "(MCP2REPL_HEAP_LIMIT_MB bounds array buffers as it bounds the heap)");
  };
  const { compareExchange, store, load, wait } = Atomics;
  const sab = new SharedArrayBuffer(8);
  const flag = new Uint8Array(sab); // byte 0: the flag; bytes 4-7: the verdict's handshake
  const word = new Int32ArrayC(sab, 4, 1);
  let made = 0; // bytes allocated since the last look: past the limit, ask for one (flag 3) at the next check
  const check = (bytes, what) => {
    if (limit <= 0) return;
    if (bytes > limit) refuse(bytes, what);
    made += bytes;
    if (made > limit) { made = 0; compareExchange(flag, 0, 0, 3); }
  };
  /** A length argument as the constructors read it (ToIndex); a value they reject passes to them. */
  const index = (x) => {
    const t = typeof x;
    if (t === "bigint" || t === "symbol" || (t === "object" && x !== null) || t === "function") return 0;
    const n = trunc(NumberC(x));
    return n > 0 ? n : 0;
  };
  const maxBytes = (options) => {
    if (options === null || typeof options !== "object") return 0;
    const m = options.maxByteLength;
    return m === undefined ? 0 : index(m);
  };

  // SharedArrayBuffers live outside V8's count of external memory: the live ones are summed here
  // (a buffer dropped within the same synchronous run still counts until the run awaits or ends).
  let shared = [];
  const sharedTotal = () => {
    let total = 0;
    const kept = [];
    for (let i = 0; i < shared.length; i++) {
      const buf = deref(shared[i]);
      if (buf !== undefined) { total += apply(sabBytes, buf, []); kept[kept.length] = shared[i]; }
    }
    shared = kept;
    return total;
  };

  const sharedRef = (buf) => { shared[shared.length] = new WeakRefC(buf); };
  /** Replace globalThis[name] by a wrapper that checks `bytes(args)` before constructing; when that
   * returns true, `after(obj)` follows (a size known only once made, a buffer to keep count of). */
  function wrap(name, bytes, after) {
    const Real = globalThis[name];
    const Wrapper = function (...args) {
      if (new.target === undefined) return apply(Real, this, args); // throws as the built-in does
      const later = limit > 0 && bytes(args) === true;
      const obj = construct(Real, args, new.target === Wrapper ? Real : new.target);
      if (later) after(obj);
      return obj;
    };
    defineProperty(Wrapper, "name", { value: name, configurable: true });
    defineProperty(Wrapper, "length", { value: Real.length, configurable: true });
    for (const key of ownKeys(Real)) {
      if (key === "name" || key === "length" || key === "prototype") continue;
      defineProperty(Wrapper, key, getOwnPropertyDescriptor(Real, key));
    }
    defineProperty(Wrapper, "prototype", { value: Real.prototype, writable: false, enumerable: false, configurable: false });
    Object.setPrototypeOf(Wrapper, getPrototypeOf(Real));
    defineProperty(Real.prototype, "constructor", { value: Wrapper, writable: true, enumerable: false, configurable: true });
    defineProperty(globalThis, name, { value: Wrapper, writable: true, enumerable: false, configurable: true });
    return Wrapper;
  }
  /** Replace a method of `proto` by one that checks its arguments first. */
  function guard(proto, key, bytes, what) {
    const real = proto[key];
    if (typeof real !== "function") return;
    const method = { [key](...args) { if (limit > 0) check(bytes(args), what); return apply(real, this, args); } }[key];
    defineProperty(proto, key, { value: method, writable: true, enumerable: false, configurable: true });
  }

  wrap("ArrayBuffer", (args) => { check(index(args[0]), "An ArrayBuffer"); check(maxBytes(args[1]), "A resizable ArrayBuffer"); });
  guard(ArrayBuffer.prototype, "resize", (args) => index(args[0]), "Resizing an ArrayBuffer");
  guard(ArrayBuffer.prototype, "transfer", (args) => index(args[0]), "Transferring an ArrayBuffer");
  guard(ArrayBuffer.prototype, "transferToFixedLength", (args) => index(args[0]), "Transferring an ArrayBuffer");
  wrap("SharedArrayBuffer", (args) => {
    const n = index(args[0]);
    const most = maxBytes(args[1]);
    check(n, "A SharedArrayBuffer");
    check(most, "A growable SharedArrayBuffer");
    const held = sharedTotal();
    if (limit > 0 && held + (most > n ? most : n) > limit) {
      throw new RangeErrorC(`A SharedArrayBuffer of ${mb(n)} refused: SharedArrayBuffers already hold ${mb(held)} of the ` +
        `${mb(limit)} limit (MCP2REPL_HEAP_LIMIT_MB); set large buffers to null to free them`);
    }
    return true; // counted once made (sharedRef)
  }, sharedRef);
  guard(SharedArrayBuffer.prototype, "grow", (args) => index(args[0]), "Growing a SharedArrayBuffer");

  const TYPED = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
    "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"];
  for (const name of TYPED) {
    const Real = globalThis[name];
    if (typeof Real !== "function") continue;
    const per = Real.BYTES_PER_ELEMENT;
    const what = `A ${name}`;
    const W = wrap(name, (args) => {
      const x = args[0];
      if (x === null || (typeof x !== "object" && typeof x !== "function")) return check(index(x) * per, what);
      if (brand(abBytes, x) || brand(sabBytes, x)) return false; // a view of an existing buffer
      if (brand(typedLength, x)) return check(apply(typedLength, x, []) * per, what);
      if (!isArray(x) && x[ITERATOR] == null) return check(index(x.length) * per, what); // array-like
      return true; // an iterable: its length is known once collected (checked after)
    }, (array) => check(apply(typedBytes, array, []), what));
    for (const key of ["fromBase64", "fromHex"]) {
      const real = Real[key];
      if (typeof real !== "function") continue;
      const ratio = key === "fromHex" ? 0.5 : 0.75;
      const method = { [key](...args) { if (limit > 0 && typeof args[0] === "string") check(floor(args[0].length * ratio), what); return apply(real, this, args); } }[key];
      defineProperty(W, key, { value: method, writable: true, enumerable: false, configurable: true });
    }
  }

  // WebAssembly memories and modules are allocated outside every bound above: not offered.
  if (typeof globalThis.WebAssembly === "object") delete globalThis.WebAssembly;

  // V8's gc extension, under a name no cell sees (context.py: --expose-gc-as), taken and hidden
  const collect = typeof globalThis.__mk$gc === "function" ? globalThis.__mk$gc : null;
  if (collect !== null) globalThis.__mk$gc = undefined;
  const now = Date.now;
  const WAIT_MS = 5000; // for Python's verdict: its watcher looks every few milliseconds
  function verdict() {
    store(word, 0, 2); // collecting: Python asks nothing more meanwhile
    if (compareExchange(flag, 0, 3, 0) === 3 && collect !== null) collect({ type: "major", execution: "sync" });
    store(word, 0, 1);
    const until = now() + WAIT_MS;
    while (load(word, 0) === 1 && now() < until) wait(word, 0, 1, 1);
    store(word, 0, 0);
    return flag[0] === 0 || flag[0] === 3; // 3: another look, at a later check
  }
  return [(bytes) => { if (limit === 0 && bytes > 0) limit = bytes; return limit; }, verdict, flag];
})();
