// The addresses an HTTPS answer carries in ADDITIONAL (RFC 9460 §4.1) are a help, not the answer:
// when they do not fit the client's size they are left out whole, and the answer goes out
// without TC; an answer that does not fit by itself still goes out as TC=1, and referral glue
// still counts as needed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { makeZone } from '../helpers/dns-fixture.ts';
import { startDns, type TestDns } from '../helpers/dns-server.ts';

let dns: TestDns;

beforeAll(async () => {
  dns = await startDns([
    makeZone({ domain: 'fit.example', enabled: false, backend: '198.51.100.7' }, [
      { name: 'www', type: 'HTTPS', value: '1 pool.fit.example alpn=h2,h3' },
      ...Array.from({ length: 40 }, (_, i) => ({ name: 'pool', type: 'A', value: `192.0.2.${i + 1}` })),
      { name: 'big', type: 'HTTPS', value: `1 . ipv6hint=${Array.from({ length: 40 }, (_, i) => `2001:db8::${i + 1}`).join(',')}` },
      // A CNAME into a delegation: the referral that follows keeps AA=1, and its glue is needed.
      { name: 'into', type: 'CNAME', value: 'host.sub.fit.example' },
      ...Array.from({ length: 12 }, (_, i) => ({ name: 'sub', type: 'NS', value: `ns${i + 1}-with-a-long-label.sub.fit.example` })),
      ...Array.from({ length: 12 }, (_, i) => ({ name: `ns${i + 1}-with-a-long-label.sub`, type: 'A', value: `192.0.2.${100 + i}` })),
    ]),
  ]);
});
afterAll(() => dns.close());

describe('HTTPS additional data and the size limit', () => {
  it('without EDNS: the HTTPS answer, no TC, the 40 addresses left out', async () => {
    const r = await dig(dns.port, 'www.fit.example', 'HTTPS', ['+noedns', '+ignore']);
    expect(r.flags).not.toContain('tc');
    expect(r.answer).toHaveLength(1);
    expect(r.additional).toEqual([]);
    expect(Number(/MSG SIZE\s+rcvd: (\d+)/.exec(r.raw)![1])).toBeLessThanOrEqual(512);
  });

  it('with room (EDNS 1232): the addresses come too, on the first and on the cached answer', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await dig(dns.port, 'www.fit.example', 'HTTPS', ['+bufsize=1232']);
      expect(r.flags).not.toContain('tc');
      expect(r.additional.filter((a) => a.type === 'A')).toHaveLength(40);
    }
    const small = await dig(dns.port, 'www.fit.example', 'HTTPS', ['+noedns', '+ignore']);
    expect(small.flags).not.toContain('tc');
    expect(small.additional).toEqual([]);
  });

  it('referral glue after a CNAME is not dropped to fit: TC=1', async () => {
    const full = await dig(dns.port, 'into.fit.example', 'A', ['+tcp']);
    expect(full.additional.length).toBe(12);
    const udp = await dig(dns.port, 'into.fit.example', 'A', ['+noedns', '+ignore']);
    expect(udp.flags).toContain('tc');
  });

  it('an HTTPS answer too big by itself is TC=1, whole over TCP', async () => {
    const udp = await dig(dns.port, 'big.fit.example', 'HTTPS', ['+noedns', '+ignore']);
    expect(udp.flags).toContain('tc');
    expect(udp.answer).toEqual([]);
    const tcp = await dig(dns.port, 'big.fit.example', 'HTTPS', ['+tcp']);
    expect(tcp.answer).toHaveLength(1);
  });
});
