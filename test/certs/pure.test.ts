// The certificate decisions without sockets: which names, when to issue, what stands in the way
// of HTTP-01, how long to wait before a retry, how keys are sealed, and which token an edge gives.
import { describe, expect, it } from 'vitest';
import { certificateNames, dns01Owner, issuanceReason, renewalAt } from '../../src/certs/cert-names.ts';
import { retryDelay } from '../../src/certs/cert-worker.ts';
import { isDue, OrderBudget, pickRuns } from '../../src/certs/fair-share.ts';
import { challengeFor, judgeHttp01, servingNodes, type Lookup } from '../../src/certs/preflight.ts';
import { SecretBox, withOpenKey } from '../../src/certs/secret-box.ts';
import { EdgeState } from '../../src/edge/edge-state.ts';
import type { CertificateState } from '../../src/model/certificate.ts';
import { DOMAIN_DEFAULTS, type DomainState } from '../../src/model/domain.ts';
import type { EdgeNode } from '../../src/model/node.ts';
import type { TaskState } from '../../src/model/task.ts';

const domain = (over: Partial<DomainState> = {}): DomainState => ({
  ...DOMAIN_DEFAULTS,
  domain: 'example.org',
  backend: '198.51.100.1',
  ownerId: 1,
  ns_active: false,
  created: '2026-01-01T00:00:00.000Z',
  updated: '2026-01-01T00:00:00.000Z',
  revision: 1,
  ...over,
});

const cert = (names: string[], notBefore: string, notAfter: string): CertificateState => ({
  domain: 'example.org',
  names,
  cert: '',
  chain: '',
  key: '',
  notBefore,
  notAfter,
  fingerprint: 'f',
  updated: notBefore,
  revision: 1,
});

describe('certificate names and timing', () => {
  it('covers the domain and its mask names, a wildcard for "*"', () => {
    expect(certificateNames(domain({ mask: 'www' }))).toEqual(['example.org', 'www.example.org']);
    expect(certificateNames(domain({ mask: '*' }))).toEqual(['*.example.org', 'example.org']);
    expect(certificateNames(domain({ mask: '*.dev,shop' }))).toEqual(['*.dev.example.org', 'example.org', 'shop.example.org']);
    expect(certificateNames(domain({ mask: '' }))).toEqual(['example.org']);
    expect(dns01Owner('*.example.org')).toBe('_acme-challenge.example.org');
    expect(dns01Owner('www.example.org')).toBe('_acme-challenge.www.example.org');
  });

  it('issues when ssl is on and nothing valid covers the names; renews at two thirds; never otherwise', () => {
    const d = domain({ ssl: true, mask: 'www' });
    const names = ['example.org', 'www.example.org'];
    const c = cert(names, '2026-01-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'); // 90 days
    expect(renewalAt(c)).toBe(Date.parse('2026-03-02T00:00:00.000Z'));
    expect(issuanceReason(domain({ ssl: false }), undefined, Date.now())).toBeUndefined();
    expect(issuanceReason(d, undefined, Date.now())).toBe('new');
    expect(issuanceReason(d, c, Date.parse('2026-03-01T23:59:59.000Z'))).toBeUndefined();
    expect(issuanceReason(d, c, Date.parse('2026-03-02T00:00:00.000Z'))).toBe('renewal');
    expect(issuanceReason(d, cert(['example.org'], c.notBefore, c.notAfter), Date.parse('2026-01-02T00:00:00.000Z'))).toBe('names-changed');
    expect(issuanceReason(domain({ ssl: true, mask: '' }), c, Date.parse('2026-01-02T00:00:00.000Z'))).toBe('names-changed');
    expect(issuanceReason(domain({ ssl: false }), c, Date.parse('2027-01-01T00:00:00.000Z'))).toBeUndefined();
  });

  it('backs off exponentially with jitter, capped at six hours', () => {
    expect(retryDelay(60_000, 1, 0.5)).toBe(60_000);
    expect(retryDelay(60_000, 2, 0.5)).toBe(120_000);
    expect(retryDelay(60_000, 5, 0.5)).toBe(960_000);
    expect(retryDelay(60_000, 40, 0.5)).toBe(6 * 3600_000);
    expect(retryDelay(60_000, 1, 0)).toBe(48_000);
    expect(retryDelay(60_000, 1, 1)).toBeCloseTo(72_000, 6);
  });
});

