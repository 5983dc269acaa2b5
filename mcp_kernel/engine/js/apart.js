// Big strings travel beside the bridge's JSON, in both directions. Escaped into JSON and parsed
// back, a 50 MB text (a tool's result coming in, an artifact's text going out) would exist several
// times over in both heaps at once; as a string of its own it is copied once, as data.
//
// In:  Python hands each big string of a result to `stash` (`this` = the string) right before the
//      batch that uses it; the batch says how many it takes, and `place` puts them where its
//      `paths` point.
// Out: `setAside` keeps a request's big top-level string args here and names their keys in the
//      request (`apart`, with their total length in `apartChars`); Python asks for each with `take`
//      (`this` = "id/key") before the handler runs.
(function installApart() {
  "use strict";
  const ns = globalThis.__mcp2repl; // made and locked by intrinsics.js
  const $ = ns.$; // built-ins captured before any cell ran: a cell that replaces one changes only its own code
  const quote = (s) => $.stringify($.String(s));
  const APART = 256 * 1024; // characters: the size from which a string travels on its own

  const stashed = [];
  ns.stash = function stash() { stashed[stashed.length] = typeof this === "string" ? this : "" + this; };

  const aside = new $.Map(); // "id/key" -> string
  /** Python: the string request `this` ("id/key") set aside, handed over once. */
  ns.take = function take() {
    const key = "" + this;
    const text = $.mapGet(aside, key);
    $.mapDelete(aside, key);
    return typeof text === "string" ? text : "";
  };

  // (no destructuring in here: a cell may have replaced Array.prototype[Symbol.iterator])
  ns.apart = $.freeze({
    /** The first `count` stashed strings, for one batch. */
    stashed: (count) => (count ? $.splice(stashed, 0, count) : []),
    /** Put texts[at…] where `paths` (key lists into `value`) point; returns the next unused index. */
    place(value, paths, texts, at) {
      for (let i = 0; i < paths.length; i++, at++) {
        let obj = value;
        for (let k = 0; k < paths[i].length - 1 && obj; k++) obj = obj[paths[i][k]];
        if (obj) obj[paths[i][paths[i].length - 1]] = texts[at];
      }
      return at;
    },
    /** null when `args` has no big top-level string (every call asks: nothing is allocated then);
     * else `{args}` with them set aside (as null), the request's `apart` member, and the `keys`
     * that `forget` drops if the request is never sent. */
    setAside(id, args) {
      if (args === null || typeof args !== "object" || $.isArray(args) || $.getPrototypeOf(args) !== $.ObjectProto) return null;
      const names = $.keys(args);
      let out = null;
      for (let i = 0; i < names.length; i++) {
        const k = names[i];
        const v = args[k];
        if (typeof v !== "string" || v.length < APART) continue;
        if (out === null) out = { args: $.assign({}, args), apart: "", keys: [], chars: 0 };
        out.args[k] = null;
        out.chars += v.length;
        $.mapSet(aside, `${id}/${k}`, v);
        out.keys[out.keys.length] = `${id}/${k}`;
        out.apart += (out.apart ? "," : "") + quote(k);
      }
      if (out !== null) out.apart = `,"apart":[${out.apart}],"apartChars":${out.chars}`;
      return out;
    },
    forget(keys) { for (let i = 0; i < keys.length; i++) $.mapDelete(aside, keys[i]); },
    /** An interrupt rejected every pending request: nobody will take what they set aside. */
    clear() { $.mapClear(aside); },
  });
})();
