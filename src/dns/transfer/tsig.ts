// TSIG (RFC 8945) with HMAC-SHA256: finding the TSIG record of a message, checking a request's
// MAC and time, and signing responses — the first with the request's MAC, each later message of
// a zone transfer with the MAC before it (§5.3.1). Pure functions of bytes, keys and the clock.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { skipName, WireFormatError } from '../wire/query.ts';

export const TSIG_TYPE = 250;
const CLASS_ANY = 255;
export const HMAC_SHA256 = 'hmac-sha256';
/** RFC 8945 §10: a fudge of 300 s is recommended. */
export const FUDGE = 300;

export const TSIG_ERROR = { BADSIG: 16, BADKEY: 17, BADTIME: 18, BADTRUNC: 22 } as const;
/** The header RCODE of a TSIG failure (§5.3.2). */
export const RCODE_NOTAUTH = 9;

export interface TsigKey {
  /** Lower case, no final dot. */
  name: string;
  algorithm: typeof HMAC_SHA256;
  secret: Buffer;
}

/**
 * A key as operators write it for BIND and Knot: `[hmac-sha256:]NAME:BASE64` (the secret at least
 * 16 octets: RFC 8945 §6.1 asks for at least half the hash's length).
 */
export function parseTsigKey(text: string): TsigKey | string {
  const parts = text.split(':');
  if (parts.length === 3 && parts[0]!.toLowerCase() !== HMAC_SHA256) return `algorithm ${parts[0]} is not supported (hmac-sha256 is)`;
  if (parts.length !== 2 && parts.length !== 3) return 'a TSIG key is [hmac-sha256:]NAME:BASE64SECRET';
  const name = parts.at(-2)!.toLowerCase().replace(/\.$/, '');
  const secretText = parts.at(-1)!;
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(name) || name.length > 253) return `"${name}" is not a key name (letters, digits, -, _, dots)`;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secretText)) return 'the secret is not base64';
  const secret = Buffer.from(secretText, 'base64');
  if (secret.length < 16) return `the secret is ${secret.length} octets; at least 16 are needed`;
  return { name, algorithm: HMAC_SHA256, secret };
}

/** A name as canonical wire form (lower case, uncompressed). */
export function nameWire(name: string): Buffer {
  const parts = name === '' ? [] : name.split('.');
  return Buffer.concat([...parts.map((p) => Buffer.concat([Buffer.from([p.length]), Buffer.from(p, 'latin1')])), Buffer.from([0])]);
}

/** Reads a (possibly compressed) name as lower-case text. */
export function readName(buf: Buffer, offset: number): string {
  const labels: string[] = [];
  let jumps = 0;
  for (;;) {
    if (offset >= buf.length) throw new WireFormatError('name runs past the end');
    const len = buf[offset]!;
    if (len === 0) return labels.join('.');
    if ((len & 0xc0) === 0xc0) {
      const target = ((len & 0x3f) << 8) | buf[offset + 1]!;
      if (target >= offset || ++jumps > 64) throw new WireFormatError('compression pointer loop');
      offset = target;
      continue;
    }
    if (len > 63 || offset + 1 + len > buf.length) throw new WireFormatError('bad label');
    labels.push(buf.toString('latin1', offset + 1, offset + 1 + len).toLowerCase());
    offset += len + 1;
  }
}

export interface TsigRecord {
  /** Where the TSIG record starts: the message before it is what was signed. */
  start: number;
  keyName: string;
  algorithm: string;
  timeSigned: number;
  fudge: number;
  mac: Buffer;
  originalId: number;
  error: number;
  other: Buffer;
}

/**
 * The message's TSIG record, if its last record is one; throws WireFormatError when a TSIG is
 * anywhere else or malformed (FORMERR, §5.2).
 */
