// One query in, one response out (or nothing, for packets we never answer). The cached path
// patches a stored answer; the full path parses, asks the engine, encodes and fills the cache.
// Every exception is caught here: a packet can cost us a SERVFAIL, never the process.
import { answer as answerQuestion } from '../engine/answer.ts';
import type { ClientLocation } from '../engine/types.ts';
import { AnswerCache, locationKey, type CachedAnswer } from '../cache/answer-cache.ts';
import type { DnsMetrics } from './metrics.ts';
import { CLASS, EDNS_OPTION, QTYPE, RCODE } from '../wire/constants.ts';
import { parseQuery, subnetAddress, type Query } from '../wire/query.ts';
import { encodeResponse, udpLimit, type ResponseSpec } from '../wire/response.ts';
import type { ZoneIndex } from '../zone/index.ts';
import { fastKey, fastSubnetAddress } from './fast-key.ts';
import type { ServerCookies } from '../cookies/server-cookies.ts';
import type { TransferResponder } from '../transfer/responder.ts';
import { TransferStream } from '../transfer/stream.ts';

export type Transport = 'udp' | 'tcp';

/** The largest DNS message over TCP (a 16-bit length prefix). */
const TCP_LIMIT = 65_535;

export interface HandlerOptions {
  /** Serve repeated questions from encoded answers (default on; off measures the engine). */
  cache?: boolean;
  cacheEntries?: number;
  /** Where a client is; geo-targeted answers pick their variant by it. */
  locate?: (address: string) => ClientLocation;
  /** Told of internal errors (the query itself was answered SERVFAIL). */
  onError?: (error: unknown) => void;
  /** DNS Cookies (RFC 7873/9018): answer cookies with ours; absent, cookies are ignored. */
  cookies?: ServerCookies;
  /** This name server's identifier, sent to queries that ask (RFC 5001 NSID); absent: none. */
  nsid?: Buffer;
  /** Zone transfers and TSIG (../transfer): given first look at the few messages it wants. */
  transfers?: TransferResponder;
}

export interface ClientAddress {
  address: string;
}

export class QueryHandler {
  private readonly cache: AnswerCache | undefined;

  constructor(
    private readonly index: ZoneIndex,
    private readonly metrics: DnsMetrics,
    private readonly options: HandlerOptions = {},
  ) {
    this.cache = options.cache === false ? undefined : new AnswerCache(options.cacheEntries);
  }

  /**
   * Whether the query last handled carried a valid server cookie: its sender proved it receives
   * our answers at its address, so response-rate limiting may let it through.
   */
  validCookie = false;

  /** The COOKIE option data to answer a query's cookie with. */
  private cookieReply(client: Uint8Array, server: Uint8Array | undefined, address: string): Uint8Array | undefined {
    const cookies = this.options.cookies;
    if (!cookies) return undefined;
    const reply = cookies.reply(client, server, address);
    this.validCookie = reply.valid;
    this.metrics.cookiesIssued++;
    if (reply.valid) this.metrics.cookiesValid++;
    return reply.data;
  }

  /** The response bytes for a query packet, or undefined to send nothing. */
  handle(packet: Buffer, transport: Transport, client: ClientAddress): Buffer | undefined {
    return this.query(packet, transport, client, true);
  }

  /** Like handle(), but a zone transfer's several messages too (TCP): a stream, made a message at a time. */
  handleAll(packet: Buffer, transport: Transport, client: ClientAddress): Buffer | Buffer[] | TransferStream | undefined {
    const transfers = this.options.transfers;
    if (transfers !== undefined && transfers.wants(packet)) return this.transfer(transfers, packet, transport, client);
    return this.query(packet, transport, client, false);
  }

  private transfer(transfers: TransferResponder, packet: Buffer, transport: Transport, client: ClientAddress): Buffer[] | TransferStream | undefined {
    try {
      return transfers.respond(packet, transport, client.address, (bare) => this.query(bare, transport, client, false)) ?? wrap(this.query(packet, transport, client, false));
    } catch (error) {
      this.metrics.internalErrors++;
      this.options.onError?.(error);
      return wrap(servfail(packet));
    }
  }

