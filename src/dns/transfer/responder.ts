// Zone transfers out (AXFR, RFC 5936; IXFR, RFC 1995) to the operator's secondaries, and TSIG
// (RFC 8945) on every message that carries one. Called by the query handler before anything
// else for the few messages that concern it (`wants`: a transfer question, or a TSIG record);
// every other query never reaches this file.
//
// Order of checks, as RFC 8945 §5.2 asks: the TSIG first (unknown key: BADKEY; wrong MAC: BADSIG,
// both unsigned; clock off by more than the fudge: BADTIME, signed), then who may transfer what:
// a transfer needs TCP, a TSIG with the key (name and secret) of a secondary listed at the
// client's address, and a zone that secondary takes; anyone else is REFUSED, as before transfers
// existed. Every answer made here carries an OPT when the request had one (RFC 6891 §7); every
// refusal and TSIG failure is logged (RefusalLog: a line per client per minute).
import { QTYPE, RCODE } from '../wire/constants.ts';
import { queryOpt, skipName, WireFormatError } from '../wire/query.ts';
import type { ZoneIndex } from '../zone/index.ts';
import { isSignedZone, type RRset } from '../zone/types.ts';
import { emptyResponse, recordsOf, transferMessages, transferMessageStream, withOpt, type Question } from './messages.ts';
import type { IxfrJournal } from './journal.ts';
import type { RefusalLog } from './refusal-log.ts';
import type { Secondaries } from './secondaries.ts';
import type { TransferSlots } from './slots.ts';
import { TransferStream } from './stream.ts';
import { findTsig, RCODE_NOTAUTH, readName, sign, TSIG_ERROR, TSIG_TYPE, unsigned, unsignedError, verifyRequest, type TsigKey, type TsigRecord } from './tsig.ts';
import { catalogContent, servedContent, type ZoneContent } from './zone-content.ts';

export interface TransferOptions {
  secondaries: Secondaries;
  index: ZoneIndex;
  /** The catalog zone's name (RFC 9432); absent: none offered. */
  catalog?: string;
  /** The catalog's serial now (see CatalogSerial). */
  catalogSerial?: () => number;
  /** Differences kept for IXFR; absent (or not held from the asked serial): the whole zone (RFC 1995 §4). */
  journal?: IxfrJournal;
  /** Seconds since the epoch. */
  now?: () => number;
  /** Counts for the metrics. */
  counters?: TransferCounters;
  /** Transfers running at once per secondary; absent: no bound. */
  slots?: TransferSlots;
  /** Where refusals and TSIG failures are logged (a line per client per minute). */
  refusals?: RefusalLog;
}

const TSIG_ERROR_NAME: Record<number, string> = Object.fromEntries(Object.entries(TSIG_ERROR).map(([name, code]) => [code, name]));

export class TransferCounters {
  axfr = 0;
  ixfr = 0;
  ixfrFull = 0;
  refused = 0;
  tsigFailures = 0;
}

interface Request {
  id: number;
  opcode: number;
  question?: Question & { qtype: number; qclass: number; end: number };
}

/** Reads the header and question; undefined when the question does not read (the normal path answers). */
function readRequest(packet: Buffer): Request | undefined {
  if (packet.length < 12 || packet[2]! & 0x80) return undefined;
  const id = packet.readUInt16BE(0);
  const opcode = (packet[2]! >> 3) & 0xf;
  if (packet.readUInt16BE(4) !== 1) return { id, opcode };
  try {
    const end = skipName(packet, 12);
    if (end + 4 > packet.length) return { id, opcode };
    const qname = readName(packet, 12);
    return { id, opcode, question: { id, wire: packet.subarray(12, end + 4), qname, qtype: packet.readUInt16BE(end), qclass: packet.readUInt16BE(end + 2), end: end + 4 } };
  } catch {
    return { id, opcode };
  }
}

/** The serial in an IXFR request's authority SOA (RFC 1995 §3), if it reads. */
function clientSerial(packet: Buffer, questionEnd: number): number | undefined {
  try {
    if (packet.readUInt16BE(6) !== 0 || packet.readUInt16BE(8) < 1) return undefined;
    let at = skipName(packet, questionEnd);
    if (packet.readUInt16BE(at) !== QTYPE.SOA) return undefined;
    at += 10;
    at = skipName(packet, at);
    at = skipName(packet, at);
    return packet.readUInt32BE(at);
  } catch {
    return undefined;
  }
}

/** Serial arithmetic (RFC 1982): whether a is newer than b. */
const newer = (a: number, b: number) => a !== b && ((a - b) >>> 0) < 2 ** 31;

export class TransferResponder {
  readonly counters: TransferCounters;
  constructor(private readonly options: TransferOptions) {
    this.counters = options.counters ?? new TransferCounters();
  }

