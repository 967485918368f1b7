// The DS lookup reads the parent's whole DS set: a set too large for one datagram comes truncated
// (TC=1) over UDP and is asked again over TCP. Read from the truncated answer, a set could lack
// our key's DS and pass for "removed", which ends signing while the parent still vouches for it.
// The parent here is a real NSD holding a child delegation with a few DS records or many; and a
// hostile one that truncates every UDP answer, then floods or starves the TCP connection.
import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolverDs } from '../../src/ownership/parent-ds.ts';
import { freePort } from '../helpers/free-port.ts';
import { startNsdPrimary, type NsdPrimary } from '../helpers/nsd-primary.ts';

/** A DS record of the child with a SHA-384 digest (48 octets): key tag `tag`. */
const ds = (tag: number) => `small DS ${tag} 13 4 ${createHash('sha384').update(String(tag)).digest('hex').toUpperCase()}`;

const zone = (name: string, count: number) =>
  ['$ORIGIN parent.test.', '$TTL 300', '@ SOA ns1 hostmaster 1 3600 600 86400 300', '@ NS ns1', 'ns1 A 192.0.2.1', `${name} NS ns1.${name}`, `ns1.${name} A 192.0.2.2`, ...Array.from({ length: count }, (_, i) => ds(1000 + i).replace(/^small/, name)), ''].join('\n');

let nsd: NsdPrimary;
beforeAll(async () => {
  // 3 DS records fit in one datagram; 40 with SHA-384 digests (~2.6 KB) do not fit in 1,232 bytes.
  nsd = await startNsdPrimary({ zones: { 'parent.test': `${zone('small', 3)}${zone('large', 40).split('\n').slice(5).join('\n')}` } });
});
afterAll(() => nsd?.stop());

describe('the parent DS lookup over TCP', () => {
  it('reads a DS set that fits in a datagram', async () => {
    const seen = await resolverDs(`127.0.0.1:${nsd.port}`, 3000)('small.parent.test');
    expect(seen?.ds).toHaveLength(3);
  });

  it('reads the whole of a DS set too large for one datagram (TC=1, then TCP)', async () => {
    const seen = await resolverDs(`127.0.0.1:${nsd.port}`, 3000)('large.parent.test');
    expect(seen?.ds).toHaveLength(40);
    expect(seen!.ds).toContain(ds(1039).replace(/^small DS /, ''));
    expect(seen!.ttl).toBe(300);
  });
});

describe('the parent DS lookup against a hostile parent over TCP', () => {
  it('gives up (nothing definite) on a server that says TC=1, then streams without end or never answers', async () => {
    const port = await freePort();
    // UDP: every answer truncated, so the lookup goes to TCP.
    const udp = createSocket('udp4');
    await new Promise<void>((resolve) => udp.bind(port, '127.0.0.1', resolve));
    udp.on('message', (query, from) => {
      const answer = Buffer.from(query.subarray(0, 12));
      answer.writeUInt16BE(0x8380, 2);
      udp.send(answer, from.port, from.address);
    });
    // TCP: the first connection is sent a length of 65,535 and then 1 MiB of garbage; the next ones nothing at all.
    let connections = 0;
    const tcp = createServer((socket) => {
      socket.on('error', () => undefined);
      if (connections++ === 0) socket.end(Buffer.concat([Buffer.from([0xff, 0xff]), Buffer.alloc(1 << 20, 0x41)]));
    });
    await new Promise<void>((resolve) => tcp.listen(port, '127.0.0.1', resolve));
    try {
      const lookup = resolverDs(`127.0.0.1:${port}`, 1500);
      const started = Date.now();
      expect(await lookup('flood.parent.test')).toBeUndefined();
      expect(await lookup('silent.parent.test')).toBeUndefined();
      // Each bounded by its timeout (1.5 s), not by what the server sends or withholds.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      udp.close();
      tcp.close();
    }
  });
});
