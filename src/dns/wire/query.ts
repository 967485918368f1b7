// Parses an incoming query defensively: every length is checked against the buffer before it is
// read, names are bounded (63-octet labels, 255-octet names, no compression loops), and the
// result says precisely why a packet is refused so the server can answer FORMERR/NOTIMP or drop.
import { isCookieLength } from '../cookies/server-cookies.ts';
import { EDNS_OPTION, OPCODE_QUERY, QTYPE } from './constants.ts';

export interface ClientSubnet {
  family: 1 | 2;
  sourcePrefix: number;
  scopePrefix: number;
  /** The address bytes as sent (ceil(sourcePrefix / 8) octets). */
  address: Uint8Array;
}

export interface Edns {
  udpSize: number;
  version: number;
  dnssecOk: boolean;
  /** The query's ECS option, if it carried a well-formed one. */
  clientSubnet?: ClientSubnet;
  /** The query's DNS COOKIE (RFC 7873): the client cookie and the server cookie it sent back, if any. */
  cookie?: { client: Uint8Array; server?: Uint8Array };
  /** The query asked for our name server identifier (RFC 5001). */
  nsid?: boolean;
}

export interface Query {
  id: number;
  /** Recursion desired, echoed in the response. */
  rd: boolean;
  /** Checking disabled, echoed in the response (RFC 4035 §3.1.6 asks only validators to care). */
  cd: boolean;
  /** The question name exactly as sent: its wire bytes (for echoing case) and its text. */
  qnameWire: Buffer;
  /** Lower-case, no trailing dot, "" for the root. */
  qname: string;
  qtype: number;
  qclass: number;
  /** Offset just past the question section: the question is buf[12, questionEnd). */
  questionEnd: number;
  edns?: Edns;
}

/** What an error answer needs of a query's OPT: the DO bit, its cookie and whether it asked for NSID. */
export interface ErrorOpt {
  dnssecOk: boolean;
  cookie?: Edns['cookie'];
  nsid?: boolean;
}

export type ParseResult =
  | { kind: 'query'; query: Query }
  /** Answer with this rcode; `query` is set when the question could be read (to echo it). */
  | {
      kind: 'error';
      rcode: number;
      id: number;
      rd: boolean;
      opcode: number;
      query?: Query;
      reason: string;
      /** The query carried an OPT: the error reply carries one too (RFC 6891 §6.1.1). */
      opt?: ErrorOpt;
    }
  /** Not worth an answer: too short for a header, or a response (QR=1), which we never answer. */
  | { kind: 'drop'; reason: string };

const MAX_NAME = 255;

export class WireFormatError extends Error {}

/** Reads a name that may use compression pointers; returns the offset after it. */
export function skipName(buf: Buffer, offset: number): number {
  let end = -1;
  let jumps = 0;
  let total = 0;
  for (;;) {
    if (offset >= buf.length) throw new WireFormatError('name runs past the end of the packet');
    const len = buf[offset]!;
    if (len === 0) return end === -1 ? offset + 1 : end;
    if ((len & 0xc0) === 0xc0) {
      if (offset + 1 >= buf.length) throw new WireFormatError('truncated compression pointer');
      if (end === -1) end = offset + 2;
      const target = ((len & 0x3f) << 8) | buf[offset + 1]!;
      // Pointers must point backwards; that alone rules out loops, the jump cap is a second guard.
      if (target >= offset || ++jumps > 64) throw new WireFormatError('compression pointer loop');
      offset = target;
      continue;
    }
    if (len > 63) throw new WireFormatError('label type not supported');
    total += len + 1;
    if (total > MAX_NAME) throw new WireFormatError('name longer than 255 octets');
    offset += len + 1;
  }
}

/** Reads the question name (no compression allowed there) into lower-case text. */
function readQuestionName(buf: Buffer, offset: number): { text: string; end: number } {
  let text = '';
  let total = 1;
  for (;;) {
    if (offset >= buf.length) throw new WireFormatError('question name runs past the end');
    const len = buf[offset]!;
    if (len === 0) return { text, end: offset + 1 };
    if (len > 63) throw new WireFormatError('compression or extended label in the question');
    total += len + 1;
    if (total > MAX_NAME) throw new WireFormatError('question name longer than 255 octets');
    if (offset + 1 + len > buf.length) throw new WireFormatError('label runs past the end');
    let label = '';
    for (let i = offset + 1; i <= offset + len; i++) {
      let c = buf[i]!;
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      // Dots and backslashes inside a label are escaped so "a.b" as one label never equals two labels.
      label += c === 0x2e || c === 0x5c || c < 0x21 || c > 0x7e ? `\\${c.toString().padStart(3, '0')}` : String.fromCharCode(c);
    }
    text = text === '' ? label : `${text}.${label}`;
    offset += len + 1;
  }
}

