/*
 * inspect.js: Node.js-style formatting of JavaScript values for the mcp2repl kernel.
 *
 * Evaluated as a plain script in a bare V8 isolate (no Node APIs). It defines `inspect`,
 * `format`, `formatWithOptions` and `jsonValue` on the non-enumerable global `__mcp2repl`
 * and nothing else; evaluating it again simply refreshes them.
 *
 * Ground rules, and why:
 *  - Output mirrors Node 20's `util.inspect` (without colors): it is what people who
 *    write JavaScript expect to read.
 *  - No user code ever runs: properties are read through descriptors, types are told
 *    apart by built-in brand checks captured at load time, and getters, toString,
 *    valueOf, toJSON, Symbol.toPrimitive and Symbol.hasInstance are never invoked.
 *    (Proxies cannot be detected from pure JS, so their traps may run.)
 *  - It never throws and stays fast: the work is bounded by depth, maxArrayLength,
 *    maxStringLength and a budget for the whole output (maxChars).
 */
(function () {
  'use strict';
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)

  // ---- Built-ins, captured now so that later monkey-patching by user code cannot affect us.
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const { getOwnPropertyDescriptor: getDesc, getPrototypeOf: getProto, keys: objectKeys,
    getOwnPropertyNames: ownNames, getOwnPropertySymbols: ownSymbols, is: objectIs } = Object;
  const { isArray } = Array;
  const { isNaN: numberIsNaN, isFinite: numberIsFinite } = Number;
  const ObjectProto = Object.prototype;
  const hasOwn = uncurry(ObjectProto.hasOwnProperty);
  const isEnumerable = uncurry(ObjectProto.propertyIsEnumerable);
  const isProtoOf = uncurry(ObjectProto.isPrototypeOf);
  const fnToString = uncurry(Function.prototype.toString);
  const symToString = uncurry(Symbol.prototype.toString);
  const jsonStringify = JSON.stringify;
  const MapCtor = Map;
  const U8 = Uint8Array;
  const mapGet = uncurry(Map.prototype.get);
  const mapSet = uncurry(Map.prototype.set);
  const getter = (proto, key) => uncurry(getDesc(proto, key).get);
  const TypedArrayProto = getProto(Uint8Array.prototype);
  const typedArrayTagGetter = getDesc(TypedArrayProto, Symbol.toStringTag).get;
  // The type name for typed arrays, undefined for anything else: a brand check that never throws.
  const typedArrayName = uncurry(typedArrayTagGetter);
  const typedArrayLength = getter(TypedArrayProto, 'length');
  const typedArrayHidden = $.map(['byteLength', 'byteOffset', 'buffer'], (k) => [k, getter(TypedArrayProto, k)]);
  const setSize = getter(Set.prototype, 'size');
  const mapSize = getter(Map.prototype, 'size');
  const setValues = uncurry(Set.prototype.values);
  const mapEntries = uncurry(Map.prototype.entries);
  const setIterNext = uncurry(getProto(new Set().values()).next);
  const mapIterNext = uncurry(getProto(new Map().entries()).next);
  const bufferByteLength = getter(ArrayBuffer.prototype, 'byteLength');
  const SAB = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer : undefined;
  const sabByteLength = SAB && getter(SAB.prototype, 'byteLength');
  const viewGetters = $.map(['byteLength', 'byteOffset', 'buffer'], (k) => [k, getter(DataView.prototype, k)]);
  const dateGetTime = uncurry(Date.prototype.getTime);
  const dateToISO = uncurry(Date.prototype.toISOString);
  const regexpSource = getter(RegExp.prototype, 'source');
  // Flags are read one by one through the built-in getters: the generic `flags` getter
  // would read (possibly user-defined) properties of the object.
  const regexpFlags = $.map($.filter([['hasIndices', 'd'], ['global', 'g'], ['ignoreCase', 'i'], ['multiline', 'm'],
    ['dotAll', 's'], ['unicode', 'u'], ['unicodeSets', 'v'], ['sticky', 'y']], ([key]) => getDesc(RegExp.prototype, key)), ([key, flag]) => [getter(RegExp.prototype, key), flag]);
  const weakSetHas = uncurry(WeakSet.prototype.has);
  const weakMapHas = uncurry(WeakMap.prototype.has);
  const BOXES = $.map([['Number', Number], ['String', String], ['Boolean', Boolean], ['BigInt', BigInt], ['Symbol', Symbol]], ([type, C]) => ({ type, proto: C.prototype, valueOf: uncurry(C.prototype.valueOf) }));
  const isNativeError = typeof Error.isError === 'function' ? Error.isError : () => false;
  // V8's own `stack` accessor. Calling it runs no user code (except a user-installed
  // Error.prepareStackTrace, which is exactly what such a user wants).
  const stackGetter = (getDesc(new Error(), 'stack') || {}).get;
  const getStack = stackGetter && uncurry(stackGetter);
  const FUNCTION_TYPES = $.map([[function* () {}, 'GeneratorFunction'], [async function () {}, 'AsyncFunction'],
    [async function* () {}, 'AsyncGeneratorFunction']], ([f, type]) => [getProto(f), type]);

  /** Is the cell being stopped (bridge.js)? Then an error is the interrupt's, and is not caught here. */
  const stopping = () => { const f = globalThis.__mcp2repl.stopping; return typeof f === 'function' && f(); };
  /** Throw the stopped cell's error (bridge.js), for loops over a whole value. */
  const checkStop = () => { const f = globalThis.__mcp2repl.checkStop; if (typeof f === 'function') f(); };
  const TO_STRING_TAG = Symbol.toStringTag;
  // A descriptor is a plain object: read `get` and `set` as its own (a data property has neither,
  // and Object.prototype.get may be a cell's).
  const descGet = (desc) => (hasOwn(desc, 'get') ? desc.get : undefined);
  const descSet = (desc) => (hasOwn(desc, 'set') ? desc.set : undefined);
  const ITERATOR = Symbol.iterator;
  const apply = Reflect.apply;
  // (At run time, no spreading, `for…of` or array destructuring in here: each iterates with
  // Array.prototype[Symbol.iterator], which a cell may replace; nor RegExp methods, which look
  // up `exec`: `$.test` and `$.exec` call the built-in one.)

  const kObjectType = 0;
  const kArrayType = 1;
  const kArrayExtrasType = 2;
  // Listing an array's keys lists every index (~0.15 µs each), so beyond this length only
  // symbol keys are looked for beside the elements.
  const LARGE_LENGTH = 1 << 16;
  /** /^[a-zA-Z_][a-zA-Z_0-9]*$/ as a loop: runs for every key shown, and a RegExp match allocates. */
  function isIdentifier(key) {
    if (key.length === 0) return false;
    for (let i = 0; i < key.length; i++) {
      const c = $.charCodeAt(key, i);
      const letter = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
      if (!letter && (i === 0 || c < 48 || c > 57)) return false;
    }
    return true;
  }

  // ---- Safe property access and type information ----------------------------------------
  // prototypes, captured for checks made while formatting
  const ArrayProto_ = Array.prototype, ArrayBufferProto_ = ArrayBuffer.prototype, DataViewProto_ = DataView.prototype, DateProto_ = Date.prototype, ErrorProto_ = Error.prototype, MapProto_ = Map.prototype, ObjectProto_ = Object.prototype, PromiseProto_ = Promise.prototype, RangeErrorProto_ = RangeError.prototype, RegExpProto_ = RegExp.prototype, SetProto_ = Set.prototype, WeakMapProto_ = WeakMap.prototype, WeakSetProto_ = WeakSet.prototype;

  /** Descriptor of `key` on `obj` or its prototype chain (never runs getters). */
  function findDesc(obj, key) {
    for (let o = obj, n = 0; o !== null && n < 1000; o = getProto(o), n++) {
      const desc = getDesc(o, key);
      if (desc !== undefined) return desc;
    }
    return undefined;
  }

  /** `obj[key]` if that is a data property, otherwise undefined. */
  function safeGet(obj, key) {
    const desc = findDesc(obj, key);
    return desc !== undefined && hasOwn(desc, 'value') ? desc.value : undefined;
  }

  /** Brand check: does the built-in `fn` accept `value` as its receiver? */
  function hasBrand(fn, value, arg) {
    try {
      fn(value, arg);
      return true;
    } catch {
      return false;
    }
  }

  const isPrimitive = (v) => v === null || (typeof v !== 'object' && typeof v !== 'function');
  const primitiveString = (v, fallback) => (isPrimitive(v) ? $.String(v) : fallback);

  function functionName(fn) {
    const name = safeGet(fn, 'name');
    return typeof name === 'string' ? name : name === undefined ? '' : primitiveString(name, '');
  }

  // The name Node shows for a `constructor` descriptor: a named function whose `prototype` is
  // on the object's chain (checked on the chain: `instanceof` could run Symbol.hasInstance).
  function ctorNameFrom(desc, chain) {
    if (desc === undefined || typeof desc.value !== 'function') return undefined;
    const name = functionName(desc.value);
    return name !== '' && $.includes(chain, safeGet(desc.value, 'prototype')) ? name : undefined;
  }

  // What objects whose first prototype is `proto` inherit: the chain, constructor name and
  // Symbol.toStringTag descriptor. Cached per inspect() call: values share few prototypes,
  // and walking a chain allocates a descriptor per step, which used to be most of the cost.
  function inherited(ctx, proto) {
    let info = mapGet(ctx.protos, proto);
    if (info !== undefined) return info;
    const chain = [];
    for (let o = proto; o !== null && chain.length < 1000; o = getProto(o)) $.push(chain, o);
    let ctor;
    let tagDesc;
    for (let i = 0; i < chain.length; i++) {
      const o = chain[i];
      if (ctor === undefined) ctor = ctorNameFrom(getDesc(o, 'constructor'), chain);
      if (tagDesc === undefined) tagDesc = getDesc(o, TO_STRING_TAG);
    }
    info = { chain, ctor, tagDesc, odd: !$.includes(chain, ObjectProto) };
    mapSet(ctx.protos, proto, info);
    return info;
  }

  /** Constructor name as Node prints it; null for null-prototype objects. */
  function constructorName(ctx, obj, info, recurseTimes) {
    const own = ctorNameFrom(getDesc(obj, 'constructor'), info.chain);
    if (own !== undefined) return own;
    if (info.ctor !== undefined) return info.ctor;
    if (info.chain.length === 0) return null;
    // No named constructor on the chain: Node shows V8's internal class name, which JS
    // cannot read; 'Object' is right for ordinary objects.
    if (recurseTimes > ctx.depth) return 'Object <Complex prototype>';
    const first = info.chain[0];
    const protoName = constructorName(ctx, first, inherited(ctx, getProto(first)), recurseTimes + 1);
    if (protoName !== null) return `Object <${protoName}>`;
    return `Object <${inspect(first, { depth: -1, breakLength: ctx.breakLength })}>`;
  }

  // Symbol.toStringTag, shown only when inherited or non-enumerable (an own enumerable one
  // is printed as a property anyway). Only V8's typed-array getter is ever called.
  function toStringTag(ctx, value, info) {
    let desc = getDesc(value, TO_STRING_TAG);
    if (desc === undefined) desc = info.tagDesc;
    else if (ctx.showHidden || desc.enumerable) return '';
    if (desc === undefined) return '';
    const tag = hasOwn(desc, 'value') ? desc.value : descGet(desc) === typedArrayTagGetter ? typedArrayName(value) : '';
    return typeof tag === 'string' ? tag : '';
  }

  function getPrefix(ctor, tag, fallback, size = '') {
    if (ctor === null) {
      if (tag !== '' && fallback !== tag) return `[${fallback}${size}: null prototype] [${tag}] `;
      return `[${fallback}${size}: null prototype] `;
    }
    return tag !== '' && ctor !== tag ? `${ctor}${size} [${tag}] ` : `${ctor}${size} `;
  }

  function getKeys(ctx, value) {
    const keys = ctx.showHidden ? ownNames(value) : objectKeys(value);
    const symbols = ownSymbols(value);
    for (let i = 0; i < symbols.length; i++) if (ctx.showHidden || isEnumerable(value, symbols[i])) $.push(keys, symbols[i]);
    return keys;
  }

  function isIndexKey(key) {
    const n = +key;
    return n >>> 0 === n && n !== 4294967295 && `${n}` === key;
  }

  /** Index of the first element of sorted `list` for which `isBefore` is false. */
  function partition(list, isBefore) {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (isBefore(list[mid])) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  const indexKeyCount = (keys) => partition(keys, (k) => typeof k === 'string' && isIndexKey(k));

  // Own keys other than array indices. V8 lists index keys first, in ascending order.
  function nonIndexKeys(ctx, value, length) {
    if (length > LARGE_LENGTH) return $.filter(ownSymbols(value), (s) => ctx.showHidden || isEnumerable(value, s));
    const keys = getKeys(ctx, value);
    return $.slice(keys, indexKeyCount(keys));
  }

  // ---- Primitives -------------------------------------------------------------------------

  const META = [];
  for (let c = 0; c < 160; c++) {
    if (c < 32 || c > 126) META[c] = `\\x${$.padStart(c.toString(16).toUpperCase(), 2, '0')}`;
  }
  Object.assign(META, { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r', 39: "\\'", 92: '\\\\' });
  // Control characters, backslash, lone surrogates and (unless another quote is used) '.
  const ESCAPE_ALL = /[\x00-\x1f\x27\x5c\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const ESCAPE_NO_QUOTE = /[\x00-\x1f\x5c\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const escapeChar = (ch) => {
    const code = $.charCodeAt(ch, 0);
    return code < 160 ? META[code] : `\\u${code.toString(16)}`;
  };

  /** Quote a string like Node: single quotes, else " or ` to avoid escaping quotes. */
  /** `str` cut after each line break (each piece keeps its "\n"). */
  function linesKeepingBreaks(str) {
    const out = [];
    let from = 0;
    for (let at = $.indexOf(str, '\n'); at !== -1; at = $.indexOf(str, '\n', from)) {
      $.push(out, $.slice(str, from, at + 1));
      from = at + 1;
    }
    if (from < str.length) $.push(out, $.slice(str, from));
    return out;
  }

  function quote(str) {
    let open = "'";
    let re = ESCAPE_ALL;
    if ($.includes(str, "'")) {
      if (!$.includes(str, '"')) open = '"';
      else if (!$.includes(str, '`') && !$.includes(str, '${')) open = '`';
      if (open !== "'") re = ESCAPE_NO_QUOTE;
    }
    re.lastIndex = 0; // testing first is much cheaper than a replace() that finds nothing
    return open + ($.test(re, str) ? $.replace(str, re, escapeChar) : str) + open;
  }

  const formatNumber = (n) => (objectIs(n, -0) ? '-0' : `${n}`);

  function formatPrimitive(ctx, value) {
    switch (typeof value) {
      case 'string': {
        let trailer = '';
        if (value.length > ctx.maxStringLength) {
          const remaining = value.length - ctx.maxStringLength;
          value = $.slice(value, 0, $.max(0, ctx.maxStringLength));
          trailer = `... ${remaining} more character${remaining > 1 ? 's' : ''}`;
        }
        // Long multi-line strings print one quoted line at a time, joined by '+'.
        if (value.length > 16 && value.length > ctx.breakLength - ctx.indentationLvl - 4) {
          return $.join($.map(linesKeepingBreaks(value), quote), ` +\n${$.repeat(' ', ctx.indentationLvl + 2)}`) + trailer;
        }
        return quote(value) + trailer;
      }
      case 'number': return formatNumber(value);
      case 'bigint': return `${value}n`;
      case 'symbol': return symToString(value);
      default: return `${value}`; // undefined, boolean
    }
  }

  // ---- Objects ----------------------------------------------------------------------------

  /** Count output towards maxChars; past it, everything left is skipped. */
  function leaf(ctx, str) {
    ctx.used += str.length;
    if (ctx.used > ctx.maxChars) ctx.exhausted = true;
    return str;
  }

  function fallbackText(value) {
    try {
      return `[object ${typeof value === 'function' ? 'Function' : isArray(value) ? 'Array' : 'Object'}]`;
    } catch {
      return '[object Object]'; // isArray throws for revoked proxies
    }
  }

  function formatValue(ctx, value, recurseTimes, typedArray) {
    if (ctx.exhausted) return '';
    if (isPrimitive(value)) return leaf(ctx, value === null ? 'null' : formatPrimitive(ctx, value));
    if ($.includes(ctx.seen, value)) {
      let index = ctx.circular && mapGet(ctx.circular, value);
      if (index === undefined) {
        if (!ctx.circular) ctx.circular = new MapCtor();
        index = mapSize(ctx.circular) + 1;
        mapSet(ctx.circular, value, index);
      }
      return leaf(ctx, `[Circular *${index}]`);
    }
    const seenLength = ctx.seen.length;
    const indentation = ctx.indentationLvl;
    try {
      return formatRaw(ctx, value, recurseTimes, typedArray);
    } catch (err) {
      if (stopping()) throw err; // an interrupt thrown in a Proxy trap ends the cell, not the value
      ctx.seen.length = seenLength;
      ctx.indentationLvl = indentation;
      let overflow = false;
      try {
        overflow = isProtoOf(RangeErrorProto_, err) && $.test(/call stack/, safeGet(err, 'message'));
      } catch { /* a hostile thrown value: a plain failure */ }
      return leaf(ctx, overflow
        ? '[Object: Inspection interrupted prematurely. Maximum call stack size exceeded.]'
        : fallbackText(value));
    }
  }

  function formatRaw(ctx, value, recurseTimes, typedArray) {
    const info = inherited(ctx, getProto(value));
    const ctor = constructorName(ctx, value, info, recurseTimes);
    const tag = toStringTag(ctx, value, info);
    // Ordinary objects only get the brand checks their prototype chain makes plausible
    // (a failing brand check throws, which is slow); odd chains get all of them.
    const may = (proto) => info.odd || $.includes(info.chain, proto);
    let keys;
    let base = '';
    let braces = ['{', '}'];
    let formatter = () => [];
    let extrasType = kObjectType;
    let brief; // set when the value prints without braces
    const empty = () => keys.length === 0;

    if (isArray(value)) {
      const len = value.length;
      const prefix = ctor !== 'Array' || tag !== '' ? getPrefix(ctor, tag, 'Array', `(${len})`) : '';
      keys = nonIndexKeys(ctx, value, len);
      braces = [`${prefix}[`, ']'];
      if (len === 0 && empty()) return leaf(ctx, `${prefix}[]`);
      extrasType = kArrayExtrasType;
      formatter = formatArray;
    } else if ((may(SetProto_) && hasBrand(setSize, value)) || (may(MapProto_) && hasBrand(mapSize, value))) {
      const isSet = may(SetProto_) && hasBrand(setSize, value);
      const size = isSet ? setSize(value) : mapSize(value);
      const prefix = getPrefix(ctor, tag, isSet ? 'Set' : 'Map', `(${size})`);
      keys = getKeys(ctx, value);
      if (size === 0 && empty()) return leaf(ctx, `${prefix}{}`);
      braces[0] = `${prefix}{`;
      formatter = isSet ? formatSet : formatMap;
    } else if (typedArrayName(value) !== undefined) {
      const size = typedArrayLength(value);
      const prefix = getPrefix(ctor, tag, ctor === null ? typedArrayName(value) : '', `(${size})`);
      keys = nonIndexKeys(ctx, value, size);
      braces = [`${prefix}[`, ']'];
      if (size === 0 && empty() && !ctx.showHidden) return leaf(ctx, `${prefix}[]`);
      formatter = formatTypedArray;
      extrasType = kArrayExtrasType;
    } else {
      keys = getKeys(ctx, value);
      const brace = (fallback, entries) => {
        braces[0] = `${getPrefix(ctor, tag, fallback)}{`;
        if (entries) formatter = () => [entries];
      };
      if (ctor === 'Object') {
        if (isArguments(value)) braces[0] = '[Arguments] {';
        else if (tag !== '') brace('Object');
        if (empty()) return leaf(ctx, `${braces[0]}}`);
      } else if (typeof value === 'function') {
        base = functionBase(value, ctor, tag);
        if (empty()) brief = base;
      } else if (value !== RegExpProto_ && may(RegExpProto_) && hasBrand(regexpSource, value)) {
        base = `/${regexpSource(value)}/${$.join($.map(regexpFlags, (flag) => (flag[0](value) ? flag[1] : '')), '')}`;
        const prefix = getPrefix(ctor, tag, 'RegExp');
        if (prefix !== 'RegExp ') base = `${prefix}${base}`;
        if (empty() || recurseTimes > ctx.depth) brief = base;
      } else if (may(DateProto_) && hasBrand(dateGetTime, value)) {
        base = numberIsNaN(dateGetTime(value)) ? 'Invalid Date' : dateToISO(value);
        const prefix = getPrefix(ctor, tag, 'Date');
        if (empty()) brief = base;
        else if (prefix !== 'Date ') base = `${prefix}${base}`;
      } else if (isNativeError(value) || $.includes(info.chain, ErrorProto_)) {
        base = formatError(ctx, value, ctor, tag, keys);
        if (empty()) brief = base;
      } else if ((may(ArrayBufferProto_) && hasBrand(bufferByteLength, value)) ||
                 (SAB && may(SAB.prototype) && hasBrand(sabByteLength, value))) {
        const shared = !hasBrand(bufferByteLength, value);
        const byteLength = (shared ? sabByteLength : bufferByteLength)(value);
        brace(shared ? 'SharedArrayBuffer' : 'ArrayBuffer');
        // As the [buffer] of a typed array (showHidden) Node prints only the length.
        if (typedArray === undefined) formatter = formatArrayBuffer;
        else if (empty()) return leaf(ctx, `${braces[0]} byteLength: ${formatNumber(byteLength)} }`);
        $.unshift(keys, { name: 'byteLength', value: byteLength });
      } else if (may(DataViewProto_) && hasBrand(viewGetters[0][1], value)) {
        brace('DataView');
        for (let i = viewGetters.length - 1; i >= 0; i--) $.unshift(keys, { name: viewGetters[i][0], value: viewGetters[i][1](value) });
      } else if ($.includes(info.chain, PromiseProto_)) {
        brace('Promise', '<unknown>'); // a promise's state cannot be read synchronously from JS
      } else if (may(WeakSetProto_) && hasBrand(weakSetHas, value, {})) {
        brace('WeakSet', '<items unknown>');
      } else if (may(WeakMapProto_) && hasBrand(weakMapHas, value, {})) {
        brace('WeakMap', '<items unknown>');
      } else {
        const box = $.find(BOXES, (b) => may(b.proto) && hasBrand(b.valueOf, value));
        if (box !== undefined) {
          base = boxedBase(ctx, value, box, keys, ctor, tag);
          if (empty()) brief = base;
        } else {
          brace('Object');
          if (empty()) return leaf(ctx, `${braces[0]}}`);
        }
      }
    }
    if (brief !== undefined) return leaf(ctx, brief);
    if (recurseTimes > ctx.depth) {
      const name = $.slice(getPrefix(ctor, tag, 'Object'), 0, -1);
      return leaf(ctx, ctor !== null ? `[${name}]` : name);
    }

    recurseTimes += 1;
    $.push(ctx.seen, value);
    ctx.currentDepth = recurseTimes;
    const output = formatter(ctx, value, recurseTimes);
    for (let i = 0; i < keys.length && !ctx.exhausted; i++) {
      $.push(output, formatProperty(ctx, value, recurseTimes, keys[i], extrasType));
    }
    const index = ctx.circular && mapGet(ctx.circular, value);
    if (index !== undefined) base = base === '' ? `<ref *${index}>` : `<ref *${index}> ${base}`;
    $.pop(ctx.seen);
    return reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value);
  }

  function isArguments(value) {
    const callee = getDesc(value, 'callee');
    const length = getDesc(value, 'length');
    return callee !== undefined && !callee.enumerable && length !== undefined && !length.enumerable &&
      hasOwn(value, ITERATOR);
  }

  function isClassSource(src) {
    const brace = $.indexOf(src, '{');
    if (!$.startsWith(src, 'class') || !$.endsWith(src, '}') || brace === -1) return false;
    // A '(' before the body means `extends f(...)` (Node prints a function then), unless
    // it only sits in a comment.
    return !$.includes($.replace($.slice(src, 5, brace), /\/\/[^\n]*\n|\/\*[\s\S]*?\*\//g, ''), '(');
  }

  function functionBase(fn, ctor, tag) {
    let source = '';
    try {
      source = fnToString(fn);
    } catch { /* e.g. a revoked proxy */ }
    const tagText = tag !== '' && ctor !== tag ? ` [${tag}]` : '';
    if (isClassSource(source)) {
      let base = `class ${(hasOwn(fn, 'name') && functionName(fn)) || '(anonymous)'}`;
      if (ctor !== 'Function' && ctor !== null) base += ` [${ctor}]`;
      base += tagText;
      const superName = ctor === null ? '[null prototype]' : functionName(getProto(fn));
      return `[${base}${superName ? ` extends ${superName}` : ''}]`;
    }
    const type = ($.find(FUNCTION_TYPES, (t) => isProtoOf(t[0], fn)) || [0, 'Function'])[1];
    const name = functionName(fn);
    let base = `[${type}${ctor === null ? ' (null prototype)' : ''}${name === '' ? ' (anonymous)' : `: ${name}`}]`;
    if (ctor !== type && ctor !== null) base += ` ${ctor}`;
    return base + tagText;
  }

  function boxedBase(ctx, value, box, keys, ctor, tag) {
    const primitive = box.valueOf(value);
    if (box.type === 'String') $.splice(keys, 0, primitive.length); // index keys repeat the characters
    let base = `[${box.type}`;
    if (box.type !== ctor) base += ctor === null ? ' (null prototype)' : ` (${ctor})`;
    base += `: ${formatPrimitive(ctx, primitive)}]`;
    return tag !== '' && tag !== ctor ? `${base} [${tag}]` : base;
  }

  // ---- Errors -----------------------------------------------------------------------------

  /** `err.stack`, or what ErrorProto_.toString would give, without running user code. */
  function stackString(err) {
    const desc = findDesc(err, 'stack');
    let stack;
    if (desc !== undefined && hasOwn(desc, 'value')) stack = desc.value;
    else if (desc !== undefined && descGet(desc) !== undefined && descGet(desc) === stackGetter) stack = getStack(err);
    if (stack && isPrimitive(stack)) return $.String(stack);
    const name = safeGet(err, 'name');
    const message = safeGet(err, 'message');
    const n = name === undefined ? 'Error' : primitiveString(name, 'Error');
    const m = message === undefined ? '' : primitiveString(message, '');
    return n === '' ? m : m === '' ? n : `${n}: ${m}`;
  }

  function formatError(ctx, err, ctor, tag, keys) {
    const rawName = safeGet(err, 'name');
    const name = rawName == null ? 'Error' : primitiveString(rawName, 'Error');
    const message = safeGet(err, 'message');
    let stack = stackString(err);
    // Own enumerable name/message/stack already shown in the stack would print twice.
    const shown = ctx.showHidden ? [] : ['name', 'message', 'stack'];
    for (let i = 0; i < shown.length; i++) {
      const key = shown[i];
      const at = $.indexOf(keys, key);
      const v = safeGet(err, key);
      if (at !== -1 && isPrimitive(v) && $.includes(stack, $.String(v))) $.splice(keys, at, 1);
    }
    if (getDesc(err, 'cause') !== undefined && !$.includes(keys, 'cause')) $.push(keys, 'cause');
    if (isArray(safeGet(err, 'errors')) && !$.includes(keys, 'errors')) $.push(keys, 'errors');
    stack = improveStack(stack, ctor, name, tag);

    let pos = (typeof message === 'string' && message !== '' && $.indexOf(stack, message)) || -1;
    if (pos !== -1) pos += message.length;
    const framesAt = $.indexOf(stack, '\n    at', pos);
    if (framesAt === -1) {
      stack = `[${stack}]`; // no stack trace: bracket it like Node
    } else {
      const frames = $.split($.slice(stack, framesAt + 1), '\n');
      trimCauseFrames(err, frames);
      stack = `${$.slice(stack, 0, framesAt)}\n${$.join(frames, '\n')}`;
    }
    return ctx.indentationLvl === 0 ? stack : $.replace(stack, /\n/g, `\n${$.repeat(' ', ctx.indentationLvl)}`);
  }

  // Make the first line name the constructor when the error's name does not
  // (`class MyError extends Error {}` prints as "MyError: ...").
  function improveStack(stack, ctor, name, tag) {
    let len = name.length;
    const regular = $.endsWith(name, 'Error') && $.startsWith(stack, name) &&
      (stack.length === len || stack[len] === ':' || stack[len] === '\n');
    if (ctor !== null && !regular) return stack;
    let fallback = 'Error';
    if (ctor === null) {
      const m = $.exec(/^([A-Z][a-z_ A-Z0-9[\]()-]+)(?::|\n\s+at)/, stack) || $.exec(/^([a-z_A-Z0-9-]*Error)$/, stack);
      fallback = (m && m[1]) || '';
      len = fallback.length;
      fallback = fallback || 'Error';
    }
    const prefix = $.slice(getPrefix(ctor, tag, fallback), 0, -1);
    if (name === prefix) return stack;
    if ($.includes(prefix, name)) return len === 0 ? `${prefix}: ${stack}` : prefix + $.slice(stack, len);
    return `${prefix} [${name}]${$.slice(stack, len)}`;
  }

  // Frames shared with the cause's stack collapse into one "... N lines matching" note.
  function trimCauseFrames(err, frames) {
    const cause = safeGet(err, 'cause');
    if (isPrimitive(cause) || !(isNativeError(cause) || isProtoOf(ErrorProto_, cause))) return;
    const causeStack = stackString(cause);
    const at = $.indexOf(causeStack, '\n    at');
    const causeFrames = at === -1 ? [] : $.split($.slice(causeStack, at + 1), '\n');
    for (let i = 0; i < frames.length - 3; i++) {
      const pos = $.indexOf(causeFrames, frames[i]);
      if (pos === -1 || causeFrames.length - pos <= 3) continue;
      const maxLen = $.min(frames.length - i, causeFrames.length - pos);
      let len = 1;
      while (len < maxLen && frames[i + len] === causeFrames[pos + len]) len++;
      if (len > 3) {
        $.splice(frames, i + 1, len - 2, `    ... ${len - 2} lines matching cause stack trace ...`);
        return;
      }
    }
  }

  // ---- Entries ----------------------------------------------------------------------------

  const moreItems = (n, what = 'item') => `... ${n} more ${what}${n > 1 ? 's' : ''}`;
  const shownLength = (ctx, length) => $.min($.max(0, ctx.maxArrayLength), length);

  function formatArray(ctx, value, recurseTimes) {
    const length = value.length;
    const max = shownLength(ctx, length);
    const output = [];
    for (let i = 0; i < max && !ctx.exhausted; i++) {
      if (!hasOwn(value, i)) return formatHoleyArray(ctx, value, recurseTimes, max, output, i);
      $.push(output, formatProperty(ctx, value, recurseTimes, i, kArrayType));
    }
    if (length > max) $.push(output, moreItems(length - max));
    return output;
  }

  // Runs of holes print as "<n empty items>". Holes are found by probing; a very long run
  // (as in `new Array(1e9)`) switches to Object.keys, which lists only what exists.
  function formatHoleyArray(ctx, value, recurseTimes, max, output, index) {
    const length = value.length;
    let probes = 1 << 16;
    let present; // own index keys, ascending, once probing has become too slow
    const nextPresent = (from) => {
      for (; present === undefined && from < length; from++) {
        if (hasOwn(value, from)) return from;
        if (--probes === 0) {
          const keys = objectKeys(value);
          present = $.slice(keys, 0, indexKeyCount(keys));
        }
      }
      if (present === undefined) return length;
      const at = partition(present, (k) => +k < from);
      return at < present.length ? +present[at] : length;
    };
    while (output.length < max && index < length && !ctx.exhausted) {
      const next = nextPresent(index);
      if (next > index) $.push(output, `<${next - index} empty item${next - index > 1 ? 's' : ''}>`);
      else $.push(output, formatProperty(ctx, value, recurseTimes, index, kArrayType));
      index = $.max(next, index + 1);
    }
    if (index < length) $.push(output, moreItems(length - index));
    return output;
  }

  function formatTypedArray(ctx, value, recurseTimes) {
    const length = typedArrayLength(value);
    const max = shownLength(ctx, length);
    const output = [];
    for (let i = 0; i < max; i++) $.push(output, leaf(ctx, formatPrimitive(ctx, value[i])));
    if (length > max) $.push(output, moreItems(length - max));
    if (ctx.showHidden) {
      const hidden = [['BYTES_PER_ELEMENT', safeGet(value, 'BYTES_PER_ELEMENT')], ['length', length]];
      for (let i = 0; i < typedArrayHidden.length; i++) $.push(hidden, [typedArrayHidden[i][0], typedArrayHidden[i][1](value)]);
      ctx.indentationLvl += 2;
      for (let i = 0; i < hidden.length; i++) $.push(output, `[${hidden[i][0]}]: ${formatValue(ctx, hidden[i][1], recurseTimes, true)}`);
      ctx.indentationLvl -= 2;
    }
    return output;
  }

  function formatArrayBuffer(ctx, value) {
    let bytes;
    try {
      bytes = new U8(value);
    } catch {
      return ['(detached)'];
    }
    const hex = [];
    for (let i = 0; i < shownLength(ctx, bytes.length); i++) $.push(hex, $.padStart(bytes[i].toString(16), 2, '0'));
    const remaining = bytes.length - ctx.maxArrayLength;
    const more = remaining > 0 ? ` ${moreItems(remaining, 'byte')}` : '';
    return [leaf(ctx, `[Uint8Contents]: <${$.join(hex, ' ')}${more}>`)];
  }

  function formatSet(ctx, value, recurseTimes) {
    return formatCollection(ctx, setValues(value), setIterNext, setSize(value),
      (v) => formatValue(ctx, v, recurseTimes));
  }

  function formatMap(ctx, value, recurseTimes) {
    return formatCollection(ctx, mapEntries(value), mapIterNext, mapSize(value),
      (e) => `${formatValue(ctx, e[0], recurseTimes)} => ${formatValue(ctx, e[1], recurseTimes)}`);
  }

  function formatCollection(ctx, iterator, next, size, formatEntry) {
    const max = shownLength(ctx, size);
    const output = [];
    ctx.indentationLvl += 2;
    for (let i = 0; i < max && !ctx.exhausted; i++) {
      const step = next(iterator);
      if (step.done) break;
      $.push(output, formatEntry(step.value));
    }
    if (size > max) $.push(output, moreItems(size - max));
    ctx.indentationLvl -= 2;
    return output;
  }

  /** One property as "key: value" (just the value for array elements). */
  function formatProperty(ctx, value, recurseTimes, key, type) {
    let desc;
    if (typeof key === 'object') { // a computed pseudo-property such as ArrayBuffer's byteLength
      desc = { value: key.value, enumerable: true };
      key = key.name;
    } else {
      // A proxy may list a key it does not describe; Node would then call its get trap.
      desc = getDesc(value, key) || { value: undefined, enumerable: true };
      // V8's built-in error `stack` accessor stands for a data property (as in Node 20).
      if (descGet(desc) !== undefined && descGet(desc) === stackGetter) {
        desc = { value: getStack(value), enumerable: desc.enumerable };
      }
    }
    let str;
    if (desc.value !== undefined) {
      ctx.indentationLvl += 2;
      str = formatValue(ctx, desc.value, recurseTimes);
      ctx.indentationLvl -= 2;
    } else if (descGet(desc) !== undefined) {
      str = descSet(desc) !== undefined ? '[Getter/Setter]' : '[Getter]';
    } else {
      str = descSet(desc) !== undefined ? '[Setter]' : 'undefined';
    }
    if (type === kArrayType) return str;
    let name;
    if (typeof key === 'symbol') name = `[${$.replace(symToString(key), ESCAPE_ALL, escapeChar)}]`;
    else if (key === '__proto__') name = "['__proto__']";
    else if (desc.enumerable === false) name = `[${$.replace(key, ESCAPE_ALL, escapeChar)}]`;
    else name = isIdentifier(key) ? key : quote(key);
    return `${leaf(ctx, name)}: ${str}`;
  }

  // ---- Layout -----------------------------------------------------------------------------

  function reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value) {
    let entriesLength = 0;
    for (let i = 0; i < output.length; i++) entriesLength += output[i].length;
    const result = layout(ctx, output, base, braces, extrasType, recurseTimes, value);
    ctx.used += result.length - entriesLength; // entries were counted already
    if (ctx.used > ctx.maxChars) ctx.exhausted = true;
    return result;
  }

  // Node's "compact: 3" rule: up to `compact` innermost levels of objects share a line if
  // it fits within breakLength; long arrays are first arranged in aligned columns.
  function layout(ctx, output, base, braces, extrasType, recurseTimes, value) {
    const head = base ? `${base} ` : '';
    if (ctx.compact >= 1) {
      const entries = output.length;
      if (extrasType === kArrayExtrasType && entries > 6) output = groupArrayElements(ctx, output, value);
      if (ctx.currentDepth - recurseTimes < ctx.compact && entries === output.length) {
        const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
        if (isBelowBreakLength(ctx, output, start, base)) {
          const joined = $.join(output, ', ');
          if (!$.includes(joined, '\n')) return `${head}${braces[0]} ${joined} ${braces[1]}`;
        }
      }
    }
    const indentation = `\n${$.repeat(' ', ctx.indentationLvl)}`;
    return `${head}${braces[0]}${indentation}  ${$.join(output, `,${indentation}  `)}${indentation}${braces[1]}`;
  }

  function isBelowBreakLength(ctx, output, start, base) {
    let total = output.length + start;
    if (total + output.length > ctx.breakLength) return false;
    for (let i = 0; i < output.length; i++) {
      total += output[i].length;
      if (total > ctx.breakLength) return false;
    }
    return base === '' || !$.includes(base, '\n');
  }

  function isNumericElement(value, i) {
    if (typedArrayName(value) !== undefined) return i < typedArrayLength(value);
    const desc = getDesc(value, i);
    return desc !== undefined && (typeof desc.value === 'number' || typeof desc.value === 'bigint');
  }

  function groupArrayElements(ctx, output, value) {
    let totalLength = 0;
    let maxLength = 0;
    // The trailing "... more items" entry is not part of the grid.
    const outputLength = ctx.maxArrayLength < output.length ? output.length - 1 : output.length;
    const separatorSpace = 2; // ", "
    const dataLen = [];
    for (let i = 0; i < outputLength; i++) {
      const len = output[i].length;
      $.push(dataLen, len);
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + separatorSpace;
    // Group only if at least three columns fit and the entries have similar widths.
    if (actualMax * 3 + ctx.indentationLvl >= ctx.breakLength || !(totalLength / actualMax > 5 || maxLength <= 6)) {
      return output;
    }
    // Aim for a roughly square block (a character is ~2.5 times as tall as wide); the
    // bias adds columns when entries are short.
    const averageBias = $.sqrt(actualMax - totalLength / output.length);
    const biasedMax = $.max(actualMax - 3 - averageBias, 1);
    const columns = $.min($.round($.sqrt(2.5 * biasedMax * outputLength) / biasedMax),
      $.floor((ctx.breakLength - ctx.indentationLvl) / actualMax), ctx.compact * 4, 15);
    if (columns <= 1) return output;
    const maxLineLength = [];
    for (let i = 0; i < columns; i++) {
      let lineLength = 0;
      for (let j = i; j < output.length; j += columns) if (dataLen[j] > lineLength) lineLength = dataLen[j];
      $.push(maxLineLength, lineLength + separatorSpace);
    }
    // Numbers are right-aligned, anything else left-aligned.
    let padStart = value !== undefined;
    for (let i = 0; padStart && i < output.length; i++) padStart = isNumericElement(value, i);
    const grouped = [];
    for (let i = 0; i < outputLength; i += columns) {
      const max = $.min(i + columns, outputLength);
      let line = '';
      let j = i;
      for (; j < max - 1; j++) {
        const cell = `${output[j]}, `;
        line += padStart ? $.padStart(cell, maxLineLength[j - i]) : $.padEnd(cell, maxLineLength[j - i]);
      }
      $.push(grouped, line + (padStart ? $.padStart(output[j], maxLineLength[j - i] - separatorSpace) : output[j]));
    }
    if (ctx.maxArrayLength < output.length) $.push(grouped, output[outputLength]);
    return grouped;
  }

  // ---- Public API -------------------------------------------------------------------------

  function numberOption(opts, key, fallback) {
    const v = safeGet(opts, key);
    if (v === null && key === 'depth') return Infinity;
    return typeof v === 'number' && !numberIsNaN(v) ? v : fallback;
  }

  /**
   * Format any value like Node 20's `util.inspect(value, {depth: 4})`, without colors.
   * Never throws and never runs user code (getters, toString, valueOf, ...).
   * @param {*} value
   * @param {{depth?: number|null, maxArrayLength?: number, maxStringLength?: number,
   *   breakLength?: number, compact?: number|false, showHidden?: boolean, maxChars?: number}} [opts]
   *   depth null means unlimited; maxChars (default 1,000,000) caps the whole result,
   *   which then ends with a note that it was truncated.
   * @returns {string}
   */
  function inspect(value, opts) {
    try {
      const o = isPrimitive(opts) ? {} : opts;
      const compact = safeGet(o, 'compact');
      const ctx = {
        depth: numberOption(o, 'depth', 4),
        maxArrayLength: numberOption(o, 'maxArrayLength', 100),
        maxStringLength: numberOption(o, 'maxStringLength', 10000),
        breakLength: numberOption(o, 'breakLength', 80),
        compact: compact === false ? 0 : typeof compact === 'number' ? compact : 3,
        showHidden: safeGet(o, 'showHidden') === true,
        maxChars: numberOption(o, 'maxChars', 1000000),
        indentationLvl: 0,
        currentDepth: 0,
        seen: [],
        circular: undefined,
        protos: new MapCtor(),
        used: 0, // characters of output produced so far (a lower bound)
        exhausted: false,
      };
      const out = formatValue(ctx, value, 0);
      if (!ctx.exhausted && out.length <= ctx.maxChars) return out;
      return `${$.slice(out, 0, ctx.maxChars)}\n... (output truncated at ${ctx.maxChars} characters)`;
    } catch (err) {
      if (stopping()) throw err;
      return fallbackText(value);
    }
  }

  // %d, %i and %f: objects are not converted (that would run their valueOf/toString).
  function formatNumeric(fn, arg) {
    if (typeof arg === 'bigint') return fn === parseFloat ? formatNumber(fn(`${arg}`)) : `${arg}n`;
    return typeof arg === 'symbol' || !isPrimitive(arg) ? 'NaN' : formatNumber(fn(arg));
  }

  function formatString(arg, opts) {
    if (typeof arg === 'number' || typeof arg === 'bigint') return formatPrimitive({}, arg);
    if (typeof arg === 'function') {
      try {
        return fnToString(arg);
      } catch {
        return inspect(arg, opts);
      }
    }
    return isPrimitive(arg) ? $.String(arg) : inspect(arg, { ...opts, depth: 0 });
  }

  function formatJson(arg) {
    try {
      return `${jsonStringify(arg)}`;
    } catch (err) {
      const message = primitiveString(safeGet(err, 'message'), '');
      if ($.test(/circular/i, message)) return '[Circular]';
      return `[${primitiveString(safeGet(err, 'name'), 'Error')}: ${message}]`;
    }
  }

  /**
   * Node's `util.formatWithOptions`: printf-like `%s %d %i %f %j %o %O %c %%`, other
   * arguments appended (strings as they are, anything else inspected). Never throws.
   * Note that `%j` uses JSON.stringify, which may run toJSON methods and getters.
   * @param {object|undefined} opts options for inspect (see inspect)
   * @param {...*} args
   * @returns {string}
   */
  function formatWithOptions(opts, ...args) {
    try {
      const inspectOpts = isPrimitive(opts) ? {} : opts;
      const first = args[0];
      let a = 0;
      let str = '';
      let join = '';
      if (typeof first === 'string') {
        if (args.length === 1) return first;
        let lastPos = 0;
        for (let i = 0; i < first.length - 1; i++) {
          if (first[i] !== '%') continue;
          const next = first[++i];
          if (a + 1 !== args.length) {
            let piece;
            switch (next) {
              case 's': piece = formatString(args[++a], inspectOpts); break;
              case 'j': piece = formatJson(args[++a]); break;
              case 'd': piece = formatNumeric(Number, args[++a]); break;
              case 'i': piece = formatNumeric(parseInt, args[++a]); break;
              case 'f': piece = formatNumeric(parseFloat, args[++a]); break;
              case 'O': piece = inspect(args[++a], inspectOpts); break;
              case 'o': piece = inspect(args[++a], { ...inspectOpts, showHidden: true, depth: 4 }); break;
              case 'c': a++; piece = ''; break;
              case '%': piece = null; break;
              default: continue;
            }
            if (piece === null) { // "%%"
              str += $.slice(first, lastPos, i);
            } else {
              if (lastPos !== i - 1) str += $.slice(first, lastPos, i - 1);
              str += piece;
            }
            lastPos = i + 1;
          } else if (next === '%') {
            str += $.slice(first, lastPos, i);
            lastPos = i + 1;
          }
        }
        if (lastPos !== 0) {
          a++;
          join = ' ';
          if (lastPos < first.length) str += $.slice(first, lastPos);
        }
      }
      for (; a < args.length; a++, join = ' ') {
        str += join + (typeof args[a] === 'string' ? args[a] : inspect(args[a], inspectOpts));
      }
      return str;
    } catch {
      return '[format failed]';
    }
  }

  /**
   * Node's `util.format(...args)`, i.e. what console.log prints. Never throws.
   * @param {...*} args
   * @returns {string}
   */
  function format(...args) {
    $.unshift(args, undefined);
    return apply(formatWithOptions, undefined, args);
  }

  /**
   * JSON text for `value` if it is an object or array that survives a JSON round trip
   * unchanged: plain objects (ObjectProto_ or null prototype) with only enumerable data
   * properties, hole-free arrays, no cycles, and leaves that are strings, finite numbers
   * other than -0, booleans or null. Otherwise undefined, as also when the text would
   * exceed `maxBytes` characters (default 10,000,000). Never runs user code.
   * @param {*} value
   * @param {number} [maxBytes]
   * @returns {string|undefined}
   */
  const MAX_JSON_DEPTH = 100;

  function jsonValue(value, maxBytes) {
    try {
      if (isPrimitive(value)) return undefined;
      // JSON.stringify would call an inherited toJSON: give up rather than run it. (The runtime
      // claims both places with an inert undefined, see intrinsics.js.)
      const inherited = [findDesc(ArrayProto_, 'toJSON'), findDesc(ObjectProto, 'toJSON')];
      if ($.some(inherited, (d) => d !== undefined && (typeof d.value === 'function' || descGet(d) || descSet(d)))) return undefined;
      const limit = typeof maxBytes === 'number' ? maxBytes : 10000000;
      if (!jsonSafe(value, { size: 0, limit, stack: [], steps: 0 })) return undefined;
      const text = jsonStringify(value); // validated: plain data only, so no user code runs
      return text.length > limit ? undefined : text;
    } catch (err) {
      if (stopping()) throw err; // the cell is being stopped: see jsonContainerSafe
      return undefined; // e.g. a stack overflow on absurdly deep nesting
    }
  }

  // Would $.parse(jsonStringify(v)) give v back? state.size is a lower bound of the
  // text length, so that huge values are given up early.
  function jsonSafe(v, state) {
    switch (typeof v) {
      case 'string': state.size += v.length + 2; break;
      case 'number':
        if (!numberIsFinite(v) || objectIs(v, -0)) return false;
        state.size += 1;
        break;
      case 'boolean': state.size += 4; break;
      case 'object':
        if (v !== null) return jsonContainerSafe(v, state);
        state.size += 4;
        break;
      default: return false;
    }
    return state.size <= state.limit;
  }

  function jsonContainerSafe(v, state) {
    // Deeper than this is not worth a JSON view, and would overflow the parser on the other side.
    if (state.stack.length >= MAX_JSON_DEPTH || $.includes(state.stack, v) || ownSymbols(v).length !== 0) return false;
    const array = isArray(v);
    const proto = getProto(v);
    if (array ? proto !== ArrayProto_ : proto !== ObjectProto && proto !== null) return false;
    if (array && state.size + 2 * v.length > state.limit) return false; // at least "0," each
    // Arrays: as many keys as elements means no holes and no (enumerable) extra properties.
    const names = array ? objectKeys(v) : ownNames(v);
    if (array && names.length !== v.length) return false;
    $.push(state.stack, v);
    state.size += 2;
    for (let i = 0; i < names.length; i++) {
      // a big value takes a while, and no injected interrupt check runs in here: look now and then
      if ((++state.steps & 4095) === 0) checkStop();
      const desc = getDesc(v, array ? i : names[i]);
      if (desc === undefined || !(hasOwn(desc, 'value')) || !desc.enumerable) return false;
      if (!array) state.size += names[i].length + 3;
      if (!jsonSafe(desc.value, state)) return false;
    }
    $.pop(state.stack);
    return true;
  }

  let ns = getDesc(globalThis, '__mcp2repl');
  ns = ns !== undefined && !isPrimitive(ns.value) ? ns.value : undefined;
  if (ns === undefined) {
    ns = {};
    Object.defineProperty(globalThis, '__mcp2repl', {
      value: ns, writable: true, configurable: true, enumerable: false,
    });
  }
  Object.assign(ns, { inspect, format, formatWithOptions, jsonValue });
})();
