// The DNSSEC states as pure functions: what turning off and on again does to a domain's signing,
// which DS at the parent counts as ours (every digest type a parent may use), when a domain turning
// off may stop signing, and the state and next step shown.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ZoneSigningKey } from '../../src/model/dnssec.ts';
import { canonicalNameWire, dnskeyRdata, dsText, makeSigningKey } from '../../src/model/dnssec-keys.ts';
import { dsMatchesKey, MAX_DS_TTL, nextSeen, unsignedFrom } from '../../src/model/dnssec-parent.ts';
import { dnssecState, dnssecStatus, keysWanted, withUnsigning } from '../../src/model/dnssec-status.ts';

const ZONE = 'example.test';
const key: ZoneSigningKey = makeSigningKey(13);
const other: ZoneSigningKey = makeSigningKey(13);
const on = { dnssec: true, signing: { keys: [key] } };

const digest = (hash: string, k: ZoneSigningKey) => createHash(hash).update(canonicalNameWire(ZONE)).update(dnskeyRdata(k)).digest('hex');

describe('turning off and on again', () => {
  it('off while signing: unsigning, the same keys; on again: the same keys, no longer unsigning', () => {
    const off = withUnsigning(on, { ...on, dnssec: false });
    expect(off.signing).toEqual({ keys: [key], unsigning: true });
    expect(dnssecState(ZONE, off, undefined)).toBe('unsigning');
    const back = withUnsigning(off, { ...off, dnssec: true });
    expect(back.signing).toEqual({ keys: [key] });
    expect(keysWanted(off, back)).toBeUndefined();
  });

  it('another algorithm while unsigning is refused (the parent may hold the old key\'s DS); once off it makes a new key', () => {
    const off = withUnsigning(on, { ...on, dnssec: false });
    expect(keysWanted(off, { ...off, dnssec: true, dnssec_algorithm: 15 })).toMatchObject({ refuse: expect.stringContaining('being turned off') });
    expect(keysWanted({ ...off, signing: { keys: [key] } }, { dnssec: true, dnssec_algorithm: 15, signing: { keys: [key] } })).toEqual({ make: 15 });
  });

  it('a domain never signed turns nothing off', () => {
    expect(withUnsigning({ dnssec: false }, { dnssec: false })).toEqual({ dnssec: false });
    expect(dnssecState(ZONE, { dnssec: false, signing: { keys: [key] } }, undefined)).toBe('off');
  });
});

describe('the parent\'s DS', () => {
  it('matches our key by SHA-1, SHA-256 or SHA-384, in any case and grouping; another key\'s or a wrong digest does not', () => {
    expect(dsMatchesKey(ZONE, key, dsText(ZONE, key))).toBe(true);
    expect(dsMatchesKey(ZONE, key, `${key.key_tag} 13 1 ${digest('sha1', key)}`)).toBe(true);
    expect(dsMatchesKey(ZONE, key, `${key.key_tag} 13 4 ${digest('sha384', key).replace(/(.{16})/g, '$1 ')}`)).toBe(true);
    expect(dsMatchesKey(ZONE, key, dsText(ZONE, other))).toBe(false);
    expect(dsMatchesKey(ZONE, key, `${key.key_tag} 13 2 ${'00'.repeat(32)}`)).toBe(false);
    expect(dsMatchesKey(ZONE, key, `${key.key_tag} 13 3 ${digest('sha256', key)}`)).toBe(false);
  });

  it('signing until the parent is seen; waiting_for_ds without our DS (or with another); secure with it', () => {
    expect(dnssecState(ZONE, on, undefined)).toBe('signing');
    const at = new Date().toISOString();
    expect(dnssecState(ZONE, on, nextSeen(undefined, undefined, at, undefined, 'no resolver'))).toBe('signing');
    expect(dnssecState(ZONE, on, nextSeen(undefined, { ds: [], ttl: 0 }, at, 'parent'))).toBe('waiting_for_ds');
    const foreign = nextSeen(undefined, { ds: [dsText(ZONE, other)], ttl: 60 }, at, 'parent');
    expect(dnssecState(ZONE, on, foreign)).toBe('waiting_for_ds');
    expect(dnssecStatus(ZONE, on, foreign).next_step).toContain('matches none');
    expect(dnssecState(ZONE, on, nextSeen(undefined, { ds: [dsText(ZONE, key)], ttl: 60 }, at, 'parent'))).toBe('secure');
  });

  it('turning off ends only once no DS is seen for the last DS TTL; an answer that says nothing changes nothing', () => {
    const t0 = Date.parse('2026-11-29T12:00:00Z');
    const iso = (ms: number) => new Date(t0 + ms).toISOString();
    let seen = nextSeen(undefined, { ds: [dsText(ZONE, key)], ttl: 3600 }, iso(0), 'parent');
    expect(unsignedFrom(seen)).toBeUndefined();
    seen = nextSeen(seen, { ds: [], ttl: 0 }, iso(1000), 'parent');
    expect(unsignedFrom(seen)).toBe(t0 + 1000 + 3600_000);
    seen = nextSeen(seen, undefined, iso(2000), 'parent');
    expect(unsignedFrom(seen)).toBeUndefined();
    seen = nextSeen(seen, { ds: [], ttl: 0 }, iso(3000), 'parent');
    // Gone since the first look that saw it gone.
    expect(unsignedFrom(seen)).toBe(t0 + 1000 + 3600_000);
    // A DS back resets it; a huge TTL is bounded.
    seen = nextSeen(seen, { ds: [dsText(ZONE, key)], ttl: 10 * 86_400 }, iso(4000), 'parent');
    seen = nextSeen(seen, { ds: [], ttl: 0 }, iso(5000), 'parent');
    expect(unsignedFrom(seen)).toBe(t0 + 5000 + MAX_DS_TTL * 1000);
  });
});