  private now(): number {
    return this.options.now ? this.options.now() : Math.floor(Date.now() / 1000);
  }

  /**
   * Whether this file answers the packet: a transfer question (opcode QUERY), or a message whose
   * last record is a TSIG. Cheap: a query with only an OPT costs a walk over one record.
   */
  wants(packet: Buffer): boolean {
    if (packet.length < 17 || packet[2]! & 0x80) return false;
    try {
      let at = skipName(packet, 12);
      if (at + 4 > packet.length) return false;
      const qtype = packet.readUInt16BE(at);
      if (qtype === QTYPE.AXFR || qtype === QTYPE.IXFR) return ((packet[2]! >> 3) & 0xf) === 0;
      if (packet.readUInt16BE(10) === 0) return false;
      at += 4;
      const records = packet.readUInt16BE(6) + packet.readUInt16BE(8) + packet.readUInt16BE(10);
      let type = 0;
      for (let i = 0; i < records; i++) {
        at = skipName(packet, at);
        if (at + 10 > packet.length) return false;
        type = packet.readUInt16BE(at);
        at += 10 + packet.readUInt16BE(at + 8);
      }
      return type === TSIG_TYPE;
    } catch {
      return false;
    }
  }

  /** Like respond(), with a transfer's messages all made at once (tests, tools). */
  answer(packet: Buffer, transport: 'udp' | 'tcp', client: string, plain: (query: Buffer) => Buffer | undefined): Buffer[] | undefined {
    const answer = this.respond(packet, transport, client, plain);
    return answer instanceof TransferStream ? answer.all() : answer;
  }

  /**
   * The answer to a packet `wants` took: one or more messages, or a transfer's messages to be made
   * one at a time (a stream, which waits for its secondary's slot). `plain` answers a query as the
   * server does without TSIG (the query given without its TSIG record).
   */
  respond(packet: Buffer, transport: 'udp' | 'tcp', client: string, plain: (query: Buffer) => Buffer | undefined): Buffer[] | TransferStream | undefined {
    const request = readRequest(packet);
    if (!request) return undefined;
    const question = request.question?.wire;
    // Every answer made here carries an OPT when the request had one (RFC 6891 §7), refusals too.
    const opt = queryOpt(packet);
    const edns = (message: Buffer) => (opt ? withOpt(message, opt.dnssecOk) : message);
    let tsig: TsigRecord | undefined;
    try {
      tsig = findTsig(packet);
    } catch (error) {
      if (!(error instanceof WireFormatError)) throw error;
      return [edns(emptyResponse(request.id, RCODE.FORMERR, question, request.opcode))];
    }
    const now = this.now();
    const q = request.question;
    let key: TsigKey | undefined;
    if (tsig) {
      const verdict = this.verify(packet, tsig, now);
      if (!verdict.ok) {
        this.counters.tsigFailures++;
        this.options.refusals?.note({ client, kind: 'tsig', reason: TSIG_ERROR_NAME[verdict.error] ?? String(verdict.error), key: tsig.keyName, zone: q?.qname });
        const base = edns(emptyResponse(request.id, RCODE_NOTAUTH, question, request.opcode));
        if (verdict.error === TSIG_ERROR.BADTIME) {
          // §5.2.3: signed, the server's time in Other Data.
          const other = Buffer.alloc(6);
          other.writeUInt16BE(Math.floor(now / 2 ** 32), 0);
          other.writeUInt32BE(now % 2 ** 32, 2);
          return [sign(base, verdict.key!, tsig.timeSigned, { requestMac: tsig.mac, error: TSIG_ERROR.BADTIME, other }).message];
        }
        return [unsignedError(base, tsig, verdict.error, now)];
      }
      key = verdict.key;
    }
    const transfer = q && request.opcode === 0 && (q.qtype === QTYPE.AXFR || q.qtype === QTYPE.IXFR);
    if (!transfer) {
      // A signed query of any other kind (a secondary's SOA query): the usual answer, signed.
      if (!tsig || !key) return undefined;
      // The catalog zone is no zone of the index: its SOA (what a secondary's refresh asks) is ours
      // to give. Only to a query: a NOTIFY (or any other opcode) for it is answered as for any zone.
      if (q && request.opcode === 0 && this.options.catalog !== undefined && q.qname === this.options.catalog && q.qclass === 1 && this.options.secondaries.allows(client, key, q.qname, true)) {
        const soa = this.content(q.qname, true, client, key)!.soa;
        const reply = edns(q.qtype === QTYPE.SOA ? transferMessages(q, recordsOf([soa]))[0]! : emptyResponse(request.id, RCODE.NOERROR, question, 0, true));
        return [sign(reply, key, now, { requestMac: tsig.mac }).message];
      }
      const bare = unsigned(packet, tsig);
      bare.writeUInt16BE(request.id, 0);
      const response = plain(bare);
      return response ? [sign(response, key, now, { requestMac: tsig.mac }).message] : undefined;
    }
    const refuse = (reason: string, rcode: number = RCODE.REFUSED) => {
      this.counters.refused++;
      this.options.refusals?.note({ client, kind: 'refused', reason, zone: q.qname, key: tsig?.keyName });
      const base = edns(emptyResponse(request.id, rcode, question));
      return [tsig && key ? sign(base, key, now, { requestMac: tsig.mac }).message : base];
    };
    const catalog = this.options.catalog !== undefined && q.qname === this.options.catalog;
    if (transport !== 'tcp') return refuse('not over TCP');
    if (!tsig || !key) return refuse('not signed (TSIG)');
    if (q.qclass !== 1) return refuse('class not IN');
    if (!this.options.secondaries.allows(client, key, q.qname, catalog)) return refuse(catalog ? 'the catalog is not offered to a secondary at this address with this key' : 'no secondary at this address with this key takes the zone');
    // Signed zones are not transferred (a secondary could not sign its copy): see README.
    if (!catalog && isSignedZone(this.options.index.get(q.qname))) return refuse('zone is signed (DNSSEC): not transferred');
    const content = this.content(q.qname, catalog, client, key);
    if (!content) return refuse('zone not served', RCODE_NOTAUTH);
    let records: Iterable<RRset>;
    if (q.qtype === QTYPE.IXFR) {
      this.counters.ixfr++;
      const since = clientSerial(packet, q.end);
      if (since === undefined) return refuse("IXFR without the client's SOA", RCODE.FORMERR);
      records = this.ixfr(content, since);
    } else {
      this.counters.axfr++;
      records = this.axfr(content);
    }
    const messages = transferMessageStream(q, recordsOf(records));
    return new TransferStream(messages, key, tsig.mac, () => this.now(), tsig.keyName, this.options.slots);
  }

