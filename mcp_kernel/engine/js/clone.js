// structuredClone for a bare V8 isolate (HTML's structured serialization, in plain JS).
(function installStructuredClone() {
  'use strict';
  const { domError, getter, hasOwn, objectTag } = globalThis.__mcp2repl.web;

  const TYPED_ARRAYS = {};
  for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array',
    'Uint32Array', 'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) {
    if (typeof globalThis[name] === 'function') TYPED_ARRAYS[name] = globalThis[name];
  }
  const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
  const typedArrayName = getter(TypedArrayProto, Symbol.toStringTag); // undefined (never throws) for non-typed-arrays
  const viewBuffer = getter(TypedArrayProto, 'buffer');
  const abByteLength = getter(ArrayBuffer.prototype, 'byteLength');
  const abDetached = getter(ArrayBuffer.prototype, 'detached');
  const regexpSource = getter(RegExp.prototype, 'source');
  const ERROR_CTORS = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  const cloneError = (message) => domError('DataCloneError', 25, message);

  // Internal-slot ("brand") checks: builtin methods throw on a foreign receiver, so unlike
  // Symbol.toStringTag or instanceof they cannot be fooled by Object.create(Map.prototype).
  const brand = (fn) => (v) => { try { fn.call(v); return true; } catch { return false; } };
  const KINDS = [
    ['Date', Date, brand(Date.prototype.getTime)],
    ['RegExp', RegExp, (v) => v !== RegExp.prototype && brand(regexpSource)(v)],
    ['Map', Map, brand(getter(Map.prototype, 'size'))],
    ['Set', Set, brand(getter(Set.prototype, 'size'))],
    ['ArrayBuffer', ArrayBuffer, brand(abByteLength)],
    ['SharedArrayBuffer', SharedArrayBuffer, brand(getter(SharedArrayBuffer.prototype, 'byteLength'))],
    ['Error', Error, Error.isError || ((v) => objectTag(v) === 'Error')],
    ['Boolean', Boolean, brand(Boolean.prototype.valueOf)],
    ['Number', Number, brand(Number.prototype.valueOf)],
    ['String', String, brand(String.prototype.valueOf)],
    ['BigInt', BigInt, brand(BigInt.prototype.valueOf)],
    ['Symbol', Symbol, brand(Symbol.prototype.valueOf)],
    ['WeakMap', WeakMap, brand(WeakMap.prototype.has)],
    ['WeakSet', WeakSet, brand(WeakSet.prototype.has)],
  ];
  const KIND_BY_TAG = new Map(KINDS.map((k) => [k[0], k]));
  const isArrayBuffer = KIND_BY_TAG.get('ArrayBuffer')[2];
  // Engine objects V8's own serializer refuses; instanceof is the best check available from JS.
  const UNCLONEABLE = [Promise, WeakRef, FinalizationRegistry, globalThis.Iterator, globalThis.DisposableStack, globalThis.AsyncDisposableStack];
  for (const ns of [globalThis.Intl, globalThis.Temporal, globalThis.WebAssembly]) {
    for (const key of ns ? Object.getOwnPropertyNames(ns) : []) if (/^[A-Z]/.test(key) && typeof ns[key] === 'function') UNCLONEABLE.push(ns[key]);
  }

  function kindOf(v) {
    if (Array.isArray(v)) return 'Array';
    if (ArrayBuffer.isView(v)) return typedArrayName.call(v) || 'DataView';
    const tag = objectTag(v);
    if (tag === 'Object') { // fast path for plain objects
      const proto = Object.getPrototypeOf(v);
      if (proto === Object.prototype || proto === null) return 'Object';
    }
    if (tag === 'Arguments') return null;
    const byTag = KIND_BY_TAG.get(tag);
    if (byTag && byTag[2](v)) return byTag[0];
    for (const [kind, ctor, check] of KINDS) if (v instanceof ctor && check(v)) return kind;
    for (const ctor of UNCLONEABLE) if (ctor && v instanceof ctor) return null;
    return 'Object'; // class instances, Math, JSON, ... clone as plain objects
  }

  // Mirrors V8's wording: "function f() {} could not be cloned." / "#<Promise> could not be cloned."
  function notCloneable(v) {
    let text = 'Object';
    try {
      text = typeof v === 'function' ? Function.prototype.toString.call(v) : `#<${Object.getPrototypeOf(v).constructor.name || 'Object'}>`;
    } catch { /* exotic object: keep the generic description */ }
    return cloneError(`${text} could not be cloned.`);
  }

  function cloneArrayBuffer(buf) {
    if (abDetached.call(buf)) throw cloneError('An ArrayBuffer is detached and could not be cloned.');
    if (!buf.resizable) return ArrayBuffer.prototype.slice.call(buf, 0);
    const copy = new ArrayBuffer(abByteLength.call(buf), { maxByteLength: buf.maxByteLength });
    new Uint8Array(copy).set(new Uint8Array(buf));
    return copy;
  }

  function cloneValue(v, memory) {
    if (typeof v === 'function') throw notCloneable(v);
    if (typeof v === 'symbol') throw cloneError(`${String(v)} could not be cloned.`);
    if (typeof v !== 'object' || v === null) return v;
    if (memory.has(v)) return memory.get(v); // shared and circular references
    const kind = kindOf(v);
    let out;
    // Containers are registered in `memory` before their children are cloned so cycles resolve.
    const register = (value) => { memory.set(v, value); return value; };
    switch (kind) {
      case 'Object':
      case 'Array':
        out = register(kind === 'Array' ? new Array(v.length) : {});
        for (const key of Object.keys(v)) {
          if (!hasOwn(v, key)) continue; // deleted by a getter that already ran; the spec skips it
          const value = cloneValue(v[key], memory);
          // Assigning "__proto__" would set the prototype instead of creating a property.
          if (key === '__proto__') Object.defineProperty(out, key, { __proto__: null, value, writable: true, enumerable: true, configurable: true });
          else out[key] = value;
        }
        return out;
      case 'Map': {
        out = register(new Map());
        const entries = [];
        Map.prototype.forEach.call(v, (value, key) => entries.push([key, value]));
        for (const [key, value] of entries) out.set(cloneValue(key, memory), cloneValue(value, memory));
        return out;
      }
      case 'Set': {
        out = register(new Set());
        const values = [];
        Set.prototype.forEach.call(v, (value) => values.push(value));
        for (const value of values) out.add(cloneValue(value, memory));
        return out;
      }
      case 'Error': {
        // Like V8: only the seven standard names survive, and only stack/message/cause are copied.
        const name = v.name;
        out = register(new (hasOwn(ERROR_CTORS, name) ? ERROR_CTORS[name] : Error)());
        const hidden = (key, value) => Object.defineProperty(out, key, { __proto__: null, value, writable: true, configurable: true, enumerable: false });
        const stack = v.stack;
        hidden('stack', typeof stack === 'string' ? stack : undefined);
        const message = Object.getOwnPropertyDescriptor(v, 'message');
        if (message && 'value' in message) hidden('message', String(message.value));
        if (hasOwn(v, 'cause')) hidden('cause', cloneValue(v.cause, memory));
        return out;
      }
      case 'Date': return register(new Date(Date.prototype.getTime.call(v)));
      case 'RegExp': return register(new RegExp(regexpSource.call(v), v.flags)); // fresh lastIndex
      case 'Boolean': return register(new Boolean(Boolean.prototype.valueOf.call(v)));
      case 'Number': return register(new Number(Number.prototype.valueOf.call(v)));
      case 'String': return register(new String(String.prototype.valueOf.call(v)));
      case 'BigInt': return register(Object(BigInt.prototype.valueOf.call(v)));
      case 'ArrayBuffer': return register(cloneArrayBuffer(v));
      // Shared memory stays shared (what Atomics users need); only object identity differs from browsers.
      case 'SharedArrayBuffer': return register(v);
      case 'DataView': return register(new DataView(cloneValue(v.buffer, memory), v.byteOffset, v.byteLength));
      case 'Symbol': throw cloneError('[object Symbol] could not be cloned.');
      case 'WeakMap': case 'WeakSet': case null: throw notCloneable(v);
      default: // typed arrays; `kind` is the constructor name.  Cloning the buffer via `memory` keeps views aliased.
        return register(new TYPED_ARRAYS[kind](cloneValue(viewBuffer.call(v), memory), v.byteOffset, v.length));
    }
  }

  /**
   * Deep-copies `value` with the HTML structured clone algorithm.
   * @param {*} value
   * @param {{transfer?: Iterable<ArrayBuffer>}} [options] buffers to detach; the clone gets their contents
   */
  function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw new TypeError('The "value" argument must be specified');
    if (options != null && typeof options !== 'object') throw new TypeError('The "options" argument must be either an object or undefined');
    const transferList = options == null || options.transfer === undefined ? [] : options.transfer;
    if (transferList == null || typeof transferList[Symbol.iterator] !== 'function') throw new TypeError('The "transfer" option must be an iterable');
    const transfer = Array.from(transferList);
    const memory = new Map();
    transfer.forEach((buf, i) => {
      if (!isArrayBuffer(buf)) throw cloneError(`Value at index ${i} does not have a transferable type.`);
      if (memory.has(buf)) throw cloneError('Transfer list contains duplicate ArrayBuffer');
      if (abDetached.call(buf)) throw cloneError(`ArrayBuffer at index ${i} is already detached.`);
      // Copy now and detach only after success, so a failed clone leaves the buffers usable.
      memory.set(buf, cloneArrayBuffer(buf));
    });
    const result = cloneValue(value, memory);
    for (const buf of transfer) buf.transfer();
    return result;
  }

  globalThis.__mcp2repl.web.install({ structuredClone });
})();
