// The engine stage, innermost: the parsed query answered from the zone index (a pure function of
// index, question and client place), then encoded, with its TC=1 form made at once when over 512
// octets. Malformed queries get their error answer here (FORMERR, NOTIMP, BADVERS), with our
// cookie and NSID where the RFCs say. Stages listed after it (a signer) see the answer before it
// is encoded. Not on the cached path.
import { locationKey, TCP_LIMIT, type AnswerSpec, type QueryContext } from '../chain/context.ts';
import type { DnsStage } from '../chain/stage.ts';
import type { DnsMetrics } from '../metrics/dns-metrics.ts';
import { CLASS, QTYPE, RCODE } from '../wire/constants.ts';
import { subnetAddress, type Query } from '../wire/query.ts';
import { encodeResponse, smallerForm, udpLimit } from '../wire/response.ts';
import type { ZoneIndex } from '../zone/index.ts';
import { answer as answerQuestion } from './answer.ts';
import type { ClientLocation } from './types.ts';

export interface EngineSettings {
  /** Where a client is; geo-targeted answers pick their variant by it. */
  locate?: (address: string) => ClientLocation;
  /** This name server's identifier, sent to queries that ask (RFC 5001 NSID); absent: none. */
  nsid?: Buffer;
}

const NOWHERE: ClientLocation = {};

export function engineStage(index: ZoneIndex, metrics: DnsMetrics, settings: EngineSettings): DnsStage {
  return {
    name: 'engine',
    cached: null,
    full(ctx, next) {
      const parsed = ctx.parsed;
      if (parsed.kind === 'drop') return;
      if (parsed.kind === 'error') {
        metrics.malformed++;
        const q = parsed.query;
        ctx.response = encodeResponse({
          id: parsed.id,
          opcode: parsed.opcode,
          rd: parsed.rd,
          cd: false,
          aa: false,
          rcode: parsed.rcode,
          question: q && { packet: ctx.packet, query: q },
          answer: [],
          authority: [],
          additional: [],
          // RFC 7873 §5.2: NOTIMP, FORMERR (but for a malformed cookie) and the cookie-only query's
          // NOERROR carry our cookie; RFC 5001: and our NSID when asked.
          edns: parsed.opt && { dnssecOk: parsed.opt.dnssecOk, cookie: ctx.cookie?.data, nsid: parsed.opt.nsid ? settings.nsid : undefined },
        });
        return;
      }
      const { query } = parsed;
      const spec = respond(index, ctx, query, settings);
      ctx.spec = spec;
      next(ctx);
      const full = encodeResponse(spec);
      const limit = ctx.transport === 'tcp' ? TCP_LIMIT : udpLimit(query.edns);
      // Any answer over 512 octets may meet a client that needs a smaller form: make it once, now.
      const truncated = full.length > 512 ? smallerForm(spec) : undefined;
      ctx.encoded = { full, truncated };
      metrics.cacheMisses++;
      ctx.response = full.length <= limit ? full : truncated;
    },
  };
}

function respond(index: ZoneIndex, ctx: QueryContext, query: Query, settings: EngineSettings): AnswerSpec {
  // One object shape for every outcome keeps this path monomorphic (it runs on every cache miss).
  const spec = {
    id: query.id,
    rd: query.rd,
    cd: query.cd,
    aa: false,
    rcode: RCODE.NOERROR as number,
    question: { packet: ctx.packet, query },
    answer: [] as AnswerSpec['answer'],
    authority: [] as AnswerSpec['authority'],
    additional: [] as AnswerSpec['additional'],
    // RFC 7871 §7.2.1: every answer to an ECS query echoes it; SCOPE 0 unless location mattered.
    // RFC 7873 §5.2: every answer to a query with a cookie carries ours.
    edns: query.edns && {
      dnssecOk: query.edns.dnssecOk,
      clientSubnet: query.edns.clientSubnet && { ...query.edns.clientSubnet, scopePrefix: 0 },
      cookie: query.edns.cookie && ctx.cookie?.data,
      nsid: query.edns.nsid ? settings.nsid : undefined,
    },
    zones: [] as AnswerSpec['zones'],
    cacheable: false,
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
  const location = settings.locate ? settings.locate(located ? subnetAddress(ecs) : ctx.client.address) : NOWHERE;
  const result = answerQuestion(index, { qname: query.qname, qtype: query.qtype }, location);
  spec.aa = result.aa;
  spec.rcode = result.rcode;
  spec.answer = result.answer;
  spec.authority = result.authority;
  spec.additional = result.additional;
  spec.zones = result.zones;
  // Location-dependent answers are shared only between clients in the same place.
  spec.cacheable = !(result.geoUsed && settings.locate);
  if (!spec.cacheable) spec.place = locationKey(location.country, location.continent);
  if (spec.edns?.clientSubnet && located && result.geoUsed && settings.locate) {
    // The answer holds for the database network the client falls in (RFC 7871 §7.2.1); without
    // that knowledge, for the source prefix the client sent.
    spec.edns.clientSubnet.scopePrefix = location.prefix ?? spec.edns.clientSubnet.sourcePrefix;
  }
  return spec;
}