describe('the check before an HTTP-01 order', () => {
  const nodes: EdgeNode[] = [
    { id: 1, name: 'fra1', ipv4: '192.0.2.10', ipv6: '2001:db8::10', location: 'DE', status: 'active' },
    { id: 2, name: 'ams1', ipv4: '192.0.2.20', ipv6: null, location: 'NL', status: 'active' },
    { id: 3, name: 'old', ipv4: '192.0.2.30', ipv6: null, location: 'NL', status: 'disabled' },
  ];
  const lookups = (entries: Record<string, Lookup>) => new Map(Object.entries(entries));
  const d = domain({ ssl: true, mask: 'www' });

  it('passes when every address of every name is a serving edge', () => {
    expect(judgeHttp01(d, ['example.org', 'www.example.org'], nodes, lookups({ 'example.org': { addresses: ['192.0.2.10', '2001:db8::10'] }, 'www.example.org': { addresses: ['192.0.2.20'] } }))).toEqual([]);
    expect(challengeFor(d)).toBe('http-01');
    expect(challengeFor(domain({ ns_active: true }))).toBe('dns-01');
    expect(servingNodes(domain({ bind_node: [2, 3] }), nodes).map((n) => n.id)).toEqual([2]);
  });

  it('names each name in the way, and why', () => {
    const problems = judgeHttp01(domain({ ssl: true, mask: '*,www,shop,api', bind_node: [1] }), ['*.example.org', 'example.org', 'www.example.org', 'shop.example.org', 'api.example.org'], nodes, lookups({
      'example.org': { addresses: ['192.0.2.10', '203.0.113.9'] },
      'www.example.org': { addresses: ['192.0.2.20'] }, // an edge, but not one bound to the domain
      'shop.example.org': { addresses: [] },
      'api.example.org': { error: 'ETIMEOUT' },
    }));
    expect(problems.map((p) => [p.name, p.type])).toEqual([
      ['*.example.org', 'palisade:wildcard-needs-dns01'],
      ['example.org', 'palisade:points-elsewhere'],
      ['www.example.org', 'palisade:points-elsewhere'],
      ['shop.example.org', 'palisade:no-address'],
      ['api.example.org', 'palisade:lookup-failed'],
    ]);
    // Only the foreign address is named as foreign; the serving edges are listed as the way out.
    expect(problems[1]!.detail).toContain('example.org resolves to 203.0.113.9, which is not an edge node serving the domain (192.0.2.10, 2001:db8::10)');
    expect(judgeHttp01(domain({ enabled: false }), ['example.org'], nodes, lookups({}))[0]!.type).toBe('palisade:dns-only');
    expect(judgeHttp01(d, ['example.org'], [nodes[2]!], lookups({ 'example.org': { addresses: ['192.0.2.30'] } }))[0]!.type).toBe('palisade:no-edge');
  });
});

describe('private keys at rest', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));
  it('seals so that only the same operator key opens, and tampering is detected', () => {
    const sealed = box.seal('-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n');
    expect(SecretBox.isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('PRIVATE');
    expect(box.seal('x')).not.toBe(box.seal('x')); // a new IV each time
    expect(box.open(sealed)).toContain('abc');
    expect(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed)).toThrow(/does not open with PALISADE_SECRET_KEY/);
    // Tamper with the decoded bytes, not the text: a character swapped in the text may be the same
    // character, or land in the last character's unused bits (base64url ignores them), and decode
    // to the same bytes. One bit flipped in each part (IV, tag, cipher text) always changes what GCM
    // authenticates.
    const raw = Buffer.from(sealed.slice('pk1:'.length), 'base64url');
    for (const at of [0, 12, 28, raw.length - 1]) {
      const bytes = Buffer.from(raw);
      bytes[at]! ^= 0x01;
      const tampered = 'pk1:' + bytes.toString('base64url');
      expect(tampered).not.toBe(sealed);
      expect(() => box.open(tampered)).toThrow(/does not open/);
    }
    expect(() => box.open(sealed.slice(0, 'pk1:'.length + 20))).toThrow(/cut short/);
    // A key stored in the clear by an older release reads as it is.
    expect(box.open('-----BEGIN PRIVATE KEY-----')).toBe('-----BEGIN PRIVATE KEY-----');
    expect(() => withOpenKey(undefined, { key: sealed })).toThrow(/sealed: set PALISADE_SECRET_KEY/);
  });
});

