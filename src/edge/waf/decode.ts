// Pure decoders: the transformations a server, a browser or an interpreter applies to a value
// before it means anything. Each runs in one pass over its input (no backtracking), and never
// gives up on bad input: an invalid byte becomes U+FFFD, as browsers and Node's TextDecoder do,
// so that one stray %FF cannot hide the rest of a value from the rules.

const HEX = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1);

/**
 * UTF-8 bytes to text. Valid sequences decode as usual; overlong forms of ASCII (C0 AE, E0 80 AE —
 * old IIS and Tomcat took them for '.') decode to that ASCII character, since some server behind
 * the edge may; anything else invalid is one U+FFFD per byte.
 */
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function utf8Lenient(bytes: Uint8Array): string {
  // Valid UTF-8 (no overlong forms by definition) decodes natively; only invalid input takes the slow path.
  try {
    return strict.decode(bytes);
  } catch {
    return utf8Slow(bytes);
  }
}

function utf8Slow(bytes: Uint8Array): string {
  let out = '';
  let run = 0; // start of a run of ASCII bytes, copied at once
  const flush = (end: number) => {
    if (end > run) out += String.fromCharCode(...bytes.subarray(run, end));
  };
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      if (i - run >= 4096) {
        flush(i);
        run = i;
      }
      continue;
    }
    flush(i);
    const c1 = bytes[i + 1] ?? 0;
    const c2 = bytes[i + 2] ?? 0;
    const c3 = bytes[i + 3] ?? 0;
    const cont = (c: number) => (c & 0xc0) === 0x80;
    let code = -1;
    let size = 1;
    if (b >= 0xc0 && b <= 0xdf && cont(c1)) {
      code = ((b & 0x1f) << 6) | (c1 & 0x3f);
      size = 2;
    } else if (b >= 0xe0 && b <= 0xef && cont(c1) && cont(c2)) {
      code = ((b & 0x0f) << 12) | ((c1 & 0x3f) << 6) | (c2 & 0x3f);
      size = 3;
      if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
    } else if (b >= 0xf0 && b <= 0xf4 && cont(c1) && cont(c2) && cont(c3)) {
      code = ((b & 0x07) << 18) | ((c1 & 0x3f) << 12) | ((c2 & 0x3f) << 6) | (c3 & 0x3f);
      size = 4;
      if (code > 0x10ffff) code = 0xfffd;
    }
    // Overlong encodings of ASCII keep their ASCII meaning; other overlong forms are invalid.
    if (code >= 0x80 && ((size === 3 && code < 0x800) || (size === 4 && code < 0x10000))) code = 0xfffd;
    out += code < 0 ? '\ufffd' : String.fromCodePoint(code);
    i += code < 0 ? 1 : size;
    run = i;
  }
  flush(i);
  return out;
}

/**
 * Percent-decoding byte by byte: %XX is a byte, %uXXXX (IIS) a code point, other characters are
 * their UTF-8 bytes; `plus` turns '+' into a space (query strings and forms). A '%' not followed
 * by two hex digits stays as it is.
 */
export function percentDecode(text: string, plus = false): string {
  if (!text.includes('%') && !(plus && text.includes('+'))) return text;
  // Well-formed input decodes natively; invalid UTF-8, a stray '%' or %uXXXX take the byte-wise path.
  try {
    return decodeURIComponent(plus && text.includes('+') ? text.replace(/\+/g, ' ') : text);
  } catch {
    // below
  }
  const bytes = new Uint8Array(text.length * 3);
  let n = 0;
  const put = (s: string) => {
    const encoded = Buffer.from(s, 'utf8');
    bytes.set(encoded, n);
    n += encoded.length;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 37 /* % */) {
      const h = HEX(text.charCodeAt(i + 1));
      const l = HEX(text.charCodeAt(i + 2));
      if (h >= 0 && l >= 0) {
        bytes[n++] = h * 16 + l;
        i += 2;
        continue;
      }
      if ((text.charCodeAt(i + 1) | 32) === 117 /* u */) {
        const code = parseInt(text.slice(i + 2, i + 6), 16);
        if (/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          put(String.fromCharCode(code));
          i += 5;
          continue;
        }
      }
      bytes[n++] = 37;
    } else if (c === 43 /* + */ && plus) bytes[n++] = 32;
    else if (c < 0x80) bytes[n++] = c;
    else {
      // A surrogate pair is one code point: take both halves together.
      const pair = c >= 0xd800 && c <= 0xdbff ? text.slice(i, i + 2) : text[i]!;
      put(pair);
      i += pair.length - 1;
    }
  }
  return utf8Lenient(bytes.subarray(0, n));
}

const NAMED: Record<string, string> = {
  lt: '<', gt: '>', quot: '"', apos: "'", amp: '&', equals: '=', colon: ':', lpar: '(', rpar: ')', sol: '/', bsol: '\\', semi: ';', tab: '\t', newline: '\n',
  nbsp: '\u00a0', grave: '`', lsqb: '[', rsqb: ']', lbrack: '[', rbrack: ']', lcub: '{', rcub: '}', lbrace: '{', rbrace: '}', excl: '!', num: '#', dollar: '$',
  percnt: '%', period: '.', comma: ',', plus: '+', ast: '*', quest: '?', vert: '|', hat: '^', lowbar: '_', commat: '@', verbar: '|',
};

