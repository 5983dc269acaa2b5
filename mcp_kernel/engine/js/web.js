// Standard web globals for a bare V8 isolate: encoding, base64 and queueMicrotask here, plus
// the helpers that clone.js, url-host.js, url-parse.js and url.js share (`__mcp2repl.web`).
//
// V8 on its own ships only the ECMAScript built-ins; the globals below come from
// the WHATWG/HTML specs and are normally supplied by the embedder (browser, Node,
// Deno).  Notebook users expect them, so we provide small dependency-free
// implementations.  Each global is installed only when absent, so this script is
// safe to evaluate repeatedly and never shadows a native implementation.
(function installWebGlobals() {
  'use strict';
  if (!globalThis.__mcp2repl) Object.defineProperty(globalThis, '__mcp2repl', { value: {}, writable: true, configurable: true, enumerable: false });
  const ns = globalThis.__mcp2repl;
  const hasOwn = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
  const getter = (proto, key) => Object.getOwnPropertyDescriptor(proto, key).get;
  const objectTag = (v) => Object.prototype.toString.call(v).slice(8, -1);
  const setTag = (cls, tag) => Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: tag, configurable: true });

  // Browsers throw DOMExceptions, which bare V8 lacks; an Error with the same name and code
  // is what user code can actually observe (e.name === 'DataCloneError').
  function domError(name, code, message) {
    const err = new Error(message);
    Object.defineProperty(err, 'name', { __proto__: null, value: name, writable: true, configurable: true });
    Object.defineProperty(err, 'code', { __proto__: null, value: code, writable: true, configurable: true });
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

  /** The UTF-8 length of a well-formed string (toUSV made it so). */
  function utf8Length(str) {
    let n = 0;
    for (let i = 0; i < str.length; i++) {
      const c = str.charCodeAt(i);
      n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? (i++, 4) : 3;
    }
    return n;
  }

  function utf8Encode(str) {
    const len = str.length;
    // worst case: every UTF-16 unit becomes 3 bytes; unless that passes the array buffer limit (buffers.js)
    const limit = typeof __mk$L === 'function' ? __mk$L() : 0;
    const out = new Uint8Array(limit === 0 || len * 3 <= limit ? len * 3 : utf8Length(str));
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
      // an interrupted cell stops here too: a callback that queues itself forever never checks a flag
      if (typeof __mk$s !== 'undefined' && __mk$s()) return;
      try { callback(); } catch (err) { if (typeof globalThis.reportError === 'function') globalThis.reportError(err); }
    });
  }

  /** Define each global that is absent (never shadow a native implementation), non-enumerable. */
  function install(globals) {
    for (const [name, value] of Object.entries(globals)) {
      if (typeof globalThis[name] === 'undefined') {
        Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
      }
    }
  }

  /** Base64 of bytes (Uint8Array, any typed array view, ArrayBuffer); strings pass through. */
  ns.toBase64 = function toBase64(bytes) {
    if (typeof bytes === 'string') return bytes;
    const view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return btoa(codesToString(view, view.length));
  };

  ns.web = { hasOwn, getter, objectTag, setTag, domError, toUSV, codesToString, utf8Encode, decodeUtf8, newDecoderState, install, atob, btoa };
  install({ TextEncoder, TextDecoder, atob, btoa, queueMicrotask });
})();
