// The query chain (src/dns/query-chain.ts): the stages in their order, per-query state in the
// context only, and a stage added after the engine seeing every answer before it is encoded —
// the one made on the full path and, through the cache, every later asker's.
import { describe, expect, it } from 'vitest';
import type { DnsStage } from '../../src/dns/chain/stage.ts';
import { ServerCookies } from '../../src/dns/cookies/server-cookies.ts';
import { DnsMetrics } from '../../src/dns/metrics/dns-metrics.ts';
import { ResponseRateLimiter } from '../../src/dns/rate-limit/rate-limit.ts';
import { QueryHandler } from '../../src/dns/server/handler.ts';
import { fixtureZone, indexWith } from '../helpers/dns-fixture.ts';
import { decode, dns2Query } from '../helpers/dns2-packets.ts';

const client = { address: '127.0.0.1' };

/** A query with an OPT carrying a COOKIE option (client cookie, and a server cookie when given). */
function withCookie(name: string, id: number, cookie: Buffer): Buffer {
  const base = dns2Query(name, 1, { id });
  const option = Buffer.alloc(4 + cookie.length);
  option.writeUInt16BE(10, 0);
  option.writeUInt16BE(cookie.length, 2);
  cookie.copy(option, 4);
  const opt = Buffer.alloc(11);
  opt.writeUInt16BE(41, 1);
  opt.writeUInt16BE(1232, 3);
  opt.writeUInt16BE(option.length, 9);
  const out = Buffer.concat([base, opt, option]);
  out.writeUInt16BE(1, 10);
  return out;
}

describe('query chain', () => {
  it('runs the stages in the order query-chain.ts names', () => {
    const handler = new QueryHandler(indexWith([fixtureZone()]), new DnsMetrics());
    expect(handler.stages).toEqual(['cookies', 'rate-limit', 'transfers', 'metrics', 'answer-cache', 'engine', 'signer']);
  });

  it('a stage after the engine sees each answer before encoding, and the cache keeps what it made', () => {
    const seen: string[] = [];
    const stamp: DnsStage = {
      name: 'stamp',
      cached: null,
      full(ctx, next) {
        next(ctx);
        seen.push(ctx.spec!.question!.query.qname);
        // What a signer does: add to the answer; the engine encodes it after.
        ctx.spec!.additional = [...ctx.spec!.additional, { name: 'stamp.example.org', type: 16, ttl: 1, rdata: [{ type: 16, strings: [Buffer.from('stamped')] }] } as never];
      },
    };
    const handler = new QueryHandler(indexWith([fixtureZone()]), new DnsMetrics(), { rewrite: (stages) => [...stages, stamp] });
    expect(handler.stages.at(-1)).toBe('stamp');
    for (let id = 1; id <= 3; id++) {
      const answer = decode(handler.handle(dns2Query('www.example.org', 1, { id }), 'udp', client)!);
      expect(answer.header.id).toBe(id);
      expect(answer.additionals.some((r: { name: string }) => r.name === 'stamp.example.org'), `query ${id}`).toBe(true);
    }
    // Made once on the full path; the two later askers got the cached copy of what it made.
    expect(seen).toEqual(['www.example.org']);
  });

  it('keeps no per-query state between queries: a valid cookie exempts only its own query from the rate limit', () => {
    const cookies = new ServerCookies(Buffer.alloc(16, 7));
    const limiter = new ResponseRateLimiter({ rate: 1, slip: 0 });
    const handler = new QueryHandler(indexWith([fixtureZone()]), new DnsMetrics(), { cookies, rateLimiter: limiter });
    const clientCookie = Buffer.from('0102030405060708', 'hex');
    const server = cookies.reply(clientCookie, undefined, client.address).data;
    const valid = withCookie('www.example.org', 1, server);
    const plain = (id: number) => dns2Query('www.example.org', 1, { id });
    // The one response a second the limit allows.
    expect(handler.handle(plain(2), 'udp', client)).toBeDefined();
    for (let i = 0; i < 5; i++) {
      // Each valid-cookie query passes; the plain query right after it does not inherit its proof.
      expect(handler.handle(valid, 'udp', client), `valid ${i}`).toBeDefined();
      expect(handler.handle(plain(10 + i), 'udp', client), `plain ${i}`).toBeUndefined();
    }
    // TCP is never limited.
    expect(handler.handle(plain(99), 'tcp', client)).toBeDefined();
  });
});