function parseOpt(buf: Buffer, offset: number, rdlen: number, klass: number, ttl: number): Edns {
  const edns: Edns = { udpSize: klass, version: (ttl >>> 16) & 0xff, dnssecOk: (ttl & 0x8000) !== 0 };
  const end = offset + rdlen;
  while (offset < end) {
    if (offset + 4 > end) throw new WireFormatError('truncated EDNS option');
    const code = buf.readUInt16BE(offset);
    const len = buf.readUInt16BE(offset + 2);
    offset += 4;
    if (offset + len > end) throw new WireFormatError('EDNS option runs past the OPT record');
    if (code === EDNS_OPTION.NSID) edns.nsid = true;
    if (code === EDNS_OPTION.ECS) edns.clientSubnet = parseClientSubnet(buf.subarray(offset, offset + len));
    if (code === EDNS_OPTION.COOKIE) {
      // RFC 7873 §5.2.2: a COOKIE of a length no cookie can have is FORMERR; so is a second one.
      if (!isCookieLength(len)) throw new WireFormatError(`COOKIE option of ${len} octets`);
      if (edns.cookie) throw new WireFormatError('more than one COOKIE option');
      edns.cookie = { client: Uint8Array.from(buf.subarray(offset, offset + 8)), server: len > 8 ? Uint8Array.from(buf.subarray(offset + 8, offset + len)) : undefined };
    }
    offset += len;
  }
  return edns;
}

/** RFC 7871 §6: malformed options are FORMERR (the caller turns the throw into one). */
function parseClientSubnet(data: Buffer): ClientSubnet {
  if (data.length < 4) throw new WireFormatError('ECS option too short');
  const family = data.readUInt16BE(0);
  const sourcePrefix = data[2]!;
  const scopePrefix = data[3]!;
  const address = data.subarray(4);
  if (family !== 1 && family !== 2) throw new WireFormatError(`ECS family ${family} unknown`);
  const max = family === 1 ? 32 : 128;
  if (sourcePrefix > max) throw new WireFormatError('ECS source prefix too long');
  if (address.length !== Math.ceil(sourcePrefix / 8)) throw new WireFormatError('ECS address length does not match the source prefix');
  const spare = address.length * 8 - sourcePrefix;
  if (spare > 0 && (address[address.length - 1]! & ((1 << spare) - 1)) !== 0) throw new WireFormatError('ECS address has bits set past the source prefix');
  return { family, sourcePrefix, scopePrefix, address: Uint8Array.from(address) };
}

