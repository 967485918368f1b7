// Zone transfer responses as DNS messages (RFC 5936 §2.2): the SOA, every RRset, the SOA again,
// spread over messages of at most MESSAGE_BYTES (compression pointers reach 16 KiB), the question
// in the first. An IXFR answer (RFC 1995) is the same frame around the differences. Also the
// single messages a transfer needs: errors and NOTIFY (RFC 1996).
import { CLASS, EDNS_PAYLOAD, QTYPE } from '../wire/constants.ts';
import { writeRdata } from '../wire/rdata.ts';
import { WireWriter } from '../wire/writer.ts';
import type { RData, RRset } from '../zone/types.ts';

const MESSAGE_BYTES = 16_000;
export const OPCODE_NOTIFY = 4;

export interface Question {
  id: number;
  /** The question bytes as asked (name, type, class), echoed in the first message. */
  wire: Buffer;
  qname: string;
}

function header(w: WireWriter, id: number, rcode: number, question: boolean, opcode = 0, aa = true): void {
  w.u16(id);
  w.u16(0x8000 | (opcode << 11) | (aa ? 0x0400 : 0) | rcode);
  w.u16(question ? 1 : 0);
  w.u16(0);
  w.u16(0);
  w.u16(0);
}

function record(w: WireWriter, name: string, type: number, ttl: number, r: RData): void {
  w.name(name);
  w.u16(type);
  w.u16(CLASS.IN);
  w.u32(ttl);
  const lengthAt = w.offset;
  w.u16(0);
  writeRdata(w, r);
  w.setU16(lengthAt, w.offset - lengthAt - 2);
}

/**
 * The messages of a transfer answer: `records` in order (each an owner, type, TTL and one RDATA),
 * packed into as few messages as MESSAGE_BYTES allows, made one at a time as they are asked for.
 */
export function* transferMessageStream(question: Question, records: Iterable<{ set: RRset; rdata: RData }>): Generator<Buffer, void, undefined> {
  let w: WireWriter | undefined;
  let count = 0;
  let first = true;
  for (const { set, rdata } of records) {
    if (w && w.offset > MESSAGE_BYTES) {
      w.setU16(6, count);
      yield w.finish();
      w = undefined;
    }
    if (!w) {
      w = new WireWriter();
      count = 0;
      header(w, question.id, 0, first);
      if (first) w.bytes(question.wire);
      if (first) w.registerName(question.qname, 12, question.wire);
      first = false;
    }
    record(w, set.name, set.type, set.ttl, rdata);
    count++;
  }
  if (w) {
    w.setU16(6, count);
    yield w.finish();
  }
}

/** All the messages of a transfer answer at once (small answers: an IXFR's SOA alone). */
export function transferMessages(question: Question, records: Iterable<{ set: RRset; rdata: RData }>): Buffer[] {
  return [...transferMessageStream(question, records)];
}

/** Each RDATA of each set as one record, in order. */
export function* recordsOf(sets: Iterable<RRset>): Generator<{ set: RRset; rdata: RData }> {
  for (const set of sets) for (const rdata of set.rdata) yield { set, rdata };
}

/** A response with no records: an error (REFUSED, NOTAUTH, FORMERR), the question echoed when there is one. */
export function emptyResponse(id: number, rcode: number, question: Buffer | undefined, opcode = 0, aa = false): Buffer {
  const w = new WireWriter();
  header(w, id, rcode, question !== undefined, opcode, aa);
  if (question) w.bytes(question);
  return w.finish();
}

/**
 * The message with an OPT record added (our payload size, EDNS version 0, the request's DO bit):
 * what a request that had one gets back, refusals included (RFC 6891 §7). Before any TSIG,
 * which must stay the last record.
 */
export function withOpt(message: Buffer, dnssecOk: boolean): Buffer {
  const opt = Buffer.alloc(11);
  opt.writeUInt16BE(QTYPE.OPT, 1);
  opt.writeUInt16BE(EDNS_PAYLOAD, 3);
  opt.writeUInt32BE(dnssecOk ? 0x8000 : 0, 5);
  const out = Buffer.concat([message, opt]);
  out.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return out;
}

/** A NOTIFY request for `zone` with its SOA in the answer (RFC 1996 §3.7: a hint of the serial). */
export function notifyMessage(id: number, zone: string, soa: RRset): Buffer {
  const w = new WireWriter();
  w.u16(id);
  w.u16((OPCODE_NOTIFY << 11) | 0x0400);
  w.u16(1);
  w.u16(1);
  w.u16(0);
  w.u16(0);
  w.name(zone);
  w.u16(QTYPE.SOA);
  w.u16(CLASS.IN);
  record(w, soa.name, QTYPE.SOA, soa.ttl, soa.rdata[0]!);
  return w.finish();
}