export function findTsig(buf: Buffer): TsigRecord | undefined {
  if (buf.length < 12) throw new WireFormatError('shorter than a header');
  const qd = buf.readUInt16BE(4);
  const records = buf.readUInt16BE(6) + buf.readUInt16BE(8) + buf.readUInt16BE(10);
  let offset = 12;
  for (let i = 0; i < qd; i++) offset = skipName(buf, offset) + 4;
  let found: TsigRecord | undefined;
  for (let i = 0; i < records; i++) {
    const start = offset;
    offset = skipName(buf, offset);
    if (offset + 10 > buf.length) throw new WireFormatError('record header truncated');
    const type = buf.readUInt16BE(offset);
    const rdlen = buf.readUInt16BE(offset + 8);
    const rdata = offset + 10;
    if (rdata + rdlen > buf.length) throw new WireFormatError('RDATA runs past the end');
    if (type === TSIG_TYPE) {
      if (i !== records - 1 || buf.readUInt16BE(10) === 0) throw new WireFormatError('TSIG is not the last record');
      let at = rdata;
      const algorithm = readName(buf, at);
      at = skipName(buf, at);
      if (at + 10 > rdata + rdlen) throw new WireFormatError('TSIG truncated');
      const timeSigned = buf.readUInt16BE(at) * 2 ** 32 + buf.readUInt32BE(at + 2);
      const fudge = buf.readUInt16BE(at + 6);
      const macSize = buf.readUInt16BE(at + 8);
      at += 10;
      if (at + macSize + 6 > rdata + rdlen) throw new WireFormatError('TSIG MAC truncated');
      const mac = buf.subarray(at, at + macSize);
      at += macSize;
      const originalId = buf.readUInt16BE(at);
      const error = buf.readUInt16BE(at + 2);
      const otherLen = buf.readUInt16BE(at + 4);
      at += 6;
      if (at + otherLen !== rdata + rdlen) throw new WireFormatError('TSIG other data does not end the record');
      found = { start, keyName: readName(buf, start), algorithm, timeSigned, fudge, mac, originalId, error, other: buf.subarray(at, at + otherLen) };
    }
    offset = rdata + rdlen;
  }
  return found;
}

/** The message as it was before its TSIG was added: without the record, ARCOUNT one less, the original ID. */
export function unsigned(buf: Buffer, tsig: TsigRecord): Buffer {
  const out = Buffer.from(buf.subarray(0, tsig.start));
  out.writeUInt16BE(tsig.originalId, 0);
  out.writeUInt16BE(buf.readUInt16BE(10) - 1, 10);
  return out;
}

function u48(n: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUInt16BE(Math.floor(n / 2 ** 32), 0);
  b.writeUInt32BE(n % 2 ** 32, 2);
  return b;
}

/** The TSIG variables the MAC covers (§4.3.3); `timersOnly` for a transfer's later messages. */
function variables(key: TsigKey, timeSigned: number, fudge: number, error: number, other: Buffer, timersOnly: boolean): Buffer {
  const timers = Buffer.concat([u48(timeSigned), Buffer.from([fudge >> 8, fudge & 0xff])]);
  if (timersOnly) return timers;
  const fixed = Buffer.alloc(6);
  fixed.writeUInt16BE(CLASS_ANY, 0);
  fixed.writeUInt32BE(0, 2);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(error, 0);
  tail.writeUInt16BE(other.length, 2);
  return Buffer.concat([nameWire(key.name), fixed, nameWire(key.algorithm), timers, tail, other]);
}

function hmac(key: TsigKey, parts: Buffer[]): Buffer {
  const h = createHmac('sha256', key.secret);
  for (const p of parts) h.update(p);
  return h.digest();
}

const macPrefix = (mac: Buffer) => Buffer.concat([Buffer.from([mac.length >> 8, mac.length & 0xff]), mac]);

export type Verdict = { ok: true } | { ok: false; error: number };

/** Checks a request's TSIG against its key and the clock (seconds since the epoch). */
export function verifyRequest(buf: Buffer, tsig: TsigRecord, key: TsigKey, now: number): Verdict {
  if (tsig.algorithm !== key.algorithm) return { ok: false, error: TSIG_ERROR.BADKEY };
  // §5.2.2.1: a MAC shorter than half the hash (and 10 octets) is refused.
  if (tsig.mac.length < 16 || tsig.mac.length > 32) return { ok: false, error: TSIG_ERROR.BADSIG };
  const expected = hmac(key, [unsigned(buf, tsig), variables(key, tsig.timeSigned, tsig.fudge, tsig.error, tsig.other, false)]);
  if (!timingSafeEqual(expected.subarray(0, tsig.mac.length), tsig.mac)) return { ok: false, error: TSIG_ERROR.BADSIG };
  if (Math.abs(now - tsig.timeSigned) > tsig.fudge) return { ok: false, error: TSIG_ERROR.BADTIME };
  return { ok: true };
}

