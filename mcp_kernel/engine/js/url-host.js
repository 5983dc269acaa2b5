// The URL standard's percent-encode sets and host parsing (domains, punycode, IPv4, IPv6),
// shared with url-parse.js and url.js through `__mcp2repl.web`.
(function installUrlHosts() {
  'use strict';
  const { utf8Encode, decodeUtf8, newDecoderState } = globalThis.__mcp2repl.web;

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

  Object.assign(globalThis.__mcp2repl.web, { DEFAULT_PORTS, isSpecial, FAILURE, C0_SET, FRAGMENT_SET, QUERY_SET, SPECIAL_QUERY_SET, PATH_SET, USERINFO_SET, FORM_SET, percentEncode, percentEncodeString, percentDecode, parseHost, isWindowsDriveLetter, startsWithWindowsDriveLetter });
})();