  /**
   * `transfers`: whether the transfer responder may take the packet (asked only on a cache miss:
   * the cache never holds a transfer's or a signed answer, and hits cost nothing more).
   */
  private query(packet: Buffer, transport: Transport, client: ClientAddress, transfers: boolean): Buffer | undefined {
    const started = performance.now();
    let response: Buffer | undefined;
    this.validCookie = false;
    try {
      response = this.cached(packet, transport, client);
      if (response) {
        // A cache hit's question is the query's: its type sits just before the question's end.
        this.metrics.observe(response, performance.now() - started, transport, (response[this.hitQuestionEnd - 4]! << 8) | response[this.hitQuestionEnd - 3]!);
        return response;
      }
      const responder = this.options.transfers;
      if (transfers && responder !== undefined && responder.wants(packet)) {
        // One message only: a transfer (TCP alone) never comes this way.
        const answer = this.transfer(responder, packet, transport, client);
        if (!(answer instanceof TransferStream)) return answer?.[0];
        answer.close();
        return undefined;
      }
      response = this.full(packet, transport, client);
    } catch (error) {
      this.metrics.internalErrors++;
      response = servfail(packet);
      this.options.onError?.(error);
    }
    if (response) this.metrics.observe(response, performance.now() - started, transport);
    else this.metrics.dropped++;
    return response;
  }

  /** Question end of the last cache hit (saves returning an object per hit). */
  private hitQuestionEnd = 0;

  private cached(packet: Buffer, transport: Transport, client: ClientAddress): Buffer | undefined {
    if (!this.cache) return undefined;
    const fast = fastKey(packet);
    if (!fast) return undefined;
    const ecs = fast.ecs;
    let entry = this.cache.get(fast.key, this.index.generation);
    let scope = 0;
    if (entry && 'byLocation' in entry) {
      // A geo name: the answer for this client's place, by its ECS subnet or else its address.
      const located = ecs !== undefined && ecs.sourcePrefix > 0;
      const where = this.options.locate?.(located ? fastSubnetAddress(packet, ecs) : client.address);
      entry = where && this.cache.get(fast.key + locationKey(where.country, where.continent), this.index.generation);
      if (located && where) scope = where.prefix ?? ecs.sourcePrefix;
    }
    if (!entry || 'byLocation' in entry) return undefined;
    const limit = transport === 'tcp' ? TCP_LIMIT : udpLimit(fast.udpSize === 0 ? undefined : { udpSize: fast.udpSize });
    // Cached answers carry an OPT without options; an ECS query gets its option echoed onto it,
    // and a query with a cookie our cookie.
    // Our cookie reply is always 24 octets (client cookie + a 16-octet server cookie): the size is
    // known before the cookie is made, so a hit that falls back to the full path makes none.
    const withCookie = fast.cookie !== undefined && this.options.cookies !== undefined;
    const ecsEcho = ecs ? 4 + ecs.length : 0;
    const echo = ecsEcho + (withCookie ? 4 + 24 : 0);
    const source = entry.full.length + echo <= limit ? entry.full : entry.truncated;
    if (!source || source.length + echo > limit) return undefined;
    const cookie = withCookie ? this.cookieReply(packet.subarray(fast.cookie!.at, fast.cookie!.at + 8), fast.cookie!.length > 8 ? packet.subarray(fast.cookie!.at + 8, fast.cookie!.at + fast.cookie!.length) : undefined, client.address) : undefined;
    this.metrics.cacheHits++;
    const out = Buffer.allocUnsafe(source.length + echo);
    // Typed-array set and a byte loop, not Buffer.copy: these are a few dozen to a few hundred
    // octets, where Buffer.copy's call into the runtime cost more than the copying (~9% of a hit).
    out.set(source);
    // The asker's ID, RD and CD bits, and its question bytes (letter case) replace the first asker's.
    out[0] = packet[0]!;
    out[1] = packet[1]!;
    out[2] = (out[2]! & 0xfe) | (packet[2]! & 0x01);
    out[3] = (out[3]! & 0xef) | (packet[3]! & 0x10);
    for (let i = 12, end = fast.questionEnd; i < end; i++) out[i] = packet[i]!;
    // The OPT (with no options) is the stored answer's last record: its RDLENGTH ends the buffer.
    if (echo > 0) out.writeUInt16BE(echo, source.length - 2);
    if (ecs) {
      // RFC 7871 §7.2.1: the query's family, source prefix and address, with our scope.
      out.writeUInt16BE(EDNS_OPTION.ECS, source.length);
      out.writeUInt16BE(ecs.length, source.length + 2);
      packet.copy(out, source.length + 4, ecs.at, ecs.at + ecs.length);
      out[source.length + 7] = scope;
    }
    if (cookie) {
      const at = source.length + ecsEcho;
      out.writeUInt16BE(EDNS_OPTION.COOKIE, at);
      out.writeUInt16BE(cookie.length, at + 2);
      out.set(cookie, at + 4);
    }
    this.hitQuestionEnd = fast.questionEnd;
    return out;
  }

