// Response-rate limiting: past the rate, UDP answers are dropped or slipped (TC=1, no data),
// categories are counted apart, and TCP is never limited.
import { describe, expect, it } from 'vitest';
import { ResponseRateLimiter, slipResponse } from '../../src/dns/rate-limit/rate-limit.ts';
import { dig } from '../helpers/dig.ts';
import { fixtureZone } from '../helpers/dns-fixture.ts';
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
      expect(dns.server.metrics.render()).toMatch(/palisade_dns_rate_limited_total [1-9]/);
    } finally {
      await dns.close();
    }
  });
});
