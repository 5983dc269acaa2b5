/*
 * inspect.js: Node.js-style formatting of JavaScript values for the mcp2repl kernel.
 *
 * Evaluated as a plain script in a bare V8 isolate (no Node APIs). It defines
 * `inspect`, `format`, `formatWithOptions` and `jsonValue` on the non-enumerable
 * global `__mcp2repl` and nothing else; evaluating it again simply refreshes them.
 *
 * Ground rules, and why:
 *  - The output mirrors Node 20's `util.inspect` (without colors), because that is
 *    what people who write JavaScript expect to read.
 *  - No user code ever runs: properties are read through descriptors, types are told
 *    apart by built-in brand checks captured at load time, and getters, toString,
 *    valueOf, toJSON, Symbol.toPrimitive and Symbol.hasInstance are never invoked.
 *    (Proxies cannot be detected from pure JS, so their traps may run.)
 *  - It never throws and stays fast: the work is bounded by depth, maxArrayLength,
 *    maxStringLength and a total character budget (maxChars).
 */
(function () {
  'use strict';

  // ---- Built-ins captured now, so later monkey-patching by user code cannot affect us.
  const uncurry = Function.prototype.bind.bind(Function.prototype.call);
  const getDesc = Object.getOwnPropertyDescriptor;
  const getProto = Object.getPrototypeOf;
  const objectKeys = Object.keys;
  const ownNames = Object.getOwnPropertyNames;
  const ownSymbols = Object.getOwnPropertySymbols;
  const objectIs = Object.is;
  const isArray = Array.isArray;
  const hasOwn = uncurry(Object.prototype.hasOwnProperty);
  const isEnumerable = uncurry(Object.prototype.propertyIsEnumerable);
  const isProtoOf = uncurry(Object.prototype.isPrototypeOf);
  const fnToString = uncurry(Function.prototype.toString);
  const symToString = uncurry(Symbol.prototype.toString);
  const jsonStringify = JSON.stringify;
  const numberIsNaN = Number.isNaN;
  const numberIsFinite = Number.isFinite;
  const MapCtor = Map;
  const mapGet = uncurry(Map.prototype.get);
  const mapSet = uncurry(Map.prototype.set);
  const U8 = Uint8Array;
  const getter = (proto, key) => uncurry(getDesc(proto, key).get);
  const ObjectProto = Object.prototype;
  const TypedArrayProto = getProto(Uint8Array.prototype);
  const typedArrayTagGetter = getDesc(TypedArrayProto, Symbol.toStringTag).get;
  // Returns the type name for typed arrays and undefined for anything else: a
  // brand check that does not throw.
  const typedArrayName = uncurry(typedArrayTagGetter);
  const typedArrayLength = getter(TypedArrayProto, 'length');
  const typedArrayHidden = [['byteLength', getter(TypedArrayProto, 'byteLength')],
    ['byteOffset', getter(TypedArrayProto, 'byteOffset')], ['buffer', getter(TypedArrayProto, 'buffer')]];
  const setSize = getter(Set.prototype, 'size');
  const mapSize = getter(Map.prototype, 'size');
  const setValues = uncurry(Set.prototype.values);
  const mapEntries = uncurry(Map.prototype.entries);
  const setIterNext = uncurry(getProto(new Set().values()).next);
  const mapIterNext = uncurry(getProto(new Map().entries()).next);
  const bufferByteLength = getter(ArrayBuffer.prototype, 'byteLength');
  const SAB = typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer : undefined;
  const sabByteLength = SAB ? getter(SAB.prototype, 'byteLength') : undefined;
  const viewByteLength = getter(DataView.prototype, 'byteLength');
  const viewByteOffset = getter(DataView.prototype, 'byteOffset');
  const viewBuffer = getter(DataView.prototype, 'buffer');
  const dateGetTime = uncurry(Date.prototype.getTime);
  const dateToISO = uncurry(Date.prototype.toISOString);
  const regexpSource = getter(RegExp.prototype, 'source');
  // Flags are read one by one through the built-in getters because the generic
  // `flags` getter would read (possibly user-defined) properties of the object.
  const regexpFlags = [['hasIndices', 'd'], ['global', 'g'], ['ignoreCase', 'i'],
    ['multiline', 'm'], ['dotAll', 's'], ['unicode', 'u'], ['unicodeSets', 'v'],
    ['sticky', 'y']].filter(([key]) => getDesc(RegExp.prototype, key))
    .map(([key, flag]) => [getter(RegExp.prototype, key), flag]);
  const weakSetHas = uncurry(WeakSet.prototype.has);
  const weakMapHas = uncurry(WeakMap.prototype.has);
  const BOXES = [['Number', Number.prototype], ['String', String.prototype],
    ['Boolean', Boolean.prototype], ['BigInt', BigInt.prototype], ['Symbol', Symbol.prototype]]
    .map(([type, proto]) => ({ type, proto, valueOf: uncurry(proto.valueOf) }));
  const isNativeError = typeof Error.isError === 'function' ? Error.isError : () => false;
  // V8's own `stack` accessor. Calling it runs no user code (except a user-installed
  // Error.prepareStackTrace, which is exactly what such a user wants).
  const stackGetter = (getDesc(new Error(), 'stack') || {}).get;
  const getStack = stackGetter ? uncurry(stackGetter) : undefined;
  const AsyncFunctionProto = getProto(async function () {});
  const GeneratorFunctionProto = getProto(function* () {});
  const AsyncGeneratorFunctionProto = getProto(async function* () {});

  const kObjectType = 0;
  const kArrayType = 1;
  const kArrayExtrasType = 2;
  // Listing the keys of an array or typed array enumerates every index (about 0.1 µs
  // each), so above this length only symbol keys are looked for beside the elements.
  const LARGE_LENGTH = 1 << 16;
  const MIN_LINE_WIDTH = 16;
  const IDENTIFIER = /^[a-zA-Z_][a-zA-Z_0-9]*$/;

  // ---- Safe property access --------------------------------------------------------

  /** Descriptor of `key` on `obj` or its prototype chain (never runs getters). */
  function findDesc(obj, key) {
    for (let o = obj, n = 0; o !== null && n < 1000; o = getProto(o), n++) {
      const desc = getDesc(o, key);
      if (desc !== undefined) return desc;
    }
    return undefined;
  }

  /** `obj[key]` if it is a data property, otherwise undefined. */
  function safeGet(obj, key) {
    const desc = findDesc(obj, key);
    return desc !== undefined && 'value' in desc ? desc.value : undefined;
  }

  /** Brand check: does `fn(value)` (a built-in accessor/method) accept value? */
  function hasBrand(fn, value, arg) {
    try {
      fn(value, arg);
      return true;
    } catch {
      return false;
    }
  }

  function isPrimitive(v) {
    return v === null || (typeof v !== 'object' && typeof v !== 'function');
  }

  function functionName(fn) {
    const name = safeGet(fn, 'name');
    if (typeof name === 'string') return name;
    return isPrimitive(name) && name !== undefined ? String(name) : '';
  }

  // The name Node shows for a constructor descriptor: that of a named function whose
  // `prototype` is on the object's chain (checked on the chain, not with `instanceof`,
  // which could run a user Symbol.hasInstance).
  function ctorNameFrom(desc, chain) {
    if (desc === undefined || typeof desc.value !== 'function') return undefined;
    const name = functionName(desc.value);
    return name !== '' && chain.includes(safeGet(desc.value, 'prototype')) ? name : undefined;
  }

  // What objects with first prototype `proto` inherit: the chain, constructor name and
  // Symbol.toStringTag descriptor. Cached per inspect() call: values share few prototypes,
  // and walking chains allocates a descriptor per step, which makes up most of the cost.
  function inherited(ctx, proto) {
    let info = mapGet(ctx.protos, proto);
    if (info === undefined) {
      const chain = [];
      for (let o = proto; o !== null && chain.length < 1000; o = getProto(o)) chain.push(o);
      let ctor;
      let tagDesc;
      for (const o of chain) {
        if (ctor === undefined) ctor = ctorNameFrom(getDesc(o, 'constructor'), chain);
        if (tagDesc === undefined) tagDesc = getDesc(o, Symbol.toStringTag);
      }
      info = { chain, ctor, tagDesc, odd: !chain.includes(ObjectProto) };
      mapSet(ctx.protos, proto, info);
    }
    return info;
  }

  // Constructor name as Node prints it; null for null-prototype objects.
  function constructorName(ctx, obj, info, recurseTimes) {
    const own = ctorNameFrom(getDesc(obj, 'constructor'), info.chain);
    if (own !== undefined) return own;
    if (info.ctor !== undefined) return info.ctor;
    if (info.chain.length === 0) return null;
    // No named constructor on the chain. Node then shows V8's internal class name, which
    // JS cannot read; 'Object' is right for ordinary objects.
    if (recurseTimes > ctx.depth) return 'Object <Complex prototype>';
    const first = info.chain[0];
    const protoName = constructorName(ctx, first, inherited(ctx, getProto(first)), recurseTimes + 1);
    if (protoName !== null) return `Object <${protoName}>`;
    return `Object <${inspect(first, { depth: -1, breakLength: ctx.breakLength })}>`;
  }

  // Symbol.toStringTag, shown only when inherited or non-enumerable (an own enumerable
  // one is already printed as a property). Getters are not called, except V8's
  // typed-array one.
  function toStringTag(ctx, value, info) {
    let desc = getDesc(value, Symbol.toStringTag);
    if (desc === undefined) desc = info.tagDesc;
    else if (ctx.showHidden || desc.enumerable) return '';
    if (desc === undefined) return '';
    let tag;
    if ('value' in desc) tag = desc.value;
    else if (desc.get === typedArrayTagGetter) tag = typedArrayName(value);
    return typeof tag === 'string' ? tag : '';
  }

  function getPrefix(ctor, tag, fallback, size = '') {
    if (ctor === null) {
      if (tag !== '' && fallback !== tag) return `[${fallback}${size}: null prototype] [${tag}] `;
      return `[${fallback}${size}: null prototype] `;
    }
    if (tag !== '' && ctor !== tag) return `${ctor}${size} [${tag}] `;
    return `${ctor}${size} `;
  }

  function getKeys(ctx, value) {
    const keys = ctx.showHidden ? ownNames(value) : objectKeys(value);
    for (const sym of ownSymbols(value)) {
      if (ctx.showHidden || isEnumerable(value, sym)) keys.push(sym);
    }
    return keys;
  }

  function isIndexKey(key) {
    const n = +key;
    return n >>> 0 === n && n !== 4294967295 && `${n}` === key;
  }

  // Own keys other than array indices. V8 lists index keys first and in ascending order,
  // so a binary search finds where they end. Above LARGE_LENGTH even listing the index
  // keys costs too much, and only symbol keys are looked for.
  function nonIndexKeys(ctx, value, length) {
    if (length > LARGE_LENGTH) return ownSymbols(value).filter((s) => ctx.showHidden || isEnumerable(value, s));
    const keys = getKeys(ctx, value);
    return keys.slice(indexKeyCount(keys));
  }

  function indexKeyCount(keys) {
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (typeof keys[mid] === 'string' && isIndexKey(keys[mid])) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // ---- Primitives ------------------------------------------------------------------

  const META = [];
  for (let c = 0; c < 160; c++) {
    if (c < 32 || c > 126) META[c] = `\\x${c.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  Object.assign(META, { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r', 39: "\\'", 92: '\\\\' });
  const ESCAPE_ALL = /[\x00-\x1f\x27\x5c\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const ESCAPE_NO_QUOTE = /[\x00-\x1f\x5c\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const escapeChar = (ch) => {
    const code = ch.charCodeAt(0);
    return code < 160 ? META[code] : `\\u${code.toString(16)}`;
  };

  /** Quote a string like Node: prefer ', then " and ` to avoid escaping quotes. */
  function quote(str) {
    let open = "'";
    let re = ESCAPE_ALL;
    if (str.includes("'")) {
      if (!str.includes('"')) open = '"';
      else if (!str.includes('`') && !str.includes('${')) open = '`';
      if (open !== "'") re = ESCAPE_NO_QUOTE;
    }
    // Testing first is much cheaper than a replace() that finds nothing.
    re.lastIndex = 0;
    if (!re.test(str)) return open + str + open;
    return open + str.replace(re, escapeChar) + open;
  }

  function formatNumber(n) {
    return objectIs(n, -0) ? '-0' : `${n}`;
  }

  function formatPrimitive(ctx, value) {
    switch (typeof value) {
      case 'string': {
        let trailer = '';
        if (value.length > ctx.maxStringLength) {
          const remaining = value.length - ctx.maxStringLength;
          value = value.slice(0, Math.max(0, ctx.maxStringLength));
          trailer = `... ${remaining} more character${remaining > 1 ? 's' : ''}`;
        }
        // Long multi-line strings are printed one line per quoted piece, joined by '+'.
        if (ctx.compact !== true && value.length > MIN_LINE_WIDTH &&
            value.length > ctx.breakLength - ctx.indentationLvl - 4) {
          return value.split(/(?<=\n)/).map(quote)
            .join(` +\n${' '.repeat(ctx.indentationLvl + 2)}`) + trailer;
        }
        return quote(value) + trailer;
      }
      case 'number': return formatNumber(value);
      case 'bigint': return `${value}n`;
      case 'symbol': return symToString(value);
      default: return `${value}`; // undefined, boolean
    }
  }

  // ---- Objects ---------------------------------------------------------------------

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
      return '[object Object]';
    }
  }

  function formatValue(ctx, value, recurseTimes, typedArray) {
    if (ctx.exhausted) return '';
    if (isPrimitive(value)) return leaf(ctx, value === null ? 'null' : formatPrimitive(ctx, value));
    if (ctx.seen.includes(value)) {
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
      ctx.seen.length = seenLength;
      ctx.indentationLvl = indentation;
      let overflow = false;
      try {
        overflow = isProtoOf(RangeError.prototype, err) && /call stack/.test(safeGet(err, 'message'));
      } catch { /* a hostile thrown value: treat as a plain failure */ }
      return leaf(ctx, overflow
        ? '[Object: Inspection interrupted prematurely. Maximum call stack size exceeded.]'
        : fallbackText(value));
    }
  }

  function formatRaw(ctx, value, recurseTimes, typedArray) {
    const info = inherited(ctx, getProto(value));
    const ctor = constructorName(ctx, value, info, recurseTimes);
    const tag = toStringTag(ctx, value, info);
    const chain = info.chain;
    // Ordinary objects only get the brand checks their prototype chain makes plausible
    // (failed brand checks throw, which is slow); odd chains get all of them.
    const may = (proto) => info.odd || chain.includes(proto);
    let keys;
    let base = '';
    let braces;
    let formatter = () => [];
    let extrasType = kObjectType;
    let early; // set when the value prints without braces

    if (isArray(value)) {
      const len = value.length;
      const prefix = ctor !== 'Array' || tag !== '' ? getPrefix(ctor, tag, 'Array', `(${len})`) : '';
      keys = nonIndexKeys(ctx, value, len);
      braces = [`${prefix}[`, ']'];
      if (len === 0 && keys.length === 0) return leaf(ctx, `${braces[0]}]`);
      extrasType = kArrayExtrasType;
      formatter = formatArray;
    } else if (may(Set.prototype) && hasBrand(setSize, value)) {
      const size = setSize(value);
      const prefix = getPrefix(ctor, tag, 'Set', `(${size})`);
      keys = getKeys(ctx, value);
      if (size === 0 && keys.length === 0) return leaf(ctx, `${prefix}{}`);
      braces = [`${prefix}{`, '}'];
      formatter = formatSet;
    } else if (may(Map.prototype) && hasBrand(mapSize, value)) {
      const size = mapSize(value);
      const prefix = getPrefix(ctor, tag, 'Map', `(${size})`);
      keys = getKeys(ctx, value);
      if (size === 0 && keys.length === 0) return leaf(ctx, `${prefix}{}`);
      braces = [`${prefix}{`, '}'];
      formatter = formatMap;
    } else if (typedArrayName(value) !== undefined) {
      const size = typedArrayLength(value);
      const prefix = getPrefix(ctor, tag, ctor === null ? typedArrayName(value) : '', `(${size})`);
      keys = nonIndexKeys(ctx, value, size);
      braces = [`${prefix}[`, ']'];
      if (size === 0 && keys.length === 0 && !ctx.showHidden) return leaf(ctx, `${braces[0]}]`);
      formatter = formatTypedArray;
      extrasType = kArrayExtrasType;
    } else {
      keys = getKeys(ctx, value);
      braces = ['{', '}'];
      if (ctor === 'Object') {
        if (isArguments(value)) braces[0] = '[Arguments] {';
        else if (tag !== '') braces[0] = `${getPrefix(ctor, tag, 'Object')}{`;
        if (keys.length === 0) return leaf(ctx, `${braces[0]}}`);
      } else if (typeof value === 'function') {
        base = functionBase(value, ctor, tag);
        if (keys.length === 0) early = base;
      } else if (value !== RegExp.prototype && may(RegExp.prototype) && hasBrand(regexpSource, value)) {
        base = `/${regexpSource(value)}/${regexpFlags.map(([get, f]) => (get(value) ? f : '')).join('')}`;
        const prefix = getPrefix(ctor, tag, 'RegExp');
        if (prefix !== 'RegExp ') base = `${prefix}${base}`;
        if (keys.length === 0 || recurseTimes > ctx.depth) early = base;
      } else if (may(Date.prototype) && hasBrand(dateGetTime, value)) {
        base = numberIsNaN(dateGetTime(value)) ? 'Invalid Date' : dateToISO(value);
        const prefix = getPrefix(ctor, tag, 'Date');
        if (keys.length === 0) early = base;
        else if (prefix !== 'Date ') base = `${prefix}${base}`;
      } else if (isNativeError(value) || chain.includes(Error.prototype)) {
        base = formatError(ctx, value, ctor, tag, keys);
        if (keys.length === 0) early = base;
      } else if ((may(ArrayBuffer.prototype) && hasBrand(bufferByteLength, value)) ||
                 (SAB && may(SAB.prototype) && hasBrand(sabByteLength, value))) {
        const shared = !hasBrand(bufferByteLength, value);
        const prefix = getPrefix(ctor, tag, shared ? 'SharedArrayBuffer' : 'ArrayBuffer');
        const byteLength = (shared ? sabByteLength : bufferByteLength)(value);
        if (typedArray === undefined) formatter = formatArrayBuffer;
        else if (keys.length === 0) return leaf(ctx, `${prefix}{ byteLength: ${formatNumber(byteLength)} }`);
        braces[0] = `${prefix}{`;
        keys.unshift({ name: 'byteLength', value: byteLength });
      } else if (may(DataView.prototype) && hasBrand(viewByteLength, value)) {
        braces[0] = `${getPrefix(ctor, tag, 'DataView')}{`;
        keys.unshift({ name: 'byteLength', value: viewByteLength(value) },
          { name: 'byteOffset', value: viewByteOffset(value) },
          { name: 'buffer', value: viewBuffer(value) });
      } else if (chain.includes(Promise.prototype)) {
        // A promise's state is not observable synchronously from JavaScript.
        braces[0] = `${getPrefix(ctor, tag, 'Promise')}{`;
        formatter = () => ['<unknown>'];
      } else if (may(WeakSet.prototype) && hasBrand(weakSetHas, value, {})) {
        braces[0] = `${getPrefix(ctor, tag, 'WeakSet')}{`;
        formatter = () => ['<items unknown>'];
      } else if (may(WeakMap.prototype) && hasBrand(weakMapHas, value, {})) {
        braces[0] = `${getPrefix(ctor, tag, 'WeakMap')}{`;
        formatter = () => ['<items unknown>'];
      } else {
        const box = BOXES.find((b) => may(b.proto) && hasBrand(b.valueOf, value));
        if (box !== undefined) {
          base = boxedBase(ctx, value, box, keys, ctor, tag);
          if (keys.length === 0) early = base;
        } else {
          braces[0] = `${getPrefix(ctor, tag, 'Object')}{`;
          if (keys.length === 0) return leaf(ctx, `${braces[0]}}`);
        }
      }
    }
    if (early !== undefined) return leaf(ctx, early);

    if (recurseTimes > ctx.depth) {
      const name = getPrefix(ctor, tag, 'Object').slice(0, -1);
      return leaf(ctx, ctor !== null ? `[${name}]` : name);
    }
    recurseTimes += 1;
    ctx.seen.push(value);
    ctx.currentDepth = recurseTimes;
    const output = formatter(ctx, value, recurseTimes);
    for (let i = 0; i < keys.length && !ctx.exhausted; i++) {
      output.push(formatProperty(ctx, value, recurseTimes, keys[i], extrasType));
    }
    const index = ctx.circular && mapGet(ctx.circular, value);
    if (index !== undefined) base = base === '' ? `<ref *${index}>` : `<ref *${index}> ${base}`;
    ctx.seen.pop();
    return reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value);
  }

  function isArguments(value) {
    const callee = getDesc(value, 'callee');
    const length = getDesc(value, 'length');
    return callee !== undefined && !callee.enumerable && length !== undefined &&
      !length.enumerable && hasOwn(value, Symbol.iterator);
  }

  function isClassSource(src) {
    if (!src.startsWith('class') || !src.endsWith('}')) return false;
    const header = src.slice(5, src.indexOf('{'));
    if (src.indexOf('{') === -1) return false;
    // A '(' before the body means `extends f(...)` (Node prints that as a function)
    // unless it only sits inside a comment.
    return !header.replace(/\/\/[^\n]*\n|\/\*[\s\S]*?\*\//g, '').includes('(');
  }

  function functionBase(fn, ctor, tag) {
    let source = '';
    try {
      source = fnToString(fn);
    } catch { /* e.g. a revoked proxy */ }
    if (isClassSource(source)) {
      let base = `class ${(hasOwn(fn, 'name') && functionName(fn)) || '(anonymous)'}`;
      if (ctor !== 'Function' && ctor !== null) base += ` [${ctor}]`;
      if (tag !== '' && ctor !== tag) base += ` [${tag}]`;
      if (ctor === null) base += ' extends [null prototype]';
      else {
        const superName = functionName(getProto(fn));
        if (superName) base += ` extends ${superName}`;
      }
      return `[${base}]`;
    }
    let type = 'Function';
    if (isProtoOf(GeneratorFunctionProto, fn)) type = 'GeneratorFunction';
    else if (isProtoOf(AsyncFunctionProto, fn)) type = 'AsyncFunction';
    else if (isProtoOf(AsyncGeneratorFunctionProto, fn)) type = 'AsyncGeneratorFunction';
    let base = `[${type}`;
    if (ctor === null) base += ' (null prototype)';
    const name = functionName(fn);
    base += name === '' ? ' (anonymous)]' : `: ${name}]`;
    if (ctor !== type && ctor !== null) base += ` ${ctor}`;
    if (tag !== '' && ctor !== tag) base += ` [${tag}]`;
    return base;
  }

  function boxedBase(ctx, value, box, keys, ctor, tag) {
    const primitive = box.valueOf(value);
    // A String object's index keys just repeat its characters.
    if (box.type === 'String') keys.splice(0, primitive.length);
    let base = `[${box.type}`;
    if (box.type !== ctor) base += ctor === null ? ' (null prototype)' : ` (${ctor})`;
    base += `: ${formatPrimitive(ctx, primitive)}]`;
    if (tag !== '' && tag !== ctor) base += ` [${tag}]`;
    return base;
  }

  // ---- Errors ----------------------------------------------------------------------

  function primitiveString(v, fallback) {
    return isPrimitive(v) ? String(v) : fallback;
  }

  /** `err.stack`, or Error.prototype.toString()'s result, computed without user code. */
  function stackString(err) {
    const desc = findDesc(err, 'stack');
    let stack;
    if (desc !== undefined) {
      if ('value' in desc) stack = desc.value;
      else if (desc.get !== undefined && desc.get === stackGetter) stack = getStack(err);
    }
    if (stack && isPrimitive(stack)) return String(stack);
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
    if (!ctx.showHidden) {
      for (const key of ['name', 'message', 'stack']) {
        const at = keys.indexOf(key);
        const v = safeGet(err, key);
        if (at !== -1 && isPrimitive(v) && stack.includes(String(v))) keys.splice(at, 1);
      }
    }
    if (getDesc(err, 'cause') !== undefined && !keys.includes('cause')) keys.push('cause');
    if (isArray(safeGet(err, 'errors')) && !keys.includes('errors')) keys.push('errors');
    stack = improveStack(stack, ctor, name, tag);

    let pos = (typeof message === 'string' && message !== '' && stack.indexOf(message)) || -1;
    if (pos !== -1) pos += message.length;
    const framesAt = stack.indexOf('\n    at', pos);
    if (framesAt === -1) {
      stack = `[${stack}]`; // no stack trace: bracket it like Node
    } else {
      const frames = stack.slice(framesAt + 1).split('\n');
      trimCauseFrames(err, frames);
      stack = `${stack.slice(0, framesAt)}\n${frames.join('\n')}`;
    }
    if (ctx.indentationLvl !== 0) stack = stack.replace(/\n/g, `\n${' '.repeat(ctx.indentationLvl)}`);
    return stack;
  }

  // Make the first line name the constructor when the error's name does not
  // (e.g. `class MyError extends Error {}` prints as "MyError: ...").
  function improveStack(stack, ctor, name, tag) {
    let len = name.length;
    const regular = name.endsWith('Error') && stack.startsWith(name) &&
      (stack.length === len || stack[len] === ':' || stack[len] === '\n');
    if (ctor !== null && !regular) return stack;
    let fallback = 'Error';
    if (ctor === null) {
      const m = /^([A-Z][a-z_ A-Z0-9[\]()-]+)(?::|\n\s+at)/.exec(stack) ||
        /^([a-z_A-Z0-9-]*Error)$/.exec(stack);
      fallback = (m && m[1]) || '';
      len = fallback.length;
      fallback = fallback || 'Error';
    }
    const prefix = getPrefix(ctor, tag, fallback).slice(0, -1);
    if (name === prefix) return stack;
    if (prefix.includes(name)) return len === 0 ? `${prefix}: ${stack}` : prefix + stack.slice(len);
    return `${prefix} [${name}]${stack.slice(len)}`;
  }

  // Frames shared with the cause's stack are collapsed into one "... N lines" note.
  function trimCauseFrames(err, frames) {
    const cause = safeGet(err, 'cause');
    if (isPrimitive(cause) || !(isNativeError(cause) || isProtoOf(Error.prototype, cause))) return;
    const causeStack = stackString(cause);
    const at = causeStack.indexOf('\n    at');
    if (at === -1) return;
    const causeFrames = causeStack.slice(at + 1).split('\n');
    for (let i = 0; i < frames.length - 3; i++) {
      const pos = causeFrames.indexOf(frames[i]);
      if (pos === -1 || causeFrames.length - pos <= 3) continue;
      const maxLen = Math.min(frames.length - i, causeFrames.length - pos);
      let len = 1;
      while (len < maxLen && frames[i + len] === causeFrames[pos + len]) len++;
      if (len > 3) {
        frames.splice(i + 1, len - 2, `    ... ${len - 2} lines matching cause stack trace ...`);
        return;
      }
    }
  }

  // ---- Entries ---------------------------------------------------------------------

  function moreItems(n, what = 'item') {
    return `... ${n} more ${what}${n > 1 ? 's' : ''}`;
  }

  function formatArray(ctx, value, recurseTimes) {
    const length = value.length;
    const max = Math.min(Math.max(0, ctx.maxArrayLength), length);
    const output = [];
    for (let i = 0; i < max && !ctx.exhausted; i++) {
      if (!hasOwn(value, i)) return formatHoleyArray(ctx, value, recurseTimes, max, output, i);
      output.push(formatProperty(ctx, value, recurseTimes, i, kArrayType));
    }
    if (length > max) output.push(moreItems(length - max));
    return output;
  }

  // Runs of holes print as "<n empty items>". Holes are found by probing; a very long
  // run (as in `new Array(1e9)`) switches to Object.keys, which lists only what exists.
  function formatHoleyArray(ctx, value, recurseTimes, max, output, index) {
    const length = value.length;
    let probes = 1 << 16;
    let present; // own index keys, ascending, once probing has become too slow
    const nextPresent = (from) => {
      for (; present === undefined && from < length; from++) {
        if (hasOwn(value, from)) return from;
        if (--probes === 0) {
          const keys = objectKeys(value);
          present = keys.slice(0, indexKeyCount(keys));
        }
      }
      if (present === undefined) return length;
      let lo = 0;
      let hi = present.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (+present[mid] < from) lo = mid + 1;
        else hi = mid;
      }
      return lo < present.length ? +present[lo] : length;
    };
    while (output.length < max && index < length && !ctx.exhausted) {
      const next = nextPresent(index);
      if (next > index) {
        output.push(`<${next - index} empty item${next - index > 1 ? 's' : ''}>`);
        index = next;
      } else {
        output.push(formatProperty(ctx, value, recurseTimes, index++, kArrayType));
      }
    }
    if (index < length) output.push(moreItems(length - index));
    return output;
  }

  function formatTypedArray(ctx, value, recurseTimes) {
    const length = typedArrayLength(value);
    const max = Math.min(Math.max(0, ctx.maxArrayLength), length);
    const output = [];
    for (let i = 0; i < max; i++) output.push(leaf(ctx, formatPrimitive(ctx, value[i])));
    if (length > max) output.push(moreItems(length - max));
    if (ctx.showHidden) {
      ctx.indentationLvl += 2;
      const hidden = [['BYTES_PER_ELEMENT', safeGet(value, 'BYTES_PER_ELEMENT')], ['length', length]];
      for (const [key, get] of typedArrayHidden) hidden.push([key, get(value)]);
      for (const [key, v] of hidden) output.push(`[${key}]: ${formatValue(ctx, v, recurseTimes, true)}`);
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
    const shown = Math.min(Math.max(0, ctx.maxArrayLength), bytes.length);
    const hex = [];
    for (let i = 0; i < shown; i++) hex.push(bytes[i].toString(16).padStart(2, '0'));
    let str = hex.join(' ');
    const remaining = bytes.length - ctx.maxArrayLength;
    if (remaining > 0) str += ` ${moreItems(remaining, 'byte')}`;
    return [leaf(ctx, `[Uint8Contents]: <${str}>`)];
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
    const max = Math.min(Math.max(0, ctx.maxArrayLength), size);
    const output = [];
    ctx.indentationLvl += 2;
    for (let i = 0; i < max && !ctx.exhausted; i++) {
      const step = next(iterator);
      if (step.done) break;
      output.push(formatEntry(step.value));
    }
    if (size > max) output.push(moreItems(size - max));
    ctx.indentationLvl -= 2;
    return output;
  }

  /** One property: "key: value" (or just the value for array elements). */
  function formatProperty(ctx, value, recurseTimes, key, type) {
    let desc;
    if (typeof key === 'object') { // a computed pseudo-property such as ArrayBuffer's byteLength
      desc = { value: key.value, enumerable: true };
      key = key.name;
    } else {
      // A proxy may list a key without describing it; Node would then call its get trap.
      desc = getDesc(value, key) || { value: undefined, enumerable: true };
      // V8's built-in error `stack` accessor stands for a data property (as in Node 20).
      if (desc.get !== undefined && desc.get === stackGetter) {
        desc = { value: getStack(value), enumerable: desc.enumerable };
      }
    }
    let str;
    if (desc.value !== undefined) {
      ctx.indentationLvl += 2;
      str = formatValue(ctx, desc.value, recurseTimes);
      ctx.indentationLvl -= 2;
    } else if (desc.get !== undefined) {
      str = desc.set !== undefined ? '[Getter/Setter]' : '[Getter]';
    } else if (desc.set !== undefined) {
      str = '[Setter]';
    } else {
      str = 'undefined';
    }
    if (type === kArrayType) return str;
    let name;
    if (typeof key === 'symbol') name = `[${symToString(key).replace(ESCAPE_ALL, escapeChar)}]`;
    else if (key === '__proto__') name = "['__proto__']";
    else if (desc.enumerable === false) name = `[${key.replace(ESCAPE_ALL, escapeChar)}]`;
    else if (IDENTIFIER.test(key)) name = key;
    else name = quote(key);
    return `${leaf(ctx, name)}: ${str}`;
  }

  // ---- Layout ----------------------------------------------------------------------

  function isBelowBreakLength(ctx, output, start, base) {
    let total = output.length + start;
    if (total + output.length > ctx.breakLength) return false;
    for (const entry of output) {
      total += entry.length;
      if (total > ctx.breakLength) return false;
    }
    return base === '' || !base.includes('\n');
  }

  // Node's "compact: 3" rule: up to `compact` innermost levels are combined on one line
  // if they fit; long arrays are first arranged in aligned columns.
  function reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value) {
    let entriesLength = 0;
    for (const entry of output) entriesLength += entry.length;
    const result = layout(ctx, output, base, braces, extrasType, recurseTimes, value);
    // The entries were counted already; count what the layout added.
    ctx.used += result.length - entriesLength;
    if (ctx.used > ctx.maxChars) ctx.exhausted = true;
    return result;
  }

  function layout(ctx, output, base, braces, extrasType, recurseTimes, value) {
    const head = base ? `${base} ` : '';
    if (typeof ctx.compact === 'number' && ctx.compact >= 1) {
      const entries = output.length;
      if (extrasType === kArrayExtrasType && entries > 6) output = groupArrayElements(ctx, output, value);
      if (ctx.currentDepth - recurseTimes < ctx.compact && entries === output.length) {
        const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
        if (isBelowBreakLength(ctx, output, start, base)) {
          const joined = output.join(', ');
          if (!joined.includes('\n')) return `${head}${braces[0]} ${joined} ${braces[1]}`;
        }
      }
    }
    const indentation = `\n${' '.repeat(ctx.indentationLvl)}`;
    return `${head}${braces[0]}${indentation}  ${output.join(`,${indentation}  `)}${indentation}${braces[1]}`;
  }

  function isNumericElement(value, i) {
    if (typedArrayName(value) !== undefined) return i < typedArrayLength(value);
    const desc = getDesc(value, i);
    const v = desc === undefined ? undefined : desc.value;
    return typeof v === 'number' || typeof v === 'bigint';
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
      dataLen.push(len);
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + separatorSpace;
    // Group only if at least three columns fit and entries have similar widths.
    if (actualMax * 3 + ctx.indentationLvl >= ctx.breakLength ||
        !(totalLength / actualMax > 5 || maxLength <= 6)) {
      return output;
    }
    // Aim for a roughly square block (characters are ~2.5 times taller than wide).
    const averageBias = Math.sqrt(actualMax - totalLength / output.length);
    const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
    const columns = Math.min(
      Math.round(Math.sqrt(2.5 * biasedMax * outputLength) / biasedMax),
      Math.floor((ctx.breakLength - ctx.indentationLvl) / actualMax),
      ctx.compact * 4,
      15,
    );
    if (columns <= 1) return output;
    const maxLineLength = [];
    for (let i = 0; i < columns; i++) {
      let lineLength = 0;
      for (let j = i; j < output.length; j += columns) {
        if (dataLen[j] > lineLength) lineLength = dataLen[j];
      }
      maxLineLength.push(lineLength + separatorSpace);
    }
    // Numbers are right-aligned, everything else left-aligned.
    let padStart = value !== undefined;
    for (let i = 0; padStart && i < output.length; i++) padStart = isNumericElement(value, i);
    const grouped = [];
    for (let i = 0; i < outputLength; i += columns) {
      const max = Math.min(i + columns, outputLength);
      let line = '';
      let j = i;
      for (; j < max - 1; j++) {
        const cell = `${output[j]}, `;
        line += padStart ? cell.padStart(maxLineLength[j - i]) : cell.padEnd(maxLineLength[j - i]);
      }
      line += padStart ? output[j].padStart(maxLineLength[j - i] - separatorSpace) : output[j];
      grouped.push(line);
    }
    if (ctx.maxArrayLength < output.length) grouped.push(output[outputLength]);
    return grouped;
  }

  // ---- Public API ------------------------------------------------------------------

  function numberOption(opts, key, fallback) {
    const desc = getDesc(opts, key);
    const v = desc === undefined ? undefined : desc.value;
    if (v === null && key === 'depth') return Infinity;
    return typeof v === 'number' && !numberIsNaN(v) ? v : fallback;
  }

  /**
   * Format any value like Node 20's `util.inspect(value, {depth: 4})`, without colors.
   * Never throws and never runs user code (getters, toString, ...).
   * @param {*} value
   * @param {{depth?: number|null, maxArrayLength?: number, maxStringLength?: number,
   *   breakLength?: number, compact?: number|boolean, showHidden?: boolean,
   *   maxChars?: number}} [opts] depth null means unlimited; maxChars (default
   *   1,000,000) caps the whole result, which then ends with a truncation note.
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
        used: 0,
        exhausted: false,
      };
      let out = formatValue(ctx, value, 0);
      if (ctx.exhausted || out.length > ctx.maxChars) {
        out = `${out.slice(0, ctx.maxChars)}\n... (output truncated at ${ctx.maxChars} characters)`;
      }
      return out;
    } catch {
      return fallbackText(value);
    }
  }

  function formatOne(fn, arg) {
    // %d, %i and %f never convert objects: that would run their valueOf/toString.
    if (typeof arg === 'bigint') return fn === parseFloat ? formatNumber(fn(`${arg}`)) : `${arg}n`;
    if (typeof arg === 'symbol' || !isPrimitive(arg)) return 'NaN';
    return formatNumber(fn(arg));
  }

  function formatString(arg, opts) {
    if (typeof arg === 'number') return formatNumber(arg);
    if (typeof arg === 'bigint') return `${arg}n`;
    if (typeof arg === 'function') {
      try {
        return fnToString(arg);
      } catch {
        return inspect(arg, opts);
      }
    }
    if (isPrimitive(arg)) return String(arg);
    return inspect(arg, { ...opts, depth: 0 });
  }

  function formatJson(arg) {
    try {
      return `${jsonStringify(arg)}`;
    } catch (err) {
      const message = primitiveString(safeGet(err, 'message'), '');
      if (/circular/i.test(message)) return '[Circular]';
      return `[${primitiveString(safeGet(err, 'name'), 'Error')}: ${message}]`;
    }
  }

  /**
   * `util.format` with inspect options, e.g. for console.log. Never throws.
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
          if (first.charCodeAt(i) !== 37) continue; // '%'
          const next = first[++i];
          if (a + 1 !== args.length) {
            let piece;
            switch (next) {
              case 's': piece = formatString(args[++a], inspectOpts); break;
              case 'j': piece = formatJson(args[++a]); break;
              case 'd': piece = formatOne(Number, args[++a]); break;
              case 'i': piece = formatOne(parseInt, args[++a]); break;
              case 'f': piece = formatOne(parseFloat, args[++a]); break;
              case 'O': piece = inspect(args[++a], inspectOpts); break;
              case 'o': piece = inspect(args[++a], { ...inspectOpts, showHidden: true, depth: 4 }); break;
              case 'c': a++; piece = ''; break;
              case '%':
                str += first.slice(lastPos, i);
                lastPos = i + 1;
                continue;
              default:
                continue;
            }
            if (lastPos !== i - 1) str += first.slice(lastPos, i - 1);
            str += piece;
            lastPos = i + 1;
          } else if (next === '%') {
            str += first.slice(lastPos, i);
            lastPos = i + 1;
          }
        }
        if (lastPos !== 0) {
          a++;
          join = ' ';
          if (lastPos < first.length) str += first.slice(lastPos);
        }
      }
      for (; a < args.length; a++) {
        const value = args[a];
        str += join + (typeof value === 'string' ? value : inspect(value, inspectOpts));
        join = ' ';
      }
      return str;
    } catch {
      return '[format failed]';
    }
  }

  /**
   * Like Node's `util.format(...args)` / what console.log prints. Never throws.
   * @param {...*} args
   * @returns {string}
   */
  function format(...args) {
    return formatWithOptions(undefined, ...args);
  }

  /**
   * JSON text for `value` if it is an object or array that survives a JSON round trip
   * unchanged: plain objects (Object.prototype or null prototype) and hole-free arrays
   * with only enumerable data properties, no cycles, and leaves that are strings,
   * finite numbers other than -0, booleans or null. Otherwise undefined, also when the
   * text would exceed `maxBytes` characters (default 10,000,000). Never runs user code.
   * @param {*} value
   * @param {number} [maxBytes]
   * @returns {string|undefined}
   */
  function jsonValue(value, maxBytes) {
    try {
      if (isPrimitive(value)) return undefined;
      // JSON.stringify would call an inherited toJSON: give up rather than run it.
      if (findDesc(Array.prototype, 'toJSON') || findDesc(ObjectProto, 'toJSON')) return undefined;
      const limit = typeof maxBytes === 'number' ? maxBytes : 10000000;
      if (!jsonSafe(value, { size: 0, limit, stack: [] })) return undefined;
      // Validated: only data properties and plain containers, so this runs no user code.
      const text = jsonStringify(value);
      return text.length > limit ? undefined : text;
    } catch {
      return undefined; // e.g. stack overflow on absurdly deep nesting
    }
  }

  // Would JSON.parse(JSON.stringify(v)) give v back? state.size is a lower bound of the
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
    if (state.stack.includes(v) || ownSymbols(v).length !== 0) return false;
    const array = isArray(v);
    const proto = getProto(v);
    if (array ? proto !== Array.prototype : proto !== ObjectProto && proto !== null) return false;
    if (array && state.size + 2 * v.length > state.limit) return false; // "0," per element
    // Arrays: as many keys as elements means no holes and no (enumerable) extras.
    const names = array ? objectKeys(v) : ownNames(v);
    if (array && names.length !== v.length) return false;
    state.stack.push(v);
    state.size += 2;
    for (let i = 0; i < names.length; i++) {
      const desc = getDesc(v, array ? i : names[i]);
      if (desc === undefined || !('value' in desc) || !desc.enumerable) return false;
      if (!array) state.size += names[i].length + 3;
      if (!jsonSafe(desc.value, state)) return false;
    }
    state.stack.pop();
    return true;
  }

  let ns = getDesc(globalThis, '__mcp2repl');
  ns = ns && !isPrimitive(ns.value) ? ns.value : undefined;
  if (ns === undefined) {
    ns = {};
    Object.defineProperty(globalThis, '__mcp2repl', {
      value: ns, writable: true, configurable: true, enumerable: false,
    });
  }
  Object.assign(ns, { inspect, format, formatWithOptions, jsonValue });
})();
