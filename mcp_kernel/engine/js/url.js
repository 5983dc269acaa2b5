// URL and URLSearchParams (WHATWG), on the parser in url-parse.js.
(function installUrl() {
  'use strict';
  const { setTag, toUSV, FAILURE, FORM_SET, USERINFO_SET, isSpecial, percentDecode, percentEncodeString, basicParse, hasOpaquePath, parseWithBase, serializePath, serializeURL, stripTrailingSpaces } = globalThis.__mcp2repl.web;

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

  globalThis.__mcp2repl.web.install({ URL, URLSearchParams });
})();