export function parseQuery(buf: Buffer): ParseResult {
  if (buf.length < 12) return { kind: 'drop', reason: 'shorter than a DNS header' };
  const id = buf.readUInt16BE(0);
  const flags = buf.readUInt16BE(2);
  if (flags & 0x8000) return { kind: 'drop', reason: 'a response, not a query' };
  const rd = (flags & 0x0100) !== 0;
  const cd = (flags & 0x0010) !== 0;
  const opcode = (flags >> 11) & 0xf;
  const qdcount = buf.readUInt16BE(4);
  const ancount = buf.readUInt16BE(6);
  const nscount = buf.readUInt16BE(8);
  const arcount = buf.readUInt16BE(10);
  if (qdcount !== 1) {
    const opt = findOpt(buf, qdcount);
    // RFC 7873 §5.4: a query with no question and a COOKIE asks for a server cookie: NOERROR.
    const cookieOnly = qdcount === 0 && opcode === OPCODE_QUERY && opt?.cookie !== undefined;
    return { kind: 'error', rcode: cookieOnly ? 0 : opcode === OPCODE_QUERY ? 1 : 4, id, rd, opcode, reason: cookieOnly ? 'a server cookie asked for' : `QDCOUNT ${qdcount}`, opt };
  }
  if (opcode !== OPCODE_QUERY) {
    // Echo the question when it reads cleanly, so clients match the NOTIMP to their query.
    let query: Query | undefined;
    try {
      const name = readQuestionName(buf, 12);
      if (name.end + 4 <= buf.length) {
        query = { id, rd, cd, qnameWire: buf.subarray(12, name.end), qname: name.text, qtype: buf.readUInt16BE(name.end), qclass: buf.readUInt16BE(name.end + 2), questionEnd: name.end + 4 };
      }
    } catch {
      // no question to echo
    }
    return { kind: 'error', rcode: 4, id, rd, opcode, query, reason: `opcode ${opcode} not implemented`, opt: findOpt(buf, qdcount) };
  }

  let query: Query | undefined;
  try {
    const name = readQuestionName(buf, 12);
    if (name.end + 4 > buf.length) throw new WireFormatError('question truncated');
    const questionEnd = name.end + 4;
    query = {
      id,
      rd,
      cd,
      qnameWire: buf.subarray(12, name.end),
      qname: name.text,
      qtype: buf.readUInt16BE(name.end),
      qclass: buf.readUInt16BE(name.end + 2),
      questionEnd,
    };
    let offset = questionEnd;
    const records = ancount + nscount + arcount;
    for (let i = 0; i < records; i++) {
      const nameStart = offset;
      offset = skipName(buf, offset);
      if (offset + 10 > buf.length) throw new WireFormatError('resource record header truncated');
      const type = buf.readUInt16BE(offset);
      const klass = buf.readUInt16BE(offset + 2);
      const ttl = buf.readUInt32BE(offset + 4);
      const rdlen = buf.readUInt16BE(offset + 8);
      offset += 10;
      if (offset + rdlen > buf.length) throw new WireFormatError('RDATA runs past the end of the packet');
      if (type === QTYPE.OPT) {
        if (i < ancount + nscount) throw new WireFormatError('OPT outside the additional section');
        if (query.edns) throw new WireFormatError('more than one OPT record');
        if (buf[nameStart] !== 0) throw new WireFormatError('OPT owner is not the root');
        query.edns = parseOpt(buf, offset, rdlen, klass, ttl);
      }
      offset += rdlen;
    }
  } catch (error) {
    if (!(error instanceof WireFormatError)) throw error;
    return { kind: 'error', rcode: 1, id, rd, opcode, query: query && { ...query, edns: undefined }, reason: error.message, opt: findOpt(buf, qdcount) };
  }
  return { kind: 'query', query };
}

/**
 * Whether a query that is answered with an error carried an OPT record (and its DO bit): a best
 * effort walk over whatever records read cleanly, so FORMERR and NOTIMP replies carry an OPT
 * whenever the query did.
 */
function findOpt(buf: Buffer, qdcount: number): ErrorOpt | undefined {
  try {
    let offset = 12;
    for (let i = 0; i < qdcount; i++) offset = skipName(buf, offset) + 4;
    const records = buf.readUInt16BE(6) + buf.readUInt16BE(8) + buf.readUInt16BE(10);
    for (let i = 0; i < records && offset < buf.length; i++) {
      offset = skipName(buf, offset);
      if (offset + 10 > buf.length) return undefined;
      if (buf.readUInt16BE(offset) === QTYPE.OPT) {
        const dnssecOk = (buf.readUInt32BE(offset + 4) & 0x8000) !== 0;
        // Its cookie and NSID request too, when its options read cleanly (a malformed COOKIE gets none back).
        try {
          const edns = parseOpt(buf, offset + 10, buf.readUInt16BE(offset + 8), buf.readUInt16BE(offset + 2), buf.readUInt32BE(offset + 4));
          return { dnssecOk, cookie: edns.cookie, nsid: edns.nsid };
        } catch {
          return { dnssecOk };
        }
      }
      offset += 10 + buf.readUInt16BE(offset + 8);
    }
  } catch {
    // nothing more reads cleanly
  }
  return undefined;
}

/** A message's OPT as an error answer needs it (see findOpt), for answers made outside parseQuery (zone transfers, TSIG). */
export function queryOpt(buf: Buffer): ErrorOpt | undefined {
  return buf.length < 12 ? undefined : findOpt(buf, buf.readUInt16BE(4));
}

/** The ECS address as text, zero-filled past the prefix ("192.0.2.0", "2001:db8::"). */
export function subnetAddress(subnet: ClientSubnet): string {
  return subnetText(subnet.family, subnet.address);
}

/** A subnet's address bytes (as sent: only the prefix's octets) as an address, zeros after. */
export function subnetText(family: 1 | 2, address: Uint8Array): string {
  if (family === 1) return `${address[0] ?? 0}.${address[1] ?? 0}.${address[2] ?? 0}.${address[3] ?? 0}`;
  const words = Array.from({ length: 8 }, (_, i) => (((address[i * 2] ?? 0) << 8) | (address[i * 2 + 1] ?? 0)).toString(16));
  return words.join(':').replace(/(^|:)0(:0)+(:|$)/, '::').replace(/:{3,}/, '::');
}
