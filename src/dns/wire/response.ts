// Encodes responses: header, the question echoed byte for byte (RFC 4343 case), the sections,
// and exactly one OPT when the query had one (RFC 6891 §6.1.1). Truncation is decided here:
// an answer that does not fit the transport's limit goes out as header + question + OPT, TC=1.
import type { RRset } from '../zone/types.ts';
import { EDNS_OPTION, EDNS_PAYLOAD, QTYPE } from './constants.ts';
import type { ClientSubnet, Query } from './query.ts';
import { writeRdata } from './rdata.ts';
import { WireWriter } from './writer.ts';

export interface ResponseEdns {
  dnssecOk: boolean;
  /** ECS to echo: the query's family, source prefix and address, with our scope (RFC 7871 §7.2.1). */
  clientSubnet?: ClientSubnet;
  /** COOKIE option data to send: the client's cookie and our server cookie (RFC 7873). */
  cookie?: Uint8Array;
  /** Our name server identifier, to a query that asked for it (RFC 5001). */
  nsid?: Buffer;
}

export interface ResponseSpec {
  id: number;
  /** Copied from the query (RFC 1035 §4.1.1); 0 = QUERY. */
  opcode?: number;
  rd: boolean;
  cd: boolean;
  aa: boolean;
  tc?: boolean;
  /** Full rcode; values above 15 go into the OPT's extended rcode. */
  rcode: number;
  /** The query packet and its parsed question, to echo; absent when the question was unreadable. */
  question?: { packet: Buffer; query: Query };
  answer: readonly RRset[];
  authority: readonly RRset[];
  additional: readonly RRset[];
  edns?: ResponseEdns;
}

function writeRRset(w: WireWriter, set: RRset): number {
  for (const r of set.rdata) {
    w.name(set.name);
    w.u16(set.type);
    w.u16(1);
    w.u32(set.ttl);
    const lengthAt = w.offset;
    w.u16(0);
    writeRdata(w, r);
    w.setU16(lengthAt, w.offset - lengthAt - 2);
  }
  return set.rdata.length;
}

function writeOpt(w: WireWriter, rcode: number, edns: ResponseEdns): void {
  w.u8(0);
  w.u16(QTYPE.OPT);
  w.u16(EDNS_PAYLOAD);
  w.u32(((rcode >> 4) << 24) | (edns.dnssecOk ? 0x8000 : 0));
  const lengthAt = w.offset;
  w.u16(0);
  const ecs = edns.clientSubnet;
  if (ecs) {
    w.u16(EDNS_OPTION.ECS);
    w.u16(4 + ecs.address.length);
    w.u16(ecs.family);
    w.u8(ecs.sourcePrefix);
    w.u8(ecs.scopePrefix);
    w.bytes(ecs.address);
  }
  if (edns.cookie) {
    w.u16(EDNS_OPTION.COOKIE);
    w.u16(edns.cookie.length);
    w.bytes(edns.cookie);
  }
  if (edns.nsid) {
    w.u16(EDNS_OPTION.NSID);
    w.u16(edns.nsid.length);
    w.bytes(edns.nsid);
  }
  w.setU16(lengthAt, w.offset - lengthAt - 2);
}

const MAX_MESSAGE = 65_535;
/** Room kept for the OPT record (with ECS, COOKIE and NSID options) after the sections. */
const OPT_ROOM = 256;

export function encodeResponse(spec: ResponseSpec): Buffer {
  const w = new WireWriter();
  const truncated = spec.tc === true;
  w.u16(spec.id);
  w.u16(0x8000 | (((spec.opcode ?? 0) & 0xf) << 11) | (spec.aa ? 0x0400 : 0) | (truncated ? 0x0200 : 0) | (spec.rd ? 0x0100 : 0) | (spec.cd ? 0x0010 : 0) | (spec.rcode & 0xf));
  w.u16(spec.question ? 1 : 0);
  w.u16(0);
  w.u16(0);
  w.u16(0);
  if (spec.question) {
    const { packet, query } = spec.question;
    w.bytes(packet.subarray(12, query.questionEnd));
    w.registerName(query.qname, 12, query.qnameWire);
  }
  let additional = 0;
  if (!truncated) {
    let count = 0;
    for (const set of spec.answer) count += writeRRset(w, set);
    w.setU16(6, count);
    count = 0;
    for (const set of spec.authority) count += writeRRset(w, set);
    w.setU16(8, count);
    for (const set of spec.additional) additional += writeRRset(w, set);
    // Larger than any transport can carry (a TCP message is at most 65,535 octets): the TC=1 form
    // is the only answer there is, on TCP as on UDP.
    if (w.offset > MAX_MESSAGE - OPT_ROOM) return encodeResponse({ ...spec, tc: true });
  }
  if (spec.edns) {
    writeOpt(w, spec.rcode, spec.edns);
    additional += 1;
  }
  w.setU16(10, additional);
  return w.finish();
}

/** The UDP size limit for a query: 512 without EDNS, else the client's size within [512, 1232]. */
export function udpLimit(edns: { udpSize: number } | undefined): number {
  if (!edns) return 512;
  return Math.min(Math.max(edns.udpSize, 512), EDNS_PAYLOAD);
}

/**
 * The form for a client whose size the full answer exceeds. An authoritative answer's ADDITIONAL
 * (addresses of MX, SRV and SVCB/HTTPS targets) is optional (RFC 2181 §9, RFC 9460 §4.1): left
 * out whole when that fits 512 octets, with no TC. Otherwise, and for referrals (whose glue is
 * needed), the TC=1 form.
 */
export function smallerForm(spec: ResponseSpec): Buffer {
  // No AUTHORITY: a referral (after a CNAME it stays AA=1) carries NS glue, which is not optional.
  if (spec.aa && spec.answer.length > 0 && spec.authority.length === 0 && spec.additional.length > 0) {
    const bare = encodeResponse({ ...spec, additional: [] });
    if (bare.length <= 512) return bare;
  }
  return encodeResponse({ ...spec, tc: true });
}