describe("an edge's HTTP-01 answers", () => {
  it('answers a token only under its own domain, and only until it expires', () => {
    const state = new EdgeState();
    const expires = new Date(Date.now() + 60_000).toISOString();
    state.apply({ challenges: new Map([['a.example', { domain: 'a.example', tokens: [{ token: 'tok', keyAuthorization: 'tok.thumb' }], expires, updated: expires, revision: 1 }]]) });
    expect(state.challengeAnswer('a.example', 'tok')).toBe('tok.thumb');
    expect(state.challengeAnswer('b.example', 'tok')).toBeUndefined();
    expect(state.challengeAnswer('a.example', 'other')).toBeUndefined();
    expect(state.challengeAnswer('a.example', 'tok', Date.now() + 120_000)).toBeUndefined();
    state.apply({ challenges: new Map([['a.example', undefined]]) });
    expect(state.challengeAnswer('a.example', 'tok')).toBeUndefined();
  });
});

describe('sharing the certificate work between accounts', () => {
  const task = (ownerId: number, domain: string, over: Partial<TaskState> = {}): TaskState => ({
    id: `tk_${domain}`,
    ownerId,
    domain,
    names: [domain],
    reason: 'new',
    status: 'queued',
    challenge: null,
    attempts: 0,
    orders: 0,
    nextAttempt: null,
    lastAttempt: null,
    error: null,
    problems: [],
    certificate: null,
    created: '',
    updated: '',
    ...over,
  });

  it("takes due tasks in turn from each account, a few at most per account, so one account's thousands wait their turn", () => {
    const now = Date.parse('2026-11-23T12:00:00.000Z');
    const big = Array.from({ length: 1000 }, (_, i) => task(1, `big${i}.example`));
    const small = [task(2, 'a.example'), task(3, 'b.example'), task(3, 'c.example', { nextAttempt: '2026-11-23T12:05:00.000Z' }), task(3, 'd.example', { status: 'running' })];
    const picked = pickRuns([...big, ...small], new Set(), [], now, 8, 4).map((t) => t.domain);
    expect(picked).toEqual(['big0.example', 'a.example', 'b.example', 'big1.example', 'd.example', 'big2.example', 'big3.example']);
    // Runs in progress count against their account; running domains are not picked twice.
    expect(pickRuns([...big, ...small], new Set(['a.example']), [1, 1, 1, 1], now, 8, 4).map((t) => t.domain)).toEqual(['b.example', 'd.example']);
  });

  it('takes up a task left running (a stopped process, or an outcome the store could not record) only once the gap since its attempt is over', () => {
    const now = Date.parse('2026-11-23T12:00:00.000Z');
    const left = [
      task(1, 'recent.example', { status: 'running', lastAttempt: '2026-11-23T11:59:30.000Z' }),
      task(1, 'older.example', { status: 'running', lastAttempt: '2026-11-23T11:58:00.000Z' }),
      task(1, 'done.example', { status: 'done' }),
    ];
    expect(pickRuns(left, new Set(), [], now, 8, 4, 60_000).map((t) => t.domain)).toEqual(['older.example']);
    expect(isDue(left[0]!, now + 30_000, 60_000)).toBe(true);
    expect(isDue(left[2]!, now, 0)).toBe(false);
  });

  it('counts orders per account in a sliding hour', () => {
    const budget = new OrderBudget(3);
    const t0 = 1_000_000_000;
    for (const dt of [0, 10, 20]) budget.count(7, t0 + dt);
    expect(budget.waitFor(7, t0 + 30)).toBe(3600_000 - 30);
    expect(budget.waitFor(8, t0 + 30)).toBe(0);
    expect(budget.waitFor(7, t0 + 3600_001)).toBe(0);
  });
});