  private full(packet: Buffer, transport: Transport, client: ClientAddress): Buffer | undefined {
    const parsed = parseQuery(packet);
    if (parsed.kind === 'drop') return undefined;
    if (parsed.kind === 'error') {
      this.metrics.malformed++;
      const q = parsed.query;
      return encodeResponse({
        id: parsed.id,
        opcode: parsed.opcode,
        rd: parsed.rd,
        cd: false,
        aa: false,
        rcode: parsed.rcode,
        question: q && { packet, query: q },
        answer: [],
        authority: [],
        additional: [],
        // RFC 7873 §5.2: NOTIMP, FORMERR (but for a malformed cookie) and the cookie-only query's
        // NOERROR carry our cookie; RFC 5001: and our NSID when asked.
        edns: parsed.opt && {
          dnssecOk: parsed.opt.dnssecOk,
          cookie: parsed.opt.cookie && this.cookieReply(parsed.opt.cookie.client, parsed.opt.cookie.server, client.address),
          nsid: parsed.opt.nsid ? this.options.nsid : undefined,
        },
      });
    }
    const { query } = parsed;
    const spec = this.respond(packet, query, client);
    const full = encodeResponse(spec);
    const limit = transport === 'tcp' ? TCP_LIMIT : udpLimit(query.edns);
    // Any answer over 512 octets may meet a client that needs a smaller form: make it once, now.
    const truncated = full.length > 512 ? smallerForm(spec) : undefined;
    const fast = this.cache && (spec.cacheable || spec.place) ? fastKey(packet) : undefined;
    if (this.cache && fast) {
      // Stored without the ECS and COOKIE options (the cached path adds each asker's own).
      const plain = spec.edns?.clientSubnet || spec.edns?.cookie || spec.edns?.nsid ? { ...spec, edns: { dnssecOk: spec.edns.dnssecOk } } : undefined;
      const entry: CachedAnswer = {
        full: plain ? encodeResponse(plain) : full,
        truncated: plain && truncated ? smallerForm(plain) : truncated,
        zones: spec.zones,
        generation: this.index.generation,
      };
      if (spec.cacheable) this.cache.set(fast.key, entry);
      else if (spec.place) {
        this.cache.set(fast.key, { byLocation: true, zones: spec.zones, generation: this.index.generation });
        this.cache.set(fast.key + spec.place, entry);
      }
    }
    this.metrics.cacheMisses++;
    return full.length <= limit ? full : truncated;
  }

