// The answer-cache stage. On the cached path it answers a repeated question from the encoded
// answer of the first asker, patched for this one (ID, RD/CD, question case, the ECS option echoed
// with our scope, our cookie), without parsing the query; when it cannot, the full path runs. On
// the full path it keeps what the stages inside made: shared answers under the question, answers
// chosen by the client's place under the question and that place.
import { locationKey, TCP_LIMIT, type QueryContext } from '../chain/context.ts';
import type { DnsStage } from '../chain/stage.ts';
import type { ClientLocation } from '../engine/types.ts';
import type { DnsMetrics } from '../metrics/dns-metrics.ts';
import { EDNS_OPTION } from '../wire/constants.ts';
import { encodeResponse, smallerForm, udpLimit } from '../wire/response.ts';
import type { ZoneIndex } from '../zone/index.ts';
import { fastKey, fastSubnetAddress } from '../chain/fast-key.ts';
import { AnswerCache, type CachedAnswer } from './answer-cache.ts';

export interface AnswerCacheSettings {
  entries?: number;
  /** Where a client is (geo answers are cached per place). */
  locate?: (address: string) => ClientLocation;
  /** Whether queries may carry our cookie (the reply is always 24 octets: room is made for it). */
  cookies: boolean;
  /** Hold the zones answers came from weakly (zones built on demand and dropped: see answer-cache.ts). */
  weakZones?: boolean;
}

/** Our cookie reply's option: 4 octets of header, 8 of client cookie and 16 of server cookie. */
const COOKIE_OPTION = 4 + 24;

export function answerCacheStage(index: ZoneIndex, metrics: DnsMetrics, settings: AnswerCacheSettings): DnsStage {
  const cache = new AnswerCache(settings.entries, settings.weakZones);
  return {
    name: 'answer-cache',
    answersCached: true,
    cached(ctx) {
      const fast = ctx.fast!;
      const { packet } = ctx;
      const ecs = fast.ecs;
      let entry = cache.get(fast.key, index.generation);
      let scope = 0;
      if (entry && 'byLocation' in entry) {
        // A geo name: the answer for this client's place, by its ECS subnet or else its address.
        const located = ecs !== undefined && ecs.sourcePrefix > 0;
        const where = settings.locate?.(located ? fastSubnetAddress(packet, ecs) : ctx.client.address);
        entry = where && cache.get(fast.key + locationKey(where.country, where.continent), index.generation);
        if (located && where) scope = where.prefix ?? ecs.sourcePrefix;
      }
      if (!entry || 'byLocation' in entry) return;
      const limit = ctx.transport === 'tcp' ? TCP_LIMIT : udpLimit(fast.udpSize === 0 ? undefined : { udpSize: fast.udpSize });
      // Cached answers carry an OPT without options; an ECS query gets its option echoed onto it,
      // and a query with a cookie our cookie (made by the cookie stage on the way in).
      const cookie = ctx.cookie?.data;
      const ecsEcho = ecs ? 4 + ecs.length : 0;
      const echo = ecsEcho + (cookie ? COOKIE_OPTION : 0);
      const source = entry.full.length + echo <= limit ? entry.full : entry.truncated;
      if (!source || source.length + echo > limit) return;
      metrics.cacheHits++;
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
      // A hit's question is the query's: its type sits just before the question's end.
      ctx.qtype = (packet[fast.questionEnd - 4]! << 8) | packet[fast.questionEnd - 3]!;
      ctx.response = out;
      ctx.answered = true;
    },
    full(ctx, next) {
      next(ctx);
      keepAnswer(cache, index, ctx);
    },
  };
}

/**
 * What the full path answered, kept for the cached path (after the stages inside have run): a
 * shared answer under the question, one chosen by place under the question and that place.
 */
function keepAnswer(cache: AnswerCache, index: ZoneIndex, ctx: QueryContext): void {
  const { spec, encoded } = ctx;
  if (!spec || !encoded || !(spec.cacheable || spec.place)) return;
  const fast = ctx.fast ?? fastKey(ctx.packet);
  if (!fast) return;
  // Stored without the ECS, COOKIE and NSID options (the cached path adds each asker's own).
  const plain = spec.edns?.clientSubnet || spec.edns?.cookie || spec.edns?.nsid ? { ...spec, edns: { dnssecOk: spec.edns.dnssecOk } } : undefined;
  const zones = cache.hold(spec.zones);
  const entry: CachedAnswer = {
    full: plain ? encodeResponse(plain) : encoded.full,
    truncated: plain && encoded.truncated ? smallerForm(plain) : encoded.truncated,
    zones,
    generation: index.generation,
    expires: spec.expires,
  };
  if (spec.cacheable) cache.set(fast.key, entry);
  else {
    cache.set(fast.key, { byLocation: true, zones, generation: index.generation });
    cache.set(fast.key + spec.place, entry);
  }
}