  /**
   * A message's TSIG checked against every key of its name (a hand-written file may give one name
   * to two secondaries): the key whose MAC matches is who signed it. BADKEY when no key has the name.
   */
  private verify(packet: Buffer, tsig: TsigRecord, now: number): { ok: true; key: TsigKey } | { ok: false; error: number; key?: TsigKey } {
    const keys = this.options.secondaries.keysNamed(tsig.keyName);
    let failure: { ok: false; error: number; key?: TsigKey } = { ok: false, error: TSIG_ERROR.BADKEY };
    for (const key of keys) {
      const verdict = verifyRequest(packet, tsig, key, now);
      if (verdict.ok) return { ok: true, key };
      // BADTIME: the MAC matched this key (answered signed with it); else the first key's error.
      if (verdict.error === TSIG_ERROR.BADTIME || key === keys[0]) failure = { ...verdict, key };
    }
    return failure;
  }

  /** A zone's content; the catalog as the client (at `client`, signing with `key`) may see it: only the zones it may transfer. */
  private content(name: string, catalog: boolean, client: string, key: TsigKey): ZoneContent | undefined {
    if (catalog) {
      const listed = this.options.secondaries.catalogFilter(client, key);
      // The names as they are now (the transfer is sent over time).
      const zones = [...this.options.index.zoneNames()].filter((zone) => listed(zone) && !isSignedZone(this.options.index.get(zone)));
      return catalogContent(name, this.options.catalogSerial?.() ?? 0, () => zones);
    }
    const zone = this.options.index.get(name);
    return zone && servedContent(zone);
  }

  /** The SOA, every other set, the SOA again (RFC 5936 §2.2). */
  private *axfr(content: ZoneContent): Generator<RRset> {
    yield content.soa;
    yield* content.sets();
    yield content.soa;
  }

  private ixfr(content: ZoneContent, since: number): Iterable<RRset> {
    const soa = content.soa;
    // Up to date (or ahead of us): our SOA alone (RFC 1995 §2).
    if (!newer(content.serial, since)) return [soa];
    const steps = this.options.journal?.since(content.apex, since, content.serial);
    if (!steps) {
      // That history is not held: the whole zone, in AXFR form, which RFC 1995 §4 allows.
      this.counters.ixfrFull++;
      return this.axfr(content);
    }
    // RFC 1995 §4: our SOA; per change the old SOA, what went, the new SOA, what came; our SOA.
    const sets: RRset[] = [soa];
    for (const step of steps) sets.push(step.fromSoa, ...step.removed, step.toSoa, ...step.added);
    sets.push(soa);
    return sets;
  }
}
