// Standard web globals for a bare V8 isolate.
//
// V8 on its own ships only the ECMAScript built-ins; the globals below come from
// the WHATWG/HTML specs and are normally supplied by the embedder (browser, Node,
// Deno).  Notebook users expect them, so we provide small dependency-free
// implementations.  Each global is installed only when absent, so this script is
// safe to evaluate repeatedly and never shadows a native implementation.
(function installWebGlobals() {
  'use strict';

  const hasOwn = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
  const getter = (proto, key) => Object.getOwnPropertyDescriptor(proto, key).get;
  const objectTag = (v) => Object.prototype.toString.call(v).slice(8, -1);
  const setTag = (cls, tag) => Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: tag, configurable: true });

  // Browsers throw DOMExceptions, which bare V8 lacks; an Error with the same name and code
  // is what user code can actually observe (e.name === 'DataCloneError').
  function domError(name, code, message) {
    const err = new Error(message);
    Object.defineProperty(err, 'name', { value: name, writable: true, configurable: true });
    Object.defineProperty(err, 'code', { value: code, writable: true, configurable: true });
    return err;
  }

  // WebIDL USVString conversion.  A template literal (unlike String()) throws on Symbols, as WebIDL does.
  const toUSV = (v) => `${v}`.toWellFormed();

  // String.fromCharCode.apply has an argument-count limit, so large outputs are converted
  // in slices and joined; this is far faster than per-character concatenation.
  const CHUNK = 8192;
  function codesToString(codes, length) {
    if (length <= CHUNK) return String.fromCharCode.apply(null, codes.subarray(0, length));
    const parts = [];
    for (let i = 0; i < length; i += CHUNK) parts.push(String.fromCharCode.apply(null, codes.subarray(i, Math.min(i + CHUNK, length))));
    return parts.join('');
  }

  // ---------------------------------------------------------------- encoding

  function utf8Encode(str) {
    const len = str.length;
    const out = new Uint8Array(len * 3); // worst case: every UTF-16 unit becomes 3 bytes
    let j = 0;
    for (let i = 0; i < len; i++) {
      let c = str.charCodeAt(i);
      if (c < 0x80) { out[j++] = c; continue; }
      if (c < 0x800) { out[j++] = 0xc0 | (c >> 6); out[j++] = 0x80 | (c & 0x3f); continue; }
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < len ? str.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          out[j++] = 0xf0 | (c >> 18); out[j++] = 0x80 | ((c >> 12) & 0x3f);
          out[j++] = 0x80 | ((c >> 6) & 0x3f); out[j++] = 0x80 | (c & 0x3f);
          continue;
        }
        c = 0xfffd; // lone surrogate
      }
      out[j++] = 0xe0 | (c >> 12); out[j++] = 0x80 | ((c >> 6) & 0x3f); out[j++] = 0x80 | (c & 0x3f);
    }
    return out.slice(0, j); // slice (not subarray) so that .buffer has the exact size
  }

  const newDecoderState = () => ({ needed: 0, seen: 0, cp: 0, lower: 0x80, upper: 0xbf, leadByte: -1, leadSurrogate: -1 });
  const invalidData = (encoding) => new TypeError(`The encoded data was not valid for encoding ${encoding}`);

  // The WHATWG UTF-8 decoder.  It replaces each *maximal invalid subpart* with one U+FFFD,
  // which is what makes our output identical to browsers for malformed input.
  function decodeUtf8(bytes, s, flush, fatal) {
    const out = new Uint16Array(bytes.length + 4);
    let j = 0;
    let { needed, seen, cp, lower, upper } = s;
    const fail = () => {
      if (fatal) throw invalidData('utf-8');
      out[j++] = 0xfffd;
    };
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (needed === 0) {
        if (b < 0x80) out[j++] = b;
        else if (b >= 0xc2 && b <= 0xdf) { needed = 1; cp = b & 0x1f; }
        else if (b >= 0xe0 && b <= 0xef) {
          if (b === 0xe0) lower = 0xa0; else if (b === 0xed) upper = 0x9f; // overlongs, surrogates
          needed = 2; cp = b & 0xf;
        } else if (b >= 0xf0 && b <= 0xf4) {
          if (b === 0xf0) lower = 0x90; else if (b === 0xf4) upper = 0x8f; // overlongs, > U+10FFFF
          needed = 3; cp = b & 0x7;
        } else fail();
        continue;
      }
      if (b < lower || b > upper) {
        cp = needed = seen = 0; lower = 0x80; upper = 0xbf;
        fail();
        i--; // the offending byte may itself start a valid sequence
        continue;
      }
      lower = 0x80; upper = 0xbf;
      cp = (cp << 6) | (b & 0x3f);
      if (++seen < needed) continue;
      if (cp > 0xffff) { cp -= 0x10000; out[j++] = 0xd800 + (cp >> 10); out[j++] = 0xdc00 + (cp & 0x3ff); }
      else out[j++] = cp;
      cp = needed = seen = 0;
    }
    if (flush && needed !== 0) { cp = needed = seen = 0; lower = 0x80; upper = 0xbf; fail(); }
    Object.assign(s, { needed, seen, cp, lower, upper });
    return codesToString(out, j);
  }

  function decodeUtf16(bytes, s, flush, fatal, bigEndian) {
    const out = new Uint16Array((bytes.length >> 1) + 4);
    let j = 0;
    let { leadByte, leadSurrogate } = s;
    const fail = () => {
      if (fatal) throw invalidData(bigEndian ? 'utf-16be' : 'utf-16le');
      out[j++] = 0xfffd;
    };
    for (let i = 0; i < bytes.length; i++) {
      if (leadByte < 0) { leadByte = bytes[i]; continue; }
      const unit = bigEndian ? (leadByte << 8) | bytes[i] : leadByte | (bytes[i] << 8);
      leadByte = -1;
      if (leadSurrogate >= 0) {
        const lead = leadSurrogate;
        leadSurrogate = -1;
        if (unit >= 0xdc00 && unit <= 0xdfff) { out[j++] = lead; out[j++] = unit; continue; }
        fail(); // then `unit` is processed on its own below
      }
      if (unit >= 0xd800 && unit <= 0xdbff) leadSurrogate = unit;
      else if (unit >= 0xdc00 && unit <= 0xdfff) fail();
      else out[j++] = unit;
    }
    if (flush && (leadByte >= 0 || leadSurrogate >= 0)) { leadByte = leadSurrogate = -1; fail(); }
    Object.assign(s, { leadByte, leadSurrogate });
    return codesToString(out, j);
  }

  // windows-1252 differs from ISO-8859-1 only in 0x80-0x9F.  The Encoding Standard maps
  // "latin1", "ascii" and friends to it, so browsers decode byte 0x80 as "€".
  const CP1252_HIGH = [
    0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
    0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
  ];
  function decodeWindows1252(bytes) {
    const out = new Uint16Array(bytes.length);
    for (let i = 0; i < bytes.length; i++) out[i] = bytes[i] >= 0x80 && bytes[i] < 0xa0 ? CP1252_HIGH[bytes[i] - 0x80] : bytes[i];
    return codesToString(out, bytes.length);
  }

  const DECODERS = {
    'utf-8': decodeUtf8,
    'utf-16le': (b, s, flush, fatal) => decodeUtf16(b, s, flush, fatal, false),
    'utf-16be': (b, s, flush, fatal) => decodeUtf16(b, s, flush, fatal, true),
    'windows-1252': decodeWindows1252,
  };
  const ENCODING_LABELS = new Map();
  for (const [name, labels] of [
    ['utf-8', 'unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8'],
    ['utf-16le', 'csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le'],
    ['utf-16be', 'unicodefffe utf-16be'],
    ['windows-1252', 'ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 '
      + 'iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252'],
  ]) for (const label of labels.split(' ')) ENCODING_LABELS.set(label, name);

  function toBytes(input) {
    if (input === undefined) return new Uint8Array(0);
    if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    if (input instanceof ArrayBuffer || input instanceof SharedArrayBuffer) return new Uint8Array(input);
    throw new TypeError('The "input" argument must be an instance of ArrayBuffer, SharedArrayBuffer or ArrayBufferView.');
  }

  /** Encodes strings as UTF-8, the only encoding the Encoding Standard allows for encoders. */
  class TextEncoder {
    get encoding() { return 'utf-8'; }
    /** @param {string} [input] @returns {Uint8Array} */
    encode(input = '') { return utf8Encode(toUSV(input)); }

    /** Writes the whole characters of `source` that fit into `destination`; returns {read, written}. */
    encodeInto(source, destination) {
      if (!(destination instanceof Uint8Array)) throw new TypeError('The "dest" argument must be an instance of Uint8Array.');
      const str = toUSV(source);
      let read = 0;
      let written = 0;
      while (read < str.length) {
        const cp = str.codePointAt(read);
        const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (written + size > destination.length) break;
        if (size === 1) destination[written] = cp;
        else destination.set(utf8Encode(String.fromCodePoint(cp)), written); // rare path: reuse the encoder
        written += size;
        read += size === 4 ? 2 : 1;
      }
      return { read, written };
    }
  }
  setTag(TextEncoder, 'TextEncoder');

  /** Decodes UTF-8, UTF-16LE/BE and windows-1252 (alias latin1/ascii) bytes, optionally in streaming mode. */
  class TextDecoder {
    #encoding; #fatal; #ignoreBOM; #state = null; #bomSeen = false;

    /** @param {string} [label='utf-8'] @param {{fatal?: boolean, ignoreBOM?: boolean}} [options] */
    constructor(label = 'utf-8', options = undefined) {
      const key = `${label}`.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '').replace(/[A-Z]+/g, (m) => m.toLowerCase());
      this.#encoding = ENCODING_LABELS.get(key);
      if (this.#encoding === undefined) throw new RangeError(`The "${label}" encoding is not supported`);
      if (options != null && typeof options !== 'object') throw new TypeError('The "options" argument must be of type object.');
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }

    get encoding() { return this.#encoding; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    /** @param {ArrayBuffer|ArrayBufferView} [input] @param {{stream?: boolean}} [options] stream: keep a partial trailing sequence */
    decode(input = undefined, options = undefined) {
      const bytes = toBytes(input);
      const stream = Boolean(options && options.stream);
      if (this.#state === null) this.#state = newDecoderState();
      let out;
      try {
        out = DECODERS[this.#encoding](bytes, this.#state, !stream, this.#fatal);
      } catch (err) {
        [this.#state, this.#bomSeen] = [null, false];
        throw err;
      }
      // Only the very first character of a stream may be a BOM (which can span chunks).
      if (!this.#ignoreBOM && !this.#bomSeen && out.length > 0 && this.#encoding !== 'windows-1252') {
        if (out.charCodeAt(0) === 0xfeff) out = out.slice(1);
        this.#bomSeen = true;
      }
      if (!stream) [this.#state, this.#bomSeen] = [null, false];
      return out;
    }
  }
  setTag(TextDecoder, 'TextDecoder');

  // ------------------------------------------------------------------ base64

  const B64_CODES = Uint8Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', (ch) => ch.charCodeAt(0));
  const B64_VALUES = new Uint8Array(128);
  B64_CODES.forEach((code, i) => { B64_VALUES[code] = i; });

  /** Base64-encodes a "binary string" (every character must be <= U+00FF). */
  function btoa(data) {
    if (arguments.length === 0) throw new TypeError('The "data" argument must be specified');
    const str = `${data}`;
    const len = str.length;
    const out = new Uint8Array(Math.ceil(len / 3) * 4);
    let j = 0;
    for (let i = 0; i < len; i += 3) {
      const a = str.charCodeAt(i);
      const b = i + 1 < len ? str.charCodeAt(i + 1) : 0;
      const c = i + 2 < len ? str.charCodeAt(i + 2) : 0;
      if ((a | b | c) > 0xff) throw domError('InvalidCharacterError', 5, 'Invalid character');
      out[j++] = B64_CODES[a >> 2];
      out[j++] = B64_CODES[((a & 3) << 4) | (b >> 4)];
      out[j++] = i + 1 < len ? B64_CODES[((b & 15) << 2) | (c >> 6)] : 61; // 61 is '='
      out[j++] = i + 2 < len ? B64_CODES[c & 63] : 61;
    }
    return codesToString(out, j);
  }

  /** Decodes base64 to a binary string with the HTML "forgiving-base64 decode" rules. */
  function atob(data) {
    if (arguments.length === 0) throw new TypeError('The "data" argument must be specified');
    let str = `${data}`.replace(/[\t\n\f\r ]+/g, '');
    if (str.length % 4 === 0) str = str.replace(/={1,2}$/, '');
    // Both failures are InvalidCharacterError; the messages follow Node's choice between them.
    const invalid = /[^A-Za-z0-9+/=]|=[^=]/.test(str);
    if (!invalid && str.replace(/=/g, '').length % 4 === 1) {
      throw domError('InvalidCharacterError', 5, 'The string to be decoded is not correctly encoded.');
    }
    if (invalid || str.includes('=') || str.length % 4 === 1) throw domError('InvalidCharacterError', 5, 'Invalid character');
    const out = new Uint8Array((str.length * 3) >> 2);
    let bits = 0;
    let nbits = 0;
    let j = 0;
    for (let i = 0; i < str.length; i++) {
      bits = ((bits << 6) | B64_VALUES[str.charCodeAt(i)]) & 0xffffff; // only the last 3 bytes matter
      nbits += 6;
      if (nbits >= 8) { nbits -= 8; out[j++] = (bits >> nbits) & 0xff; }
    }
    return codesToString(out, j);
  }

  // ---------------------------------------------------------- queueMicrotask

  /** Runs `callback` as a microtask; a throw is passed to globalThis.reportError() when that exists. */
  function queueMicrotask(callback) {
    if (typeof callback !== 'function') {
      throw new TypeError(`The "callback" argument must be of type function. Received ${callback === undefined ? 'undefined' : typeof callback}`);
    }
    // A bare promise job would turn a throw into a silently unhandled rejection; catch and report instead.
    Promise.resolve().then(() => {
      try { callback(); } catch (err) { if (typeof globalThis.reportError === 'function') globalThis.reportError(err); }
    });
  }

  // ---------------------------------------------------------- structuredClone

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
          if (key === '__proto__') Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
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
        const hidden = (key, value) => Object.defineProperty(out, key, { value, writable: true, configurable: true, enumerable: false });
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

  // --------------------------------------------------------------- URL parser

  const DEFAULT_PORTS = new Map([['ftp', 21], ['file', null], ['http', 80], ['https', 443], ['ws', 80], ['wss', 443]]);
  const isSpecial = (url) => DEFAULT_PORTS.has(url.scheme);
  const FAILURE = Symbol('failure');

  // Percent-encode sets of the URL standard, as predicates on a code point.  The path set
  // matches Node 20 / current browsers (the spec has since added "^").
  const encodeSet = (base, extra) => (cp) => base(cp) || extra.includes(String.fromCharCode(cp));
  const C0_SET = (cp) => cp < 0x20 || cp > 0x7e;
  const FRAGMENT_SET = encodeSet(C0_SET, ' "<>`');
  const QUERY_SET = encodeSet(C0_SET, ' "#<>');
  const SPECIAL_QUERY_SET = encodeSet(QUERY_SET, "'");
  const PATH_SET = encodeSet(QUERY_SET, '?`{}');
  const USERINFO_SET = encodeSet(PATH_SET, '/:;=@[\\]^|');
  const FORM_SET = (cp) => !/[*\-._0-9A-Za-z]/.test(String.fromCharCode(cp));

  function percentEncode(ch, set) {
    const cp = ch.codePointAt(0);
    if (!set(cp)) return ch;
    // encodeURIComponent yields the right uppercase UTF-8 escapes for non-ASCII but skips some ASCII.
    return cp < 0x80 ? `%${cp < 16 ? '0' : ''}${cp.toString(16).toUpperCase()}` : encodeURIComponent(ch);
  }
  function percentEncodeString(str, set) {
    let out = '';
    for (const ch of str) out += percentEncode(ch, set);
    return out;
  }

  // Percent-decodes to bytes, then UTF-8 decodes them (invalid sequences become U+FFFD).
  function percentDecode(str) {
    if (!str.includes('%')) return str;
    const bytes = utf8Encode(str);
    const out = new Uint8Array(bytes.length);
    const isHex = (b) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
    let j = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] === 0x25 && i + 2 < bytes.length && isHex(bytes[i + 1]) && isHex(bytes[i + 2])) {
        out[j++] = parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16);
        i += 2;
      } else out[j++] = bytes[i];
    }
    return decodeUtf8(out.subarray(0, j), newDecoderState(), true, false);
  }

  // RFC 3492 encoder, so that non-ASCII hostnames serialize as "xn--" labels like in browsers.
  function punycode(label) {
    const cps = Array.from(label, (ch) => ch.codePointAt(0));
    const digit = (d) => String.fromCharCode(d + (d < 26 ? 97 : 22)); // 0-25 -> a-z, 26-35 -> 0-9
    const adapt = (delta, numPoints, first) => {
      delta = first ? Math.floor(delta / 700) : delta >> 1;
      delta += Math.floor(delta / numPoints);
      let k = 0;
      for (; delta > 455; k += 36) delta = Math.floor(delta / 35);
      return k + Math.floor((36 * delta) / (delta + 38));
    };
    // (No spread calls below: labels can be arbitrarily long and spread has an argument limit.)
    let out = cps.filter((c) => c < 0x80).map((c) => String.fromCharCode(c)).join('');
    const basic = out.length;
    if (basic > 0) out += '-';
    let [n, delta, bias, handled] = [128, 0, 72, basic];
    while (handled < cps.length) {
      const m = cps.reduce((min, c) => (c >= n && c < min ? c : min), Infinity);
      delta += (m - n) * (handled + 1);
      n = m;
      for (const c of cps) {
        if (c < n) delta++;
        if (c !== n) continue;
        let q = delta;
        for (let k = 36; ; k += 36) {
          const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
          if (q < t) break;
          out += digit(t + ((q - t) % (36 - t)));
          q = Math.floor((q - t) / (36 - t));
        }
        out += digit(q);
        bias = adapt(delta, handled + 1, handled === basic);
        delta = 0;
        handled++;
      }
      delta++;
      n++;
    }
    return out;
  }

  // Approximates UTS #46 processing (dot variants, ignored code points, NFKC, lowercase)
  // without its large mapping tables; exact for ASCII and for common non-ASCII domains.
  // Returns '' for failure, which the caller rejects like an empty host.
  function domainToASCII(domain) {
    const ascii = (s) => /^[\0-\x7f]*$/.test(s);
    // U+FFFD (from invalid percent-escapes or lone surrogates) is disallowed by UTS #46.
    if (domain.includes('\ufffd')) return '';
    // A cheap sanity check of existing punycode labels (full validation would need a decoder).
    if (domain.split('.').some((label) => /^xn--/i.test(label) && !/^xn--[a-z0-9-]+$/i.test(label))) return '';
    if (ascii(domain)) return domain.toLowerCase();
    const mapped = domain.replace(/[\u3002\uff0e\uff61]/g, '.').replace(/[\u00ad\u034f\u180b-\u180d\ufe00-\ufe0f]/g, '').normalize('NFKC');
    // Per-character lowercasing sidesteps JS's context-sensitive final-sigma rule, as UTS #46 does.
    const lower = Array.from(mapped, (ch) => ch.toLowerCase()).join('');
    return lower.split('.').map((label) => (ascii(label) ? label : `xn--${punycode(label)}`)).join('.');
  }

  function parseIPv4Number(s) {
    if (s === '') return FAILURE;
    let radix = 10;
    if (/^0[xX]/.test(s)) { s = s.slice(2); radix = 16; } else if (s.length > 1 && s[0] === '0') { s = s.slice(1); radix = 8; }
    if (s === '') return 0;
    const valid = { 16: /^[0-9a-fA-F]+$/, 10: /^[0-9]+$/, 8: /^[0-7]+$/ }[radix];
    return valid.test(s) ? parseInt(s, radix) : FAILURE;
  }
  // "ends in a number" decides whether a host is an IPv4 address (including forms like 0x7f.1).
  function endsInNumber(host) {
    const parts = host.split('.');
    if (parts[parts.length - 1] === '') {
      if (parts.length === 1) return false;
      parts.pop();
    }
    const last = parts[parts.length - 1];
    return /^[0-9]+$/.test(last) || parseIPv4Number(last) !== FAILURE;
  }
  function parseIPv4(host) {
    const parts = host.split('.');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop();
    if (parts.length > 4) return FAILURE;
    const nums = parts.map(parseIPv4Number);
    if (nums.includes(FAILURE) || nums.slice(0, -1).some((n) => n > 255)) return FAILURE;
    if (nums[nums.length - 1] >= 256 ** (5 - nums.length)) return FAILURE;
    const value = nums.slice(0, -1).reduce((acc, n, i) => acc + n * 256 ** (3 - i), nums[nums.length - 1]);
    return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
  }

  function parseIPv6(input) {
    const address = [0, 0, 0, 0, 0, 0, 0, 0];
    const isHex = (ch) => ch !== undefined && /^[0-9a-fA-F]$/.test(ch);
    const isDigit = (ch) => ch !== undefined && ch >= '0' && ch <= '9';
    let [piece, compress, p] = [0, null, 0];
    if (input[p] === ':') {
      if (input[p + 1] !== ':') return FAILURE;
      p += 2;
      compress = ++piece;
    }
    while (p < input.length) {
      if (piece === 8) return FAILURE;
      if (input[p] === ':') {
        if (compress !== null) return FAILURE;
        p++;
        compress = ++piece;
        continue;
      }
      let [value, length] = [0, 0];
      while (length < 4 && isHex(input[p])) { value = value * 16 + parseInt(input[p], 16); p++; length++; }
      if (input[p] === '.') { // embedded IPv4, e.g. ::ffff:1.2.3.4
        if (length === 0 || piece > 6) return FAILURE;
        p -= length;
        let numbersSeen = 0;
        while (p < input.length) {
          let v4 = null;
          if (numbersSeen > 0) {
            if (input[p] !== '.' || numbersSeen >= 4) return FAILURE;
            p++;
          }
          if (!isDigit(input[p])) return FAILURE;
          for (; isDigit(input[p]); p++) {
            if (v4 === 0) return FAILURE; // no leading zeros
            v4 = (v4 ?? 0) * 10 + Number(input[p]);
            if (v4 > 255) return FAILURE;
          }
          address[piece] = address[piece] * 0x100 + v4;
          if (++numbersSeen === 2 || numbersSeen === 4) piece++;
        }
        if (numbersSeen !== 4) return FAILURE;
        break;
      } else if (input[p] === ':') {
        if (++p >= input.length) return FAILURE;
      } else if (p < input.length) return FAILURE;
      address[piece++] = value;
    }
    if (compress !== null) {
      // Move the pieces after "::" to the end of the address.
      for (let swaps = piece - compress, i = 7; i !== 0 && swaps > 0; i--, swaps--) {
        [address[i], address[compress + swaps - 1]] = [address[compress + swaps - 1], address[i]];
      }
    } else if (piece !== 8) return FAILURE;
    return address;
  }
  function serializeIPv6(address) {
    let [best, bestLen] = [-1, 1]; // only runs of two or more zero pieces are compressed to "::"
    for (let i = 0, j; i < 8; i = Math.max(j, i + 1)) {
      for (j = i; j < 8 && address[j] === 0;) j++;
      if (j - i > bestLen) [best, bestLen] = [i, j - i];
    }
    let out = '';
    for (let i = 0; i < 8; i++) {
      if (i === best) { out += i === 0 ? '::' : ':'; i += bestLen - 1; continue; }
      out += address[i].toString(16) + (i < 7 ? ':' : '');
    }
    return `[${out}]`;
  }

  function parseHost(input, isOpaque) {
    if (input[0] === '[') {
      if (input[input.length - 1] !== ']') return FAILURE;
      const address = parseIPv6(input.slice(1, -1));
      return address === FAILURE ? FAILURE : serializeIPv6(address);
    }
    if (isOpaque) return /[\0\t\n\r #/:<>?@[\\\]^|]/.test(input) ? FAILURE : percentEncodeString(input, C0_SET);
    const ascii = domainToASCII(percentDecode(input));
    if (ascii === '' || /[\0-\x20#%/:<>?@[\\\]^|\x7f\ufffd]/.test(ascii)) return FAILURE;
    return endsInNumber(ascii) ? parseIPv4(ascii) : ascii;
  }

  const isWindowsDriveLetter = (s, normalizedOnly) => s.length === 2 && /[A-Za-z]/.test(s[0]) && (s[1] === ':' || (!normalizedOnly && s[1] === '|'));
  const startsWithWindowsDriveLetter = (cps, p) => cps.length - p >= 2 && isWindowsDriveLetter(cps[p] + cps[p + 1])
    && (cps.length - p === 2 || '/\\?#'.includes(cps[p + 2]));
  function shortenPath(url) {
    if (!(url.scheme === 'file' && url.path.length === 1 && isWindowsDriveLetter(url.path[0], true))) url.path.pop();
  }
  const isSingleDot = (s) => s === '.' || s.toLowerCase() === '%2e';
  const isDoubleDot = (s) => ['..', '.%2e', '%2e.', '%2e%2e'].includes(s.toLowerCase());
  const hasOpaquePath = (url) => typeof url.path === 'string';
  const newRecord = () => ({ scheme: '', username: '', password: '', host: null, port: null, path: [], query: null, fragment: null });
  const copyAuthority = (url, base) => Object.assign(url, { username: base.username, password: base.password, host: base.host, port: base.port });

  /**
   * The WHATWG "basic URL parser" state machine, transcribed state by state.  With `override`
   * it edits `url` in place (this is how the URL setters work).  Returns the record or FAILURE.
   */
  function basicParse(input, base, url, override) {
    if (!url) {
      url = newRecord();
      input = input.replace(/^[\0-\x20]+|[\0-\x20]+$/g, '');
    }
    const cps = Array.from(input.replace(/[\t\n\r]/g, ''));
    let state = override || 'schemeStart';
    let buffer = '';
    let [atSignSeen, insideBrackets, passwordTokenSeen] = [false, false, false];
    // `p--` re-runs the current code point in the new state; `c === undefined` is the spec's EOF.
    for (let p = 0; p <= cps.length; p++) {
      const c = cps[p];
      const special = isSpecial(url);
      const slash = c === '/' || (special && c === '\\');
      const endOfAuthority = c === undefined || slash || c === '?' || c === '#';
      switch (state) {
        case 'schemeStart':
          if (c !== undefined && /[A-Za-z]/.test(c)) { buffer += c.toLowerCase(); state = 'scheme'; }
          else if (override) return FAILURE;
          else { state = 'noScheme'; p--; }
          break;
        case 'scheme':
          if (c !== undefined && /[A-Za-z0-9+\-.]/.test(c)) buffer += c.toLowerCase();
          else if (c === ':') {
            if (override) {
              // The protocol setter may not switch between special and non-special schemes.
              if (special !== DEFAULT_PORTS.has(buffer)) return url;
              if ((url.username || url.password || url.port !== null) && buffer === 'file') return url;
              if (url.scheme === 'file' && url.host === '') return url;
              url.scheme = buffer;
              if (url.port === DEFAULT_PORTS.get(url.scheme)) url.port = null;
              return url;
            }
            url.scheme = buffer;
            buffer = '';
            if (url.scheme === 'file') state = 'file';
            else if (isSpecial(url)) state = base && base.scheme === url.scheme ? 'specialRelativeOrAuthority' : 'specialAuthoritySlashes';
            else if (cps[p + 1] === '/') { state = 'pathOrAuthority'; p++; }
            else { url.path = ''; state = 'opaquePath'; }
          } else if (override) return FAILURE;
          else { buffer = ''; state = 'noScheme'; p = -1; } // start over: it was a relative URL
          break;
        case 'noScheme':
          if (!base || (hasOpaquePath(base) && c !== '#')) return FAILURE;
          if (hasOpaquePath(base)) {
            Object.assign(url, { scheme: base.scheme, path: base.path, query: base.query, fragment: '' });
            state = 'fragment';
          } else { state = base.scheme === 'file' ? 'file' : 'relative'; p--; }
          break;
        case 'specialRelativeOrAuthority':
          if (c === '/' && cps[p + 1] === '/') { state = 'specialAuthorityIgnoreSlashes'; p++; }
          else { state = 'relative'; p--; }
          break;
        case 'pathOrAuthority':
          if (c === '/') state = 'authority';
          else { state = 'path'; p--; }
          break;
        case 'relative':
          url.scheme = base.scheme;
          if (c === '/' || (isSpecial(url) && c === '\\')) { state = 'relativeSlash'; break; }
          copyAuthority(url, base);
          url.path = base.path.slice();
          url.query = base.query;
          if (c === '?') { url.query = ''; state = 'query'; }
          else if (c === '#') { url.fragment = ''; state = 'fragment'; }
          else if (c !== undefined) { url.query = null; shortenPath(url); state = 'path'; p--; }
          break;
        case 'relativeSlash':
          if (special && (c === '/' || c === '\\')) state = 'specialAuthorityIgnoreSlashes';
          else if (c === '/') state = 'authority';
          else { copyAuthority(url, base); state = 'path'; p--; }
          break;
        case 'specialAuthoritySlashes':
          state = 'specialAuthorityIgnoreSlashes';
          if (c === '/' && cps[p + 1] === '/') p++; else p--;
          break;
        case 'specialAuthorityIgnoreSlashes':
          if (c !== '/' && c !== '\\') { state = 'authority'; p--; }
          break;
        case 'authority':
          if (c === '@') {
            if (atSignSeen) buffer = `%40${buffer}`; // an earlier "@" was part of the credentials
            atSignSeen = true;
            for (const ch of buffer) {
              if (ch === ':' && !passwordTokenSeen) passwordTokenSeen = true;
              else if (passwordTokenSeen) url.password += percentEncode(ch, USERINFO_SET);
              else url.username += percentEncode(ch, USERINFO_SET);
            }
            buffer = '';
          } else if (endOfAuthority) {
            if (atSignSeen && buffer === '') return FAILURE;
            p -= Array.from(buffer).length + 1; // rewind: the buffer holds the host, parsed next
            buffer = '';
            state = 'host';
          } else buffer += c;
          break;
        case 'host':
        case 'hostname':
          if (override && url.scheme === 'file') { p--; state = 'fileHost'; }
          else if (c === ':' && !insideBrackets) {
            if (buffer === '' || override === 'hostname') return FAILURE;
            const host = parseHost(buffer, !special);
            if (host === FAILURE) return FAILURE;
            [url.host, buffer, state] = [host, '', 'port'];
          } else if (endOfAuthority) {
            p--;
            if (special && buffer === '') return FAILURE;
            if (override && buffer === '' && (url.username || url.password || url.port !== null)) return FAILURE;
            const host = parseHost(buffer, !special);
            if (host === FAILURE) return FAILURE;
            [url.host, buffer, state] = [host, '', 'pathStart'];
            if (override) return url;
          } else {
            if (c === '[') insideBrackets = true;
            if (c === ']') insideBrackets = false;
            buffer += c;
          }
          break;
        case 'port':
          if (c !== undefined && c >= '0' && c <= '9') buffer += c;
          else if (endOfAuthority || override) {
            if (buffer !== '') {
              const port = parseInt(buffer, 10);
              if (port > 65535) return FAILURE;
              url.port = DEFAULT_PORTS.get(url.scheme) === port ? null : port;
              buffer = '';
            }
            if (override) return url;
            state = 'pathStart';
            p--;
          } else return FAILURE;
          break;
        case 'file':
          url.scheme = 'file';
          url.host = '';
          if (c === '/' || c === '\\') state = 'fileSlash';
          else if (base && base.scheme === 'file') {
            [url.host, url.path, url.query] = [base.host, base.path.slice(), base.query];
            if (c === '?') { url.query = ''; state = 'query'; }
            else if (c === '#') { url.fragment = ''; state = 'fragment'; }
            else if (c !== undefined) {
              url.query = null;
              if (!startsWithWindowsDriveLetter(cps, p)) shortenPath(url); else url.path = [];
              state = 'path';
              p--;
            }
          } else { state = 'path'; p--; }
          break;
        case 'fileSlash':
          if (c === '/' || c === '\\') { state = 'fileHost'; break; }
          if (base && base.scheme === 'file') {
            url.host = base.host;
            if (!startsWithWindowsDriveLetter(cps, p) && base.path.length && isWindowsDriveLetter(base.path[0], true)) url.path.push(base.path[0]);
          }
          state = 'path';
          p--;
          break;
        case 'fileHost':
          if (!(c === undefined || c === '/' || c === '\\' || c === '?' || c === '#')) { buffer += c; break; }
          p--;
          // "file://C:/x": the would-be host is a drive letter; it stays in the buffer for the path state.
          if (!override && isWindowsDriveLetter(buffer)) state = 'path';
          else {
            let host = buffer === '' ? '' : parseHost(buffer, !special);
            if (host === FAILURE) return FAILURE;
            if (host === 'localhost') host = '';
            url.host = host;
            if (override) return url;
            [buffer, state] = ['', 'pathStart'];
          }
          break;
        case 'pathStart':
          if (special) { state = 'path'; if (!slash) p--; }
          else if (!override && c === '?') { url.query = ''; state = 'query'; }
          else if (!override && c === '#') { url.fragment = ''; state = 'fragment'; }
          else if (c !== undefined) { state = 'path'; if (c !== '/') p--; }
          else if (override && url.host === null) url.path.push('');
          break;
        case 'path':
          if (!(c === undefined || slash || (!override && (c === '?' || c === '#')))) { buffer += percentEncode(c, PATH_SET); break; }
          if (isDoubleDot(buffer)) {
            shortenPath(url);
            if (!slash) url.path.push('');
          } else if (isSingleDot(buffer)) {
            if (!slash) url.path.push('');
          } else {
            if (url.scheme === 'file' && url.path.length === 0 && isWindowsDriveLetter(buffer)) buffer = `${buffer[0]}:`;
            url.path.push(buffer);
          }
          buffer = '';
          if (c === '?') { url.query = ''; state = 'query'; }
          if (c === '#') { url.fragment = ''; state = 'fragment'; }
          break;
        case 'opaquePath':
          if (c === '?') { url.query = ''; state = 'query'; }
          else if (c === '#') { url.fragment = ''; state = 'fragment'; }
          else if (c !== undefined) url.path += percentEncode(c, C0_SET);
          break;
        case 'query':
          if (c !== undefined && (override || c !== '#')) { buffer += c; break; }
          url.query += percentEncodeString(buffer, special ? SPECIAL_QUERY_SET : QUERY_SET);
          buffer = '';
          if (c === '#') { url.fragment = ''; state = 'fragment'; }
          break;
        case 'fragment':
          if (c !== undefined) url.fragment += percentEncode(c, FRAGMENT_SET);
          break;
      }
    }
    return url;
  }

  const serializePath = (url) => (hasOpaquePath(url) ? url.path : url.path.map((s) => `/${s}`).join(''));
  function serializeURL(url) {
    let out = `${url.scheme}:`;
    if (url.host !== null) {
      out += '//';
      if (url.username !== '' || url.password !== '') out += `${url.username}${url.password !== '' ? `:${url.password}` : ''}@`;
      out += url.host + (url.port !== null ? `:${url.port}` : '');
    }
    // "/." keeps a host-less path such as "//x" from being re-parsed as an authority.
    if (url.host === null && !hasOpaquePath(url) && url.path.length > 1 && url.path[0] === '') out += '/.';
    out += serializePath(url);
    if (url.query !== null) out += `?${url.query}`;
    if (url.fragment !== null) out += `#${url.fragment}`;
    return out;
  }
  // Without a query or fragment, trailing spaces of an opaque path would not survive re-parsing.
  function stripTrailingSpaces(url) {
    if (hasOpaquePath(url) && url.fragment === null && url.query === null) url.path = url.path.replace(/ +$/, '');
  }
  function parseWithBase(input, base) {
    const baseRecord = base === undefined ? null : basicParse(toUSV(base));
    return baseRecord === FAILURE ? FAILURE : basicParse(toUSV(input), baseRecord);
  }

  // ---------------------------------------------------------- URLSearchParams

  function parseFormUrlencoded(input) {
    const list = [];
    for (const sequence of input.split('&')) {
      if (sequence === '') continue;
      const eq = sequence.indexOf('=');
      const [name, value] = eq < 0 ? [sequence, ''] : [sequence.slice(0, eq), sequence.slice(eq + 1)];
      list.push([percentDecode(name.replace(/\+/g, ' ')), percentDecode(value.replace(/\+/g, ' '))]);
    }
    return list;
  }
  const formEncode = (str) => percentEncodeString(str, FORM_SET).replace(/%20/g, '+');

  // Hooks handed out by the classes' static blocks so URL and URLSearchParams can reach
  // each other's private state without exposing it publicly.
  let urlRecordOf;
  let linkParams;

  // Reads the list afresh on every step, so mutations during iteration are seen as in browsers.
  function* iterateParams(getList, kind) {
    for (let i = 0; i < getList().length; i++) {
      const [name, value] = getList()[i];
      yield kind === 'keys' ? name : kind === 'values' ? value : [name, value];
    }
  }
  Object.defineProperty(iterateParams.prototype, Symbol.toStringTag, { value: 'URLSearchParams Iterator', configurable: true });

  /** An ordered list of name/value pairs (duplicates allowed) in application/x-www-form-urlencoded form. */
  class URLSearchParams {
    #list = [];
    #url = null; // the owning URL, whose query mirrors this list

    /** @param {string|Iterable<[string, string]>|Record<string, string>} [init] leading "?" of a string is ignored */
    constructor(init = '') {
      if (init === null) return; // WebIDL converts null to an empty record
      if (typeof init === 'object' || typeof init === 'function') {
        if (typeof init[Symbol.iterator] === 'function') {
          for (const pair of init) {
            const items = pair !== null && typeof pair === 'object' && typeof pair[Symbol.iterator] === 'function' ? [...pair] : [];
            if (items.length !== 2) throw new TypeError('Each query pair must be an iterable [name, value] tuple');
            this.#list.push([toUSV(items[0]), toUSV(items[1])]);
          }
        } else for (const key of Object.keys(init)) this.#list.push([toUSV(key), toUSV(init[key])]);
      } else {
        const str = toUSV(init);
        this.#list = parseFormUrlencoded(str[0] === '?' ? str.slice(1) : str);
      }
    }

    static {
      linkParams = (params, url, query) => {
        params.#url = url;
        params.#list = query === null ? [] : parseFormUrlencoded(query);
      };
    }

    // Every mutation is written back to the owning URL's query, as the spec requires.
    #update() {
      if (this.#url === null) return;
      const record = urlRecordOf(this.#url);
      record.query = this.toString() || null;
      if (record.query === null) stripTrailingSpaces(record);
    }

    get size() { return this.#list.length; }

    append(name, value) {
      if (arguments.length < 2) throw new TypeError('The "name" and "value" arguments must be specified');
      this.#list.push([toUSV(name), toUSV(value)]);
      this.#update();
    }

    /** Removes all pairs named `name` (only those whose value is also `value`, when given). */
    delete(name, value = undefined) {
      const [n, v] = [toUSV(name), value === undefined ? undefined : toUSV(value)];
      this.#list = this.#list.filter((e) => e[0] !== n || (v !== undefined && e[1] !== v));
      this.#update();
    }

    get(name) {
      const entry = this.#list.find((e) => e[0] === toUSV(name));
      return entry ? entry[1] : null;
    }

    getAll(name) { return this.#list.filter((e) => e[0] === toUSV(name)).map((e) => e[1]); }

    has(name, value = undefined) {
      const [n, v] = [toUSV(name), value === undefined ? undefined : toUSV(value)];
      return this.#list.some((e) => e[0] === n && (v === undefined || e[1] === v));
    }

    /** Replaces the first pair named `name` and removes the others (or appends if none). */
    set(name, value) {
      if (arguments.length < 2) throw new TypeError('The "name" and "value" arguments must be specified');
      const [n, v] = [toUSV(name), toUSV(value)];
      const i = this.#list.findIndex((e) => e[0] === n);
      if (i < 0) this.#list.push([n, v]);
      else this.#list = this.#list.filter((e, j) => j < i || e[0] !== n).toSpliced(i, 0, [n, v]);
      this.#update();
    }

    /** Stable sort by name, comparing UTF-16 code units as the spec requires. */
    sort() {
      this.#list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this.#update();
    }

    forEach(callback, thisArg = undefined) {
      if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
      for (let i = 0; i < this.#list.length; i++) callback.call(thisArg, this.#list[i][1], this.#list[i][0], this);
    }

    keys() { return iterateParams(() => this.#list, 'keys'); }
    values() { return iterateParams(() => this.#list, 'values'); }
    entries() { return iterateParams(() => this.#list, 'entries'); }

    /** @returns {string} e.g. "a=1&b=x+y" (space as "+") */
    toString() { return this.#list.map(([n, v]) => `${formEncode(n)}=${formEncode(v)}`).join('&'); }
  }
  setTag(URLSearchParams, 'URLSearchParams');
  // As in browsers, the default iterator is the very same function as entries().
  Object.defineProperty(URLSearchParams.prototype, Symbol.iterator, { value: URLSearchParams.prototype.entries, writable: true, configurable: true });

  // --------------------------------------------------------------------- URL

  function invalidURL(message, input) {
    const err = new TypeError(`${message}: ${input}`);
    Object.assign(err, { code: 'ERR_INVALID_URL', input });
    return err;
  }

  /** A parsed WHATWG URL; every component can be read and assigned individually. */
  class URL {
    #url;
    #params = new URLSearchParams();

    /**
     * @param {string} url absolute URL, or a relative one when `base` is given
     * @param {string|URL} [base]
     */
    constructor(url, base = undefined) {
      if (arguments.length === 0) throw new TypeError('The "url" argument must be specified');
      const input = toUSV(url);
      let baseRecord = null;
      if (base !== undefined) {
        baseRecord = basicParse(toUSV(base));
        if (baseRecord === FAILURE) throw invalidURL('Invalid base URL', toUSV(base));
      }
      this.#url = basicParse(input, baseRecord);
      if (this.#url === FAILURE) throw invalidURL('Invalid URL', input);
      this.#syncParams();
    }

    static {
      urlRecordOf = (url) => url.#url;
    }

    /** @returns {boolean} whether `new URL(url, base)` would succeed */
    static canParse(url, base = undefined) { return parseWithBase(url, base) !== FAILURE; }

    /** @returns {URL|null} like `new URL(url, base)`, but null instead of throwing */
    static parse(url, base = undefined) {
      try { return new URL(url, base); } catch { return null; }
    }

    #syncParams() { linkParams(this.#params, this, this.#url.query); }

    // The spec forbids credentials and ports on URLs with an empty host or file: scheme.
    get #cannotHaveCredentials() { return !this.#url.host || this.#url.scheme === 'file'; }

    get href() { return serializeURL(this.#url); }
    set href(value) {
      const record = basicParse(toUSV(value));
      if (record === FAILURE) throw invalidURL('Invalid URL', toUSV(value));
      this.#url = record;
      this.#syncParams();
    }

    get origin() {
      const url = this.#url;
      if (url.scheme === 'blob') { // blob:https://host/uuid has the origin of the embedded URL
        const inner = basicParse(serializePath(url));
        return inner !== FAILURE && (inner.scheme === 'http' || inner.scheme === 'https') ? new URL(serializeURL(inner)).origin : 'null';
      }
      if (!isSpecial(url) || url.scheme === 'file') return 'null';
      return `${url.scheme}://${url.host}${url.port !== null ? `:${url.port}` : ''}`;
    }

    get protocol() { return `${this.#url.scheme}:`; }
    set protocol(value) { basicParse(`${toUSV(value)}:`, null, this.#url, 'schemeStart'); }

    get username() { return this.#url.username; }
    set username(value) { if (!this.#cannotHaveCredentials) this.#url.username = percentEncodeString(toUSV(value), USERINFO_SET); }

    get password() { return this.#url.password; }
    set password(value) { if (!this.#cannotHaveCredentials) this.#url.password = percentEncodeString(toUSV(value), USERINFO_SET); }

    get host() {
      const { host, port } = this.#url;
      return host === null ? '' : port === null ? host : `${host}:${port}`;
    }
    set host(value) { if (!hasOpaquePath(this.#url)) basicParse(toUSV(value), null, this.#url, 'host'); }

    get hostname() { return this.#url.host ?? ''; }
    set hostname(value) { if (!hasOpaquePath(this.#url)) basicParse(toUSV(value), null, this.#url, 'hostname'); }

    get port() { return this.#url.port === null ? '' : String(this.#url.port); }
    set port(value) {
      if (this.#cannotHaveCredentials) return;
      value = toUSV(value);
      if (value === '') this.#url.port = null;
      else basicParse(value, null, this.#url, 'port');
    }

    get pathname() { return serializePath(this.#url); }
    set pathname(value) {
      if (hasOpaquePath(this.#url)) return;
      this.#url.path = [];
      basicParse(toUSV(value), null, this.#url, 'pathStart');
    }

    get search() { return this.#url.query ? `?${this.#url.query}` : ''; }
    set search(value) {
      value = toUSV(value);
      if (value === '') {
        this.#url.query = null;
        stripTrailingSpaces(this.#url);
      } else {
        this.#url.query = '';
        basicParse(value[0] === '?' ? value.slice(1) : value, null, this.#url, 'query');
      }
      this.#syncParams();
    }

    /** @returns {URLSearchParams} live view of the query: mutating it rewrites this URL */
    get searchParams() { return this.#params; }

    get hash() { return this.#url.fragment ? `#${this.#url.fragment}` : ''; }
    set hash(value) {
      value = toUSV(value);
      if (value === '') {
        this.#url.fragment = null;
        stripTrailingSpaces(this.#url);
        return;
      }
      this.#url.fragment = '';
      basicParse(value[0] === '#' ? value.slice(1) : value, null, this.#url, 'fragment');
    }

    toString() { return this.href; }
    toJSON() { return this.href; }
  }
  setTag(URL, 'URL');

  // ----------------------------------------------------------------- install

  const globals = { TextEncoder, TextDecoder, atob, btoa, queueMicrotask, structuredClone, URL, URLSearchParams };
  for (const [name, value] of Object.entries(globals)) {
    if (typeof globalThis[name] === 'undefined') {
      Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
    }
  }
})();
