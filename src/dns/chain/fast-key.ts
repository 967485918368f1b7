// The hot path's look at a query: enough of the header, question and OPT to build a cache key
// without allocating, or `undefined` when the packet needs the full parser (anything unusual).
import { isCookieLength } from '../wire/constants.ts';
import { subnetText } from '../wire/query.ts';

/** Scratch space for one key: the longest name plus type, class and flags. */
const scratch = Buffer.allocUnsafe(512);

export interface FastQuery {
  key: string;
  /** End of the question section. */
  questionEnd: number;
  /** Has an OPT record; its UDP size (0 without). */
  udpSize: number;
  /** A well-formed Client Subnet option: where its data (family onwards) sits in the packet. */
  ecs: FastSubnet | undefined;
  /** A COOKIE option of a valid length: where its data sits (8-octet client cookie, then any server cookie). */
  cookie: { at: number; length: number } | undefined;
}

export interface FastSubnet {
  at: number;
  length: number;
  family: 1 | 2;
  sourcePrefix: number;
}

/** RFC 7871 §6 checks; anything off leaves the packet to the full parser (which answers FORMERR). */
function subnetAt(packet: Buffer, at: number, length: number): FastSubnet | undefined {
  if (length < 4) return undefined;
  const family = packet.readUInt16BE(at);
  const sourcePrefix = packet[at + 2]!;
  if ((family !== 1 && family !== 2) || sourcePrefix > (family === 1 ? 32 : 128)) return undefined;
  const bytes = length - 4;
  if (bytes !== (sourcePrefix + 7) >> 3) return undefined;
  const spare = bytes * 8 - sourcePrefix;
  if (spare > 0 && (packet[at + 4 + bytes - 1]! & ((1 << spare) - 1)) !== 0) return undefined;
  return { at, length, family, sourcePrefix };
}

/**
 * Accepts only the common shape: a standard query, one question, no answer or authority records,
 * and at most one OPT (version 0, at most one well-formed Client Subnet option) right after the
 * question. The subnet is not part of the key: the handler echoes it onto the cached answer.
 */
export function fastKey(packet: Buffer): FastQuery | undefined {
  const len = packet.length;
  if (len < 17 || len > 512) return undefined;
  // QR=0, opcode 0; QDCOUNT 1; ANCOUNT 0; NSCOUNT 0; ARCOUNT 0 or 1.
  if ((packet[2]! & 0xf8) !== 0 || packet[4] !== 0 || packet[5] !== 1) return undefined;
  if (packet[6] !== 0 || packet[7] !== 0 || packet[8] !== 0 || packet[9] !== 0 || packet[10] !== 0) return undefined;
  const arcount = packet[11]!;
  if (arcount > 1) return undefined;

  let offset = 12;
  let k = 0;
  for (;;) {
    if (offset >= len) return undefined;
    const labelLength = packet[offset]!;
    if (labelLength > 63) return undefined;
    scratch[k++] = labelLength;
    offset++;
    if (labelLength === 0) break;
    if (offset + labelLength > len || k + labelLength > 255) return undefined;
    for (let i = 0; i < labelLength; i++) {
      const c = packet[offset + i]!;
      scratch[k++] = c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
    }
    offset += labelLength;
  }
  if (offset + 4 > len) return undefined;
  // QTYPE and QCLASS go into the key as they are.
  scratch[k++] = packet[offset]!;
  scratch[k++] = packet[offset + 1]!;
  scratch[k++] = packet[offset + 2]!;
  scratch[k++] = packet[offset + 3]!;
  const questionEnd = offset + 4;

  let udpSize = 0;
  let flags = 0;
  let ecs: FastSubnet | undefined;
  let cookie: FastQuery['cookie'];
  if (arcount === 1) {
    // OPT: root name, TYPE 41, CLASS = UDP size, TTL = ext-rcode | version | DO | Z, RDLEN, options.
    const o = questionEnd;
    if (o + 11 > len || packet[o] !== 0 || packet[o + 1] !== 0 || packet[o + 2] !== 41) return undefined;
    udpSize = packet.readUInt16BE(o + 3);
    if (packet[o + 5] !== 0 || packet[o + 6] !== 0) return undefined; // extended rcode, version
    const dnssecOk = (packet[o + 7]! & 0x80) !== 0;
    const rdlen = packet.readUInt16BE(o + 9);
    if (o + 11 + rdlen !== len) return undefined;
    for (let p = o + 11; p < len; ) {
      if (p + 4 > len) return undefined;
      const code = packet.readUInt16BE(p);
      const optionLength = packet.readUInt16BE(p + 2);
      if (p + 4 + optionLength > len) return undefined;
      if (code === 8) {
        if (ecs) return undefined;
        ecs = subnetAt(packet, p + 4, optionLength);
        if (!ecs) return undefined;
      } else if (code === 3) {
        // NSID (RFC 5001): answered on the full path, which adds this server's identifier.
        return undefined;
      } else if (code === 10) {
        if (cookie || !isCookieLength(optionLength)) return undefined;
        cookie = { at: p + 4, length: optionLength };
      }
      p += 4 + optionLength;
    }
    flags = 1 | (dnssecOk ? 2 : 0);
  } else if (questionEnd !== len) {
    return undefined;
  }
  scratch[k++] = flags;
  return { key: scratch.toString('latin1', 0, k), questionEnd, udpSize, ecs, cookie };
}

/** The subnet's address as text, for the locator. */
export function fastSubnetAddress(packet: Buffer, ecs: FastSubnet): string {
  return subnetText(ecs.family, packet.subarray(ecs.at + 4, ecs.at + ecs.length));
}
