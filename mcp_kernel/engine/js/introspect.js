// Completion and inspection helpers. They walk objects through property descriptors only:
// completing `a.b.` must never run a getter, a Proxy-free accessor, or any other user code.
(function installIntrospect() {
  "use strict";
  const $ = globalThis.__mcp2repl.$; // built-ins captured before any cell ran (intrinsics.js)
  const ns = globalThis.__mcp2repl;
  const HIDDEN = new Set(["__mcp2repl"]);

  /** Resolve a dotted path of data properties from globalThis; undefined if any step is an accessor. */
  function resolve(path) {
    let obj = globalThis;
    for (const key of path) {
      if (obj === null || obj === undefined) return { ok: false };
      let o = Object(obj);
      let desc;
      while (o && !desc) {
        desc = Object.getOwnPropertyDescriptor(o, key);
        o = Object.getPrototypeOf(o);
      }
      if (!desc || !("value" in desc)) return { ok: false };
      obj = desc.value;
    }
    return { ok: true, value: obj };
  }

  function kindOf(value) {
    if (typeof value === "function") {
      return /^class[\s{]/.test(Function.prototype.toString.call(value)) ? "class" : "function";
    }
    if (value !== null && typeof value === "object") return "instance";
    return "instance";
  }

  /** `name(a, b = 1, ...rest)` from a function's own source text, without calling it. */
  function signature(name, fn) {
    let src;
    try { src = Function.prototype.toString.call(fn); } catch (_) { return name + "(…)"; }
    if (/\{\s*\[native code\]\s*\}\s*$/.test(src)) return `${name}(${fn.length ? Array.from({ length: fn.length }, (_, i) => "arg" + i).join(", ") : ""})`;
    src = $.replace($.replace($.replace(src, /__mk\$f\[0\]&&__mk\$i\(\);/g, ""), /\(__mk\$f\[0\]&&__mk\$i\(\),/g, ""), /\/\*__mk\$\*\/\)/g, "");
    let m = /^[^(=]*\(([^)]*)\)/.exec(src) || /^\s*(?:async\s+)?([\w$]+)\s*=>/.exec(src);
    if (/^class[\s{]/.test(src)) {
      const ctor = /constructor\s*\(([^)]*)\)/.exec(src);
      m = ctor || [null, ""];
    }
    const params = m ? m[1].replace(/\s+/g, " ").trim() : "";
    return `${name}(${params})`;
  }

  function namesOf(obj, prefix) {
    const seen = new Set();
    const out = [];
    let o = obj === null || obj === undefined ? null : Object(obj);
    let depth = 0;
    while (o && depth < 50) {
      // Object.prototype's members (hasOwnProperty, …) are noise after `x.` until typed for.
      if (o === Object.prototype && depth > 0 && !prefix) break;
      for (const key of Object.getOwnPropertyNames(o)) {
        if (seen.has(key) || HIDDEN.has(key) || key.startsWith("__mk$")) continue;
        seen.add(key);
        const desc = Object.getOwnPropertyDescriptor(o, key);
        out.push([key, desc && "value" in desc ? desc.value : undefined, !!(desc && "value" in desc)]);
      }
      o = Object.getPrototypeOf(o);
      depth++;
    }
    return out;
  }

  /** JSON `[[name, type, signature], …]` of properties of `path` starting with `prefix`. */
  ns.complete = function complete(path, prefix) {
    const r = resolve(path);
    if (!r.ok) return "[]";
    const out = [];
    for (const [name, value, isData] of namesOf(r.value, prefix)) {
      if (!name.startsWith(prefix)) continue;
      if (path.length === 0 && name === "constructor") continue;
      const type = isData ? kindOf(value) : "property";
      const sig = type === "function" || type === "class" ? signature(name, value) : "";
      out.push([name, type, sig]);
    }
    return JSON.stringify(out);
  };

  /** JSON description of the value at `path` for inspect requests. */
  ns.describe = function describe(path) {
    const r = resolve(path);
    if (!r.ok) return JSON.stringify({ found: false });
    const value = r.value;
    const name = path[path.length - 1] || "globalThis";
    const info = { found: true, name, type: typeof value };
    if (typeof value === "function") {
      info.type = kindOf(value);
      info.signature = signature(name, value);
      try { info.source = Function.prototype.toString.call(value); } catch (_) { info.source = ""; }
      const doc = Object.getOwnPropertyDescriptor(value, "__doc__");
      if (doc && typeof doc.value === "string") info.doc = doc.value;
    } else if (value !== null && typeof value === "object") {
      const proto = Object.getPrototypeOf(value);
      const ctor = proto && Object.getOwnPropertyDescriptor(proto, "constructor");
      info.type = ctor && typeof ctor.value === "function" && ctor.value.name ? ctor.value.name : (Array.isArray(value) ? "Array" : "Object");
    }
    info.summary = ns.inspect(value, { depth: 1, maxArrayLength: 20, maxStringLength: 500, maxChars: 4000 });
    return JSON.stringify(info);
  };
})();
