// The bookkeeping behind the shares of a backend address, without sockets: which accounts name an
// address (followed through the edge's state, new domains, changes and departures), one client's
// share across all the domains naming the address, an account's share of an address other accounts
// name too, and the body deadline that extends with the bytes received but never past its maximum.
import { describe, expect, it } from 'vitest';
import { EdgeState } from '../../src/edge/edge-state.ts';
import { backendKey, BackendTenants } from '../../src/edge/backend-tenants.ts';
import { BackendShares, DEFAULT_BACKEND_SHARE } from '../../src/edge/protect/backend-shares.ts';
import { bodyOverdue, DEFAULT_BODY_PACE } from '../../src/edge/protect/body-pace.ts';
import { loadConfig } from '../../src/config.ts';
import { makeZone } from '../helpers/dns-fixture.ts';

const domain = (name: string, ownerId: number, backend: string, failover: string | null = null) => makeZone({ domain: name, ownerId, backend, failover }, []).domain;

describe('backend keys', () => {
  it('spell one backend address one way', () => {
    expect(backendKey('192.0.2.1')).toBe('192.0.2.1');
    expect(backendKey('192.0.2.1:80')).toBe('192.0.2.1');
    expect(backendKey('[::ffff:192.0.2.1]:8080')).toBe('192.0.2.1:8080');
    expect(backendKey('[2001:DB8:0::1]:443')).toBe('[2001:db8::1]:443');
    expect(backendKey('192.0.2.1:8080')).not.toBe(backendKey('192.0.2.1'));
  });
});

describe('which accounts name a backend address', () => {
  it('follows the edge state: new domains, a changed backend, failovers, domains that leave', () => {
    const state = new EdgeState();
    state.apply({ domains: new Map([['victim.example', domain('victim.example', 1, '192.0.2.1')]]) });
    const tenants = BackendTenants.following(state);
    expect(tenants.accounts('192.0.2.1')).toBe(1);
    // Another account's domains naming the same address, spelt otherwise: shared.
    state.apply({ domains: new Map([['a1.example', domain('a1.example', 2, '192.0.2.1:80')], ['a2.example', domain('a2.example', 2, '[::ffff:192.0.2.1]')]]) });
    expect(tenants.accounts('192.0.2.1')).toBe(2);
    // One of its two domains moves away: still shared by the other.
    state.apply({ domains: new Map([['a1.example', domain('a1.example', 2, '198.51.100.7')]]) });
    expect(tenants.accounts('192.0.2.1')).toBe(2);
    expect(tenants.accounts('198.51.100.7')).toBe(1);
    state.apply({ domains: new Map([['a2.example', undefined]]) });
    expect(tenants.accounts('192.0.2.1')).toBe(1);
    // A failover counts: requests go there while the backend is down.
    state.apply({ domains: new Map([['a3.example', domain('a3.example', 3, '203.0.113.5', '192.0.2.1')]]) });
    expect(tenants.accounts('192.0.2.1')).toBe(2);
    // A snapshot that no longer has it.
    state.replace({ domains: [domain('victim.example', 1, '192.0.2.1')], certificates: [], ipLists: [] });
    expect(tenants.accounts('192.0.2.1')).toBe(1);
    expect(tenants.accounts('203.0.113.5')).toBe(0);
  });
});