/** A TSIG record's bytes. */
function tsigRecord(key: TsigKey, id: number, timeSigned: number, mac: Buffer, error: number, other: Buffer): Buffer {
  const algorithm = nameWire(key.algorithm);
  const rdata = Buffer.concat([algorithm, u48(timeSigned), Buffer.from([FUDGE >> 8, FUDGE & 0xff]), macPrefix(mac), Buffer.from([id >> 8, id & 0xff, error >> 8, error & 0xff, other.length >> 8, other.length & 0xff]), other]);
  const head = Buffer.alloc(10);
  head.writeUInt16BE(TSIG_TYPE, 0);
  head.writeUInt16BE(CLASS_ANY, 2);
  head.writeUInt32BE(0, 4);
  head.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([nameWire(key.name), head, rdata]);
}

function appendRecord(message: Buffer, record: Buffer): Buffer {
  const out = Buffer.concat([message, record]);
  out.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return out;
}

export interface Signed {
  message: Buffer;
  mac: Buffer;
}

/**
 * Signs a message: a response to a request with MAC `requestMac`, or (with `priorMac` and
 * `later`) a later message of a transfer; a request when neither is given (NOTIFY).
 */
export function sign(message: Buffer, key: TsigKey, now: number, options: { requestMac?: Buffer; priorMac?: Buffer; error?: number; other?: Buffer } = {}): Signed {
  const error = options.error ?? 0;
  const other = options.other ?? Buffer.alloc(0);
  const later = options.priorMac !== undefined;
  const prefix = later ? macPrefix(options.priorMac!) : options.requestMac ? macPrefix(options.requestMac) : Buffer.alloc(0);
  const mac = hmac(key, [prefix, message, variables(key, now, FUDGE, error, other, later)]);
  return { message: appendRecord(message, tsigRecord(key, message.readUInt16BE(0), now, mac, error, other)), mac };
}

/**
 * An unsigned TSIG error answer (BADKEY, BADSIG: §5.3.2): the request's key name and algorithm,
 * an empty MAC, the error; the header RCODE NOTAUTH.
 */
export function unsignedError(message: Buffer, tsig: TsigRecord, error: number, now: number): Buffer {
  const key: TsigKey = { name: tsig.keyName, algorithm: HMAC_SHA256, secret: Buffer.alloc(0) };
  const algorithm = nameWire(tsig.algorithm);
  const rdata = Buffer.concat([algorithm, u48(now), Buffer.from([FUDGE >> 8, FUDGE & 0xff, 0, 0]), Buffer.from([tsig.originalId >> 8, tsig.originalId & 0xff, error >> 8, error & 0xff, 0, 0])]);
  const head = Buffer.alloc(10);
  head.writeUInt16BE(TSIG_TYPE, 0);
  head.writeUInt16BE(CLASS_ANY, 2);
  head.writeUInt16BE(rdata.length, 8);
  return appendRecord(message, Buffer.concat([nameWire(key.name), head, rdata]));
}

/** Whether a response carries a valid TSIG for our request (NOTIFY answers). */
export function verifyResponse(buf: Buffer, key: TsigKey, requestMac: Buffer, now: number): boolean {
  try {
    const tsig = findTsig(buf);
    if (!tsig || tsig.keyName !== key.name || tsig.error !== 0) return false;
    const expected = hmac(key, [macPrefix(requestMac), unsigned(buf, tsig), variables(key, tsig.timeSigned, tsig.fudge, tsig.error, tsig.other, false)]);
    return tsig.mac.length >= 16 && timingSafeEqual(expected.subarray(0, tsig.mac.length), tsig.mac) && Math.abs(now - tsig.timeSigned) <= tsig.fudge;
  } catch {
    return false;
  }
}