/**
 * HTML character references as a browser decodes them in text and attributes: numeric ones with
 * any number of leading zeros and no ';' needed, the named ones that matter for markup and script.
 */
export function entityDecode(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(?:#[xX]0*([0-9a-fA-F]{1,6})|#0*([0-9]{1,7})|([a-zA-Z]{2,8}));?/g, (whole, hex: string | undefined, dec: string | undefined, name: string | undefined) => {
    if (hex !== undefined || dec !== undefined) {
      const code = hex !== undefined ? parseInt(hex, 16) : Number(dec);
      return code > 0 && code < 0x110000 && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
    }
    return NAMED[name!.toLowerCase()] ?? whole;
  });
}

/** Escapes of JavaScript, JSON and CSS strings: \uXXXX, \u{X…}, \xXX, and CSS's \XX…. */
export function escapeDecode(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\(?:u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2}))/g, (_whole, braced: string | undefined, u: string | undefined, x: string | undefined) => {
    const code = parseInt(braced ?? u ?? x!, 16);
    return code < 0x110000 && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
  });
}

/** Base64 digit values, both alphabets (-1: not a digit). */
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) DIGIT['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;
DIGIT['-'.charCodeAt(0)] = 62;
DIGIT['_'.charCodeAt(0)] = 63;

const printableByte = (c: number) => (c >= 32 && c < 127) || c === 9 || c === 10 || c === 13;

/** Whether the first 8 characters are base64 of 6 printable bytes (decoded by hand: no allocation). */
function printableHead(text: string): boolean {
  for (let i = 0; i < 8; i += 4) {
    let n = 0;
    for (let j = i; j < i + 4; j++) {
      const code = text.charCodeAt(j);
      const d = code < 128 ? DIGIT[code]! : -1;
      if (d < 0) return false;
      n = (n << 6) | d;
    }
    if (!printableByte(n >>> 16) || !printableByte((n >>> 8) & 255) || !printableByte(n & 255)) return false;
  }
  return true;
}

/** Base64 (standard or URL alphabet) that decodes to mostly printable text; undefined otherwise. */
export function base64Text(text: string): string | undefined {
  // Tokens, ids and hashes decode to random bytes: their first six bytes already tell (a cheap no).
  if (text.length < 8 || text.length > 16_384 || !printableHead(text) || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
  const decoded = Buffer.from(text, /[-_]/.test(text) ? 'base64url' : 'base64').toString('latin1');
  let printable = 0;
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded.charCodeAt(i);
    if ((c >= 32 && c < 127) || c === 9 || c === 10 || c === 13) printable++;
  }
  return decoded.length > 0 && printable / decoded.length > 0.95 ? decoded : undefined;
}

const FULL_WIDTH = /[\uff01-\uff5e]/;
const STRAY_PERCENT = /%(?![0-9a-f]{2}|u[0-9a-f]{4})(?=[a-z])/i;
const STRAY_PERCENT_ALL = new RegExp(STRAY_PERCENT.source, 'gi');

/** At most this many rounds of percent-decoding (double and triple encoding). */
const ROUNDS = 3;

/**
 * The forms of one input the detectors look at: the value as received, then percent-decoded
 * round by round, each also with HTML references and JavaScript escapes decoded, NUL bytes
 * removed, in lower case. `plus`: '+' means a space (query and form values).
 */
export function decodedForms(value: string, plus = false): string[] {
  // A handful at most: a list with === is cheaper than a Set, which hashes every (long) form.
  const forms: string[] = [];
  // Query and form values ('+' means a space) always reach an app decoded once: the value as
  // received is only a form of its own when there is nothing to decode.
  const once = percentDecode(value, plus);
  if (!plus || once === value) add(forms, value);
  let current = value;
  for (let round = 0; round < ROUNDS; round++) {
    // A backend that decodes twice uses the same decoder twice ('+' a space in forms and queries).
    const next = round === 0 ? once : percentDecode(current, plus);
    if (next === current) break;
    add(forms, next);
    current = next;
  }
  // Full-width forms (＜ＳＣＲＩＰＴ＞, ＇ ＯＲ): apps that normalise Unicode (NFKC, Windows best-fit) read ASCII.
  if (FULL_WIDTH.test(current)) add(forms, current.normalize('NFKC'));
  // Classic ASP drops a '%' that starts no escape (%U%N%I%O%N is UNION there).
  if (current.includes('%') && STRAY_PERCENT.test(current)) add(forms, current.replace(STRAY_PERCENT_ALL, ''));
  // Escapes can hide percent-encoding and the other way round (\u0025 → %): one more round on the decoded text.
  const mixed = escapeDecode(entityDecode(current));
  if (mixed !== current && mixed.includes('%')) add(forms, percentDecode(mixed));
  return forms;
}

// (decodedForms's steps are functions of their own, not closures made anew for every value.)
function keep(forms: string[], t: string): void {
  if (!forms.includes(t)) forms.push(t);
}

/** A form in lower case without NUL bytes, and with references and escapes decoded when it has any. */
function add(forms: string[], text: string): void {
  let t = text.includes('\0') ? text.replace(/\0/g, '') : text;
  t = t.toLowerCase();
  keep(forms, t);
  if (!t.includes('&') && !t.includes('\\')) return;
  const decoded = escapeDecode(entityDecode(t)).toLowerCase();
  keep(forms, decoded.includes('\0') ? decoded.replace(/\0/g, '') : decoded);
}