describe('shares of a backend address', () => {
  const shares = (shared: boolean) => new BackendShares({ ...DEFAULT_BACKEND_SHARE, perClient: 3, perAccount: 5 }, () => shared);

  it("counts one client's requests by backend address, whichever domain they came through", () => {
    const s = shares(false);
    // Three requests through three domains (one account) to one address: the share is full.
    for (let i = 0; i < 3; i++) expect(s.take('192.0.2.1', 2, '198.51.100.9').refused).toBeUndefined();
    expect(s.take('192.0.2.1', 2, '198.51.100.9').refused).toBe('client');
    // Also through another account's domain: it is the same pool.
    expect(s.take('192.0.2.1', 7, '198.51.100.9').refused).toBe('client');
    // Another backend address, another share; another client, its own.
    expect(s.take('192.0.2.2', 2, '198.51.100.9').refused).toBeUndefined();
    expect(s.take('192.0.2.1', 2, '198.51.100.10').refused).toBeUndefined();
  });

  it('counts an IPv6 client by its /64', () => {
    const s = shares(false);
    for (let i = 0; i < 3; i++) expect(s.take('192.0.2.1', 2, `2001:db8:1:2::${i + 1}`).refused).toBeUndefined();
    expect(s.take('192.0.2.1', 2, '2001:db8:1:2:ffff::1').refused).toBe('client');
    expect(s.take('192.0.2.1', 2, '2001:db8:1:3::1').refused).toBeUndefined();
  });

  it("bounds an account's share only where other accounts name the address, and gives slots back once", () => {
    const own = shares(false);
    for (let c = 0; c < 4; c++) for (let i = 0; i < 3; i++) expect(own.take('192.0.2.1', 2, `198.51.100.${c}`).refused).toBeUndefined();
    const s = shares(true);
    const held = [0, 1].flatMap((c) => [0, 1, 2].map(() => s.take('192.0.2.1', 2, `198.51.100.${c}`)));
    expect(held.filter((t) => t.refused === 'account')).toHaveLength(1);
    expect(s.take('192.0.2.1', 2, '198.51.100.5').refused).toBe('account');
    // The other account keeps its own share.
    expect(s.take('192.0.2.1', 1, '203.0.113.1').refused).toBeUndefined();
    const first = held[0]!;
    if (first.refused) throw new Error('the first was taken');
    first.release();
    first.release();
    expect(s.take('192.0.2.1', 2, '198.51.100.5').refused).toBeUndefined();
    expect(s.take('192.0.2.1', 2, '198.51.100.6').refused).toBe('account');
  });
});

describe('the body deadline', () => {
  const options = { ...DEFAULT_BODY_PACE, graceMs: 10_000, minRate: 500, maxMs: 300_000 };

  it('is the grace plus a second per 500 bytes, never past the maximum', () => {
    expect(bodyOverdue(options, 9_000, 0)).toBeUndefined();
    expect(bodyOverdue(options, 10_500, 0)).toBe('slow');
    // 5,000 bytes earned ten seconds more.
    expect(bodyOverdue(options, 19_000, 5000)).toBeUndefined();
    expect(bodyOverdue(options, 21_000, 5000)).toBe('slow');
    // Twice the pace all along: still ended at the maximum.
    expect(bodyOverdue(options, 299_000, 299_000)).toBeUndefined();
    expect(bodyOverdue(options, 300_000, 300_000)).toBe('too-long');
    expect(bodyOverdue({ ...options, maxMs: 0 }, 3_600_000, 3_600_000)).toBeUndefined();
    expect(bodyOverdue({ ...options, minRate: 0 }, 200_000, 0)).toBeUndefined();
  });

  it('is configured with clear errors', () => {
    const base = { PALISADE_DATA_DIR: '/nonexistent-palisade-test' };
    expect(loadConfig(base).edge).toMatchObject({ bodyGraceMs: 10_000, bodyMinRate: 500, bodyMaxMs: 300_000, backendSharePerClient: 64, backendSharePerAccount: 128 });
    expect(loadConfig({ ...base, PALISADE_EDGE_BODY_MAX_MS: '0' }).edge.bodyMaxMs).toBe(0);
    expect(() => loadConfig({ ...base, PALISADE_EDGE_BODY_MAX_MS: '5000' })).toThrow(/PALISADE_EDGE_BODY_MAX_MS=5000: must be 0 \(no maximum\) or at least PALISADE_EDGE_BODY_GRACE_MS \(10000\)/);
    expect(() => loadConfig({ ...base, PALISADE_EDGE_BACKEND_SHARE_PER_ACCOUNT: '0' })).toThrow(/PALISADE_EDGE_BACKEND_SHARE_PER_ACCOUNT=0: must be an integer from 1/);
  });
});
