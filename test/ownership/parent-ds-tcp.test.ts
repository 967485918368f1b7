// The DS lookup reads the parent's whole DS set: a set too large for one datagram comes truncated
// (TC=1) over UDP and is asked again over TCP. Read from the truncated answer, a set could lack
// our key's DS and pass for "removed", which ends signing while the parent still vouches for it.
// The parent here is a real NSD holding a child delegation with a few DS records or many.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolverDs } from '../../src/ownership/parent-ds.ts';
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
