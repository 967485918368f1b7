// DNS details the conformance suites look at: a COOKIE with no question (RFC 7873 §5.4), the
// server cookie on NOTIMP and REFUSED answers, and NSID (RFC 5001), each checked with dig; the
// UDP socket's kernel buffers.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsServer } from '../../src/dns/dns-server.ts';
import { DEFAULT_TCP_LIMITS } from '../../src/dns/server/tcp-limits.ts';
import { createLogger } from '../../src/log.ts';
import { dig } from '../helpers/dig.ts';
import { fixtureZone, HOSTMASTER, NAMESERVERS } from '../helpers/dns-fixture.ts';

let server: DnsServer;
let port: number;
const CLIENT_COOKIE = '0102030405060708';

beforeAll(async () => {
  server = new DnsServer({ host: '127.0.0.1', port: 0, nameservers: NAMESERVERS, hostmaster: HOSTMASTER, tcp: DEFAULT_TCP_LIMITS, cookieSecret: Buffer.alloc(16, 7), handler: { nsid: Buffer.from('ns1-test') }, log: createLogger('silent') });
  server.index.putZone(fixtureZone());
  port = await server.listen();
});
afterAll(() => server.close());

const cookieOf = (raw: string) => /COOKIE: ([0-9a-f]+)/.exec(raw)?.[1];

describe('DNS details', () => {
  it('a COOKIE with no question gets NOERROR and a server cookie (RFC 7873 §5.4)', async () => {
    // dig +header-only sends no question section.
    const r = await dig(port, 'example.org', 'SOA', [`+cookie=${CLIENT_COOKIE}`, '+header-only']);
    expect(r.status).toBe('NOERROR');
    expect(cookieOf(r.raw)).toMatch(new RegExp(`^${CLIENT_COOKIE}[0-9a-f]{32}$`));
  });

  it('REFUSED and NOTIMP carry the server cookie', async () => {
    const refused = await dig(port, 'not-ours.example', 'A', [`+cookie=${CLIENT_COOKIE}`]);
    expect(refused.status).toBe('REFUSED');
    expect(cookieOf(refused.raw)).toMatch(new RegExp(`^${CLIENT_COOKIE}[0-9a-f]{32}$`));
    const notimp = await dig(port, 'example.org', 'SOA', [`+cookie=${CLIENT_COOKIE}`, '+opcode=status']);
    expect(notimp.status).toBe('NOTIMP');
    expect(cookieOf(notimp.raw)).toMatch(new RegExp(`^${CLIENT_COOKIE}[0-9a-f]{32}$`));
  });

  it('a question-less query without a cookie is still FORMERR', async () => {
    const r = await dig(port, 'example.org', 'SOA', ['+header-only']);
    expect(r.status).toBe('FORMERR');
  });

  it('NSID: asked, answered with this server\'s identifier (cached answers too); not asked, none', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await dig(port, 'www.example.org', 'A', ['+nsid']);
      expect(r.status).toBe('NOERROR');
      expect(r.raw).toMatch(/NSID: 6e 73 31 2d 74 65 73 74 \("ns1-test"\)/);
    }
    const plain = await dig(port, 'www.example.org', 'A');
    expect(plain.raw).not.toMatch(/NSID/);
    const refused = await dig(port, 'not-ours.example', 'A', ['+nsid']);
    expect(refused.raw).toMatch(/ns1-test/);
  });

  it('asks the kernel for 4 MiB UDP buffers (a queue for busy moments; capped by net.core.rmem_max / wmem_max)', () => {
    const udp = (server as unknown as { udp: import('node:dgram').Socket }).udp;
    const cap = (name: string) => Number(readFileSync(`/proc/sys/net/core/${name}`, 'utf8'));
    // Linux reports twice what it was asked (its bookkeeping included).
    expect(udp.getRecvBufferSize()).toBeGreaterThanOrEqual(2 * Math.min(4 * 1024 * 1024, cap('rmem_max')));
    expect(udp.getSendBufferSize()).toBeGreaterThanOrEqual(2 * Math.min(4 * 1024 * 1024, cap('wmem_max')));
  });
});
