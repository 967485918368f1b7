// Response-rate limiting: past the rate, UDP answers are dropped or slipped (TC=1, no data),
// categories are counted apart, and TCP is never limited. The signing budget: new DNSSEC
// signatures per zone and client network a second (verified clients apart), and what a client
// past it gets from the name server (TC=1 over UDP, SERVFAIL over TCP, nothing cached).
import { describe, expect, it } from 'vitest';
import { prometheusText } from '../../src/common/metrics/prometheus-text.ts';
import { ResponseRateLimiter, slipResponse } from '../../src/dns/rate-limit/rate-limit.ts';
import { SigningBudget } from '../../src/dns/rate-limit/signing-budget.ts';
import { dig } from '../helpers/dig.ts';
import { makeSigningKey } from '../helpers/dnssec-keys.ts';
import { fixtureZone, makeZone } from '../helpers/dns-fixture.ts';
import { decode, dns2Query } from '../helpers/dns2-packets.ts';
import { startDns, udpExchange } from '../helpers/dns-server.ts';

const answer = Buffer.from('000084000001000100000000', 'hex');
const nxdomain = Buffer.from('000084030001000000010000', 'hex');

describe('response-rate limiter', () => {
  it('sends `rate` per second per network and category, then slips every n-th and drops the rest', () => {
    const rrl = new ResponseRateLimiter({ rate: 3, slip: 2 });
    const t = 1_000_000;
    const decisions = Array.from({ length: 9 }, () => rrl.decide('192.0.2.1', answer, t));
    expect(decisions).toEqual(['send', 'send', 'send', 'drop', 'slip', 'drop', 'slip', 'drop', 'slip']);
    // Same /24, other category: its own budget. Another /24: its own budget. Next second: fresh.
    expect(rrl.decide('192.0.2.77', nxdomain, t)).toBe('send');
    expect(rrl.decide('198.51.100.1', answer, t)).toBe('send');
    expect(rrl.decide('192.0.2.1', answer, t + 1000)).toBe('send');
    expect(rrl.decide('2001:db8:0:1::1', answer, t)).toBe('send');
    expect(rrl.limited).toBe(6);
  });

  it('a slip is the header and question with TC=1 and no records', () => {
    const response = dns2Query('www.example.org', 1, { id: 77 });
    response[2] = 0x84;
    response.writeUInt16BE(1, 6);
    const slip = decode(slipResponse(Buffer.concat([response, Buffer.alloc(16)])));
    expect(slip.header).toMatchObject({ id: 77, qr: 1, tc: 1, ancount: 0, nscount: 0, arcount: 0 });
    expect(slip.questions[0].name).toBe('www.example.org');
  });

  it('limits a UDP flood end to end and leaves TCP alone', async () => {
    const dns = await startDns([fixtureZone()], { rateLimit: { rate: 5, slip: 2 } });
    try {
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => udpExchange(dns.port, dns2Query('www.example.org', 1, { id: i }), 300)));
      const answered = results.filter((r) => r && decode(r).header.tc === 0);
      const slipped = results.filter((r) => r && decode(r).header.tc === 1);
      expect(answered.length).toBeGreaterThanOrEqual(5);
      expect(answered.length).toBeLessThanOrEqual(10);
      expect(slipped.length).toBeGreaterThan(5);
      expect(results.filter((r) => r === undefined).length).toBeGreaterThan(5);
      for (let i = 0; i < 10; i++) expect((await dig(dns.port, 'www.example.org', 'A', ['+tcp'])).answer).toHaveLength(1);
      expect(prometheusText(dns.server.metrics.snapshot())).toMatch(/palisade_dns_rate_limited_total [1-9]/);
    } finally {
      await dns.close();
    }
  });
});

