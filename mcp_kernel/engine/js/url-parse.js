// The WHATWG basic URL parser and serializer, state by state; url.js builds URL on it.
(function installUrlParser() {
  'use strict';
  const { toUSV, DEFAULT_PORTS, isSpecial, FAILURE, C0_SET, FRAGMENT_SET, QUERY_SET, SPECIAL_QUERY_SET, PATH_SET, USERINFO_SET, percentEncode, percentEncodeString, parseHost, isWindowsDriveLetter, startsWithWindowsDriveLetter } = globalThis.__mcp2repl.web;
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

  Object.assign(globalThis.__mcp2repl.web, { basicParse, hasOpaquePath, parseWithBase, serializePath, serializeURL, stripTrailingSpaces });
})();