  private respond(
    packet: Buffer,
    query: Query,
    client: ClientAddress,
  ): ResponseSpec & { cacheable: boolean; zones: CachedAnswer['zones']; place: string | undefined } {
    // One object shape for every outcome keeps this path monomorphic (it runs on every cache miss).
    const spec = {
      id: query.id,
      rd: query.rd,
      cd: query.cd,
      aa: false,
      rcode: RCODE.NOERROR as number,
      question: { packet, query },
      answer: [] as ResponseSpec['answer'],
      authority: [] as ResponseSpec['authority'],
      additional: [] as ResponseSpec['additional'],
      // RFC 7871 §7.2.1: every answer to an ECS query echoes it; SCOPE 0 unless location mattered.
      // RFC 7873 §5.2: every answer to a query with a cookie carries ours.
      edns: query.edns && {
        dnssecOk: query.edns.dnssecOk,
        clientSubnet: query.edns.clientSubnet && { ...query.edns.clientSubnet, scopePrefix: 0 },
        cookie: query.edns.cookie && this.cookieReply(query.edns.cookie.client, query.edns.cookie.server, client.address),
        nsid: query.edns.nsid ? this.options.nsid : undefined,
      },
      zones: [] as CachedAnswer['zones'],
      cacheable: false,
      /** For answers chosen by the source address: the location part of their cache key. */
      place: undefined as string | undefined,
    };
    if (query.edns && query.edns.version !== 0) {
      // RFC 6891 §6.1.3: BADVERS, and our OPT says version 0.
      spec.rcode = RCODE.BADVERS;
      return spec;
    }
    if (query.qclass !== CLASS.IN || query.qtype === QTYPE.AXFR || query.qtype === QTYPE.IXFR) {
      spec.rcode = RCODE.REFUSED;
      return spec;
    }
    if (query.qtype === QTYPE.OPT) {
      spec.rcode = RCODE.FORMERR;
      return spec;
    }
    // The client is where its ECS subnet says (when it gives one), else where the packet came from.
    const ecs = query.edns?.clientSubnet;
    const located = ecs !== undefined && ecs.sourcePrefix > 0;
    const location = this.options.locate ? this.options.locate(located ? subnetAddress(ecs) : client.address) : NOWHERE;
    const result = answerQuestion(this.index, { qname: query.qname, qtype: query.qtype }, location);
    spec.aa = result.aa;
    spec.rcode = result.rcode;
    spec.answer = result.answer;
    spec.authority = result.authority;
    spec.additional = result.additional;
    spec.zones = result.zones;
    // Location-dependent answers are shared only between clients in the same place.
    spec.cacheable = !(result.geoUsed && this.options.locate);
    if (!spec.cacheable) spec.place = locationKey(location.country, location.continent);
    if (spec.edns?.clientSubnet && located && result.geoUsed && this.options.locate) {
      // The answer holds for the database network the client falls in (RFC 7871 §7.2.1); without
      // that knowledge, for the source prefix the client sent.
      spec.edns.clientSubnet.scopePrefix = location.prefix ?? spec.edns.clientSubnet.sourcePrefix;
    }
    return spec;
  }
}

const NOWHERE: ClientLocation = {};

/**
 * The form for a client whose size the full answer exceeds. An authoritative answer's ADDITIONAL
 * (addresses of MX, SRV and SVCB/HTTPS targets) is optional (RFC 2181 §9, RFC 9460 §4.1): left
 * out whole when that fits 512 octets, with no TC. Otherwise, and for referrals (whose glue is
 * needed), the TC=1 form.
 */
function smallerForm(spec: ResponseSpec): Buffer {
  // No AUTHORITY: a referral (after a CNAME it stays AA=1) carries NS glue, which is not optional.
  if (spec.aa && spec.answer.length > 0 && spec.authority.length === 0 && spec.additional.length > 0) {
    const bare = encodeResponse({ ...spec, additional: [] });
    if (bare.length <= 512) return bare;
  }
  return encodeResponse({ ...spec, tc: true });
}

const wrap = (response: Buffer | undefined): Buffer[] | undefined => (response ? [response] : undefined);

/** A SERVFAIL for a packet whose handling failed, echoing what can be echoed safely. */
function servfail(packet: Buffer): Buffer | undefined {
  if (packet.length < 12 || packet[2]! & 0x80) return undefined;
  const out = Buffer.alloc(12);
  packet.copy(out, 0, 0, 2);
  out[2] = 0x80 | (packet[2]! & 0x01);
  out[3] = RCODE.SERVFAIL;
  return out;
}