describe('signing budget', () => {
  it('allows `rate` fresh signatures a second per zone and per client network, refilled with time', () => {
    const budget = new SigningBudget({ zoneRate: 5, clientRate: 3 });
    const t = 1_000_000;
    // One client: its 3, then refused (by the client bound), whatever the zone.
    expect(Array.from({ length: 4 }, () => budget.take('a.example', '192.0.2.1', false, t))).toEqual([undefined, undefined, undefined, 'client']);
    expect(budget.take('b.example', '192.0.2.200', false, t)).toBe('client');
    // Over TCP or with a valid cookie, the network's budget is another one: spoofing cannot spend it.
    expect(budget.take('b.example', '192.0.2.1', true, t)).toBeUndefined();
    // Other networks share the zone's 5: 2 left.
    expect([budget.take('a.example', '198.51.100.1', false, t), budget.take('a.example', '203.0.113.1', false, t), budget.take('a.example', '2001:db8::1', false, t)]).toEqual([undefined, undefined, 'zone']);
    // Another zone is untouched by the first one's flood.
    expect(budget.take('c.example', '2001:db8::1', false, t)).toBeUndefined();
    expect(budget.refused).toEqual({ zone: 1, client: 2 });
    // A third of a second later: one more for the client (rate 3), as much as a second's worth at most.
    expect(budget.take('c.example', '192.0.2.1', false, t + 340)).toBeUndefined();
    expect(budget.take('c.example', '192.0.2.1', false, t + 340)).toBe('client');
    expect(Array.from({ length: 4 }, () => budget.take('c.example', '192.0.2.1', false, t + 60_000))).toEqual([undefined, undefined, undefined, 'client']);
  });

  it('0 turns a bound off', () => {
    const budget = new SigningBudget({ zoneRate: 0, clientRate: 0 });
    for (let i = 0; i < 10_000; i++) expect(budget.take('a.example', '192.0.2.1', false, 1)).toBeUndefined();
  });
});

describe('signing budget in the name server', () => {
  it('past its network\'s budget, an unverified UDP client gets TC=1 and no records; over TCP it has its own, then SERVFAIL; nothing is cached', async () => {
    const key = makeSigningKey(13);
    const zone = makeZone({ domain: 'signed.example', dnssec: true, signing: { keys: [key] } }, [{ name: 'www', type: 1, value: '192.0.2.10' }]);
    const dns = await startDns([zone], { rateLimit: { rate: 0, slip: 0, signClientRate: 2, signZoneRate: 0 } });
    try {
      // Each nonexistent name needs a new NSEC signature (the SOA's is made once). Asked at once, so
      // the budget (2 a second) cannot refill meanwhile, even on a slow machine.
      const burst = (names: string[], options: string[]) => Promise.all(names.map((name) => dig(dns.port, `${name}.signed.example`, 'A', ['+dnssec', ...options])));
      const udp = await burst(['a', 'b', 'c', 'd', 'e', 'f'], ['+ignore', '+tries=1']);
      const limited = udp.filter((r) => r.flags.includes('tc'));
      expect(limited.length).toBeGreaterThanOrEqual(3);
      for (const r of limited) expect([r.status, r.answer.length, r.authority.length]).toEqual(['NOERROR', 0, 0]);
      expect(udp.filter((r) => r.authority.some((a) => a.type === 'NSEC')).length).toBeGreaterThanOrEqual(1);
      const tcp = await burst(['g', 'h', 'i', 'j', 'k', 'l'], ['+tcp']);
      expect(tcp.filter((r) => r.authority.some((a) => a.type === 'NSEC')).length).toBeGreaterThanOrEqual(1);
      expect(tcp.filter((r) => r.status === 'SERVFAIL').length).toBeGreaterThanOrEqual(3);
      // Not cached: asked again once the budget refills (a second), it is signed.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const again = limited[0]!.question.split(/\s+/)[0]!.replace(/^;/, '');
      expect((await dig(dns.port, again, 'A', ['+dnssec', '+ignore', '+tries=1'])).authority.some((a) => a.type === 'NSEC')).toBe(true);
      expect(prometheusText(dns.server.metrics.snapshot())).toMatch(/palisade_dns_signatures_refused_client_total [2-9]/);
    } finally {
      await dns.close();
    }
  });
});
