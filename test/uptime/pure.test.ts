// The pure parts of uptime and notifications: measures and percentiles, the health rules
// (majority of nodes, failover, flapping), the uptime windows, conditions, retry delays, and the
// guard that keeps webhooks off our own networks.
import { describe, expect, it } from 'vitest';
import { DOMAIN_DEFAULTS, type DomainState } from '../../src/model/domain.ts';
import type { EdgeNode } from '../../src/model/node.ts';
import { delegatesToUs, isExpiring, isUnserved } from '../../src/notify/conditions.ts';
import { retryDelay } from '../../src/notify/delivery-worker.ts';
import { newestFirstKey } from '../../src/model/event.ts';
import { resolveReceiver } from '../../src/notify/webhook-sender.ts';
import { failoverWanted, FLAP_LIMIT, healthEvents, NODE_SILENT_MS, settle, STABLE_MS, stateOf, withVerdict, type HealthDoc } from '../../src/uptime/health-rules.ts';
import { addSample, bucketOf, emptyMeasure, isMeasure, LATENCY_BOUNDS_MS, mergeInto, quantile } from '../../src/model/uptime-measure.ts';
import { SHOWN } from '../../src/model/uptime-periods.ts';
import { windowOf, windowStart } from '../../src/uptime/uptime-stats.ts';

describe('measures', () => {
  it('puts a time in the first bucket whose bound is not below it', () => {
    expect(bucketOf(0.2)).toBe(0);
    expect(bucketOf(1)).toBe(0);
    expect(bucketOf(1.01)).toBe(1);
    expect(bucketOf(100)).toBe(LATENCY_BOUNDS_MS.indexOf(100));
    expect(bucketOf(10 ** 9)).toBe(LATENCY_BOUNDS_MS.length);
  });

  it('estimates percentiles within the bucket that holds them', () => {
    const h: Record<string, number> = {};
    for (let i = 1; i <= 100; i++) addSample(h, i);
    expect(quantile(h, 0.5)).toBeGreaterThanOrEqual(40);
    expect(quantile(h, 0.5)).toBeLessThanOrEqual(60);
    expect(quantile(h, 0.99)).toBeGreaterThanOrEqual(90);
    expect(quantile(h, 0.99)).toBeLessThanOrEqual(100);
    expect(quantile({}, 0.5)).toBeNull();
    expect(quantile({ [LATENCY_BOUNDS_MS.length]: 3 }, 0.5)).toBe(60_000);
  });

  it('adds measures count by count (downsampling loses no count)', () => {
    const a = { c: 2, u: 1, r: 3, o: 3, ch: { 1: 1 }, rh: { 2: 3 } };
    const b = { c: 1, u: 1, r: 0, o: 0, ch: { 1: 1, 4: 0 }, rh: {} };
    expect(mergeInto(mergeInto(emptyMeasure(), a), b)).toEqual({ c: 3, u: 2, r: 3, o: 3, ch: { 1: 2, 4: 0 }, rh: { 2: 3 } });
  });

  it('accepts only well-formed measures', () => {
    expect(isMeasure({ c: 1, u: 1, r: 0, o: 0, ch: { 3: 1 }, rh: {} })).toBe(true);
    expect(isMeasure({ c: 1, u: 2, r: 0, o: 0, ch: {}, rh: {} })).toBe(false);
    expect(isMeasure({ c: 1, u: 1, r: 0, o: 0, ch: { 99: 1 }, rh: {} })).toBe(false);
    expect(isMeasure({ c: -1, u: 0, r: 0, o: 0, ch: {}, rh: {} })).toBe(false);
    expect(isMeasure({ c: 1, u: 1, r: 0, o: 0, ch: { __proto__: 1 }, rh: [] })).toBe(false);
  });
});

describe('health rules', () => {
  const everyone = () => true;
  const base = { domain: 'h.example', owner: 1 };

  it('takes the majority of the nodes heard from lately; half seeing it down is down', () => {
    const nodes = (states: string[]) => Object.fromEntries(states.map((s, i) => [String(i + 1), { state: s as 'up', since: 0 }]));
    expect(stateOf(nodes(['up', 'up', 'down']), everyone)).toBe('up');
    expect(stateOf(nodes(['up', 'down']), everyone)).toBe('down');
    expect(stateOf(nodes(['failover', 'failover', 'down', 'up']), everyone)).toBe('failover');
    expect(stateOf(nodes(['failover', 'down']), everyone)).toBe('down');
    // A silent node's verdict does not count while others are heard.
    expect(stateOf(nodes(['down', 'up']), (n) => n === 2)).toBe('up');
    expect(stateOf(nodes(['down']), () => false)).toBe('down');
    expect(stateOf({}, everyone)).toBe('up');
  });

  it('tells each change once: down, then recovered; a verdict repeated changes nothing', () => {
    const down = withVerdict(undefined, base, 1, 'down', 1000, everyone)!;
    expect(healthEvents(undefined, down)).toEqual(['backend.down']);
    expect(withVerdict(down, base, 1, 'down', 2000, everyone)).toBeUndefined();
    const up = withVerdict(down, base, 1, 'up', 3000, everyone)!;
    expect(healthEvents(down, up)).toEqual(['backend.recovered']);
    expect(up).toMatchObject({ state: 'up', since: 3000, notified: 'up' });
    const failover = withVerdict(up, base, 1, 'failover', 4000, everyone)!;
    expect(healthEvents(up, failover)).toEqual(['backend.down', 'failover.engaged']);
    const both = withVerdict(failover, base, 1, 'down', 5000, everyone)!;
    expect(healthEvents(failover, both)).toEqual(['failover.released']);
    const back = withVerdict(both, base, 1, 'failover', 6000, everyone)!;
    expect(healthEvents(both, back)).toEqual(['failover.engaged']);
    expect(healthEvents(back, withVerdict(back, base, 1, 'up', 7000, everyone)!)).toEqual(['failover.released', 'backend.recovered']);
  });

  it('a flapping backend is told once that it flaps, then once where it settled', () => {
    let doc: HealthDoc | undefined;
    const told: string[] = [];
    let t = 0;
    for (let i = 0; i < 100; i++) {
      t += 10_000;
      const next = withVerdict(doc, base, 1, i % 2 === 0 ? 'down' : 'up', t, everyone)!;
      told.push(...healthEvents(doc, next));
      doc = next;
    }
    expect(told.length).toBeLessThanOrEqual(FLAP_LIMIT + 1);
    expect(told.filter((e) => e === 'backend.flapping')).toHaveLength(1);
    expect(doc!.flapping).toBe(true);
    // Last verdict: up (i = 99). Quiet for less than STABLE_MS: still flapping.
    const early = settle(doc!, t + STABLE_MS - 1, everyone) ?? doc!;
    expect(early.flapping).toBe(true);
    expect(healthEvents(doc, early)).toEqual([]);
    const settled = settle(doc!, t + STABLE_MS, everyone)!;
    expect(settled.flapping).toBe(false);
    const last = healthEvents(doc, settled);
    // Told "down" before flapping began? Then it is told it recovered; otherwise nothing.
    expect(last).toEqual(doc!.notified === 'up' ? [] : ['backend.recovered']);
  });

  it('DNS failover holds while the backend flaps (switches stay few), and follows the state otherwise', () => {
    let doc: HealthDoc | undefined;
    let switches = 0;
    let t = 0;
    for (let i = 0; i < 100; i++) {
      t += 10_000;
      const next = withVerdict(doc, base, 1, i % 2 === 0 ? 'failover' : 'up', t, everyone)!;
      if (failoverWanted(next) !== (doc ? failoverWanted(doc) : false)) switches++;
      doc = next;
    }
    expect(switches).toBeLessThanOrEqual(FLAP_LIMIT + 1);
    expect(failoverWanted(doc!)).toBe(true);
    // Steady for STABLE_MS: back to the backend.
    expect(failoverWanted(settle(doc!, t + STABLE_MS, everyone)!)).toBe(false);
    // Both down while flapping: the failover is no better than the backend.
    expect(failoverWanted({ ...doc!, state: 'down' })).toBe(false);
  });

  it('a node fallen silent stops counting when looked at again', () => {
    const heard = new Map([[1, 0], [2, 0]]);
    const live = (n: number) => 10 * 60_000 - (heard.get(n) ?? 0) < NODE_SILENT_MS;
    let doc = withVerdict(undefined, base, 1, 'down', 0, () => true)!;
    doc = withVerdict(doc, base, 2, 'up', 0, () => true) ?? doc;
    expect(doc.state).toBe('down');
    heard.set(2, 10 * 60_000 - 1000);
    const again = settle(doc, 10 * 60_000, live)!;
    expect(again.state).toBe('up');
    expect(healthEvents(doc, again)).toEqual(['backend.recovered']);
  });
});

describe('uptime windows', () => {
  it('shows the configured number of periods, empty ones as null, none before the domain existed', () => {
    const now = Date.UTC(2026, 10, 23, 12, 30, 15);
    const from = windowStart('minute', now, 0);
    const w = windowOf('minute', [{ period: now - (now % 60_000), node: 1, measure: { c: 4, u: 3, r: 10, o: 10, ch: { 0: 3 }, rh: { 8: 10 } } }], from, now);
    expect(w.periods).toHaveLength(SHOWN.minute);
    expect(w.periods[0]!.availability).toBeNull();
    expect(w.periods.at(-1)).toMatchObject({ availability: 75, checks: 4, checks_failed: 1, requests: 10, requests_failed: 0 });
    expect(w.summary).toMatchObject({ availability: 75, nodes: { 1: { checks: 4 } } });
    expect(windowOf('day', [], windowStart('day', now, now - 3 * 86_400_000), now).periods).toHaveLength(4);
  });
});

describe('conditions and deliveries', () => {
  const domain = (over: Partial<DomainState>): DomainState => ({ ...DOMAIN_DEFAULTS, backend: '192.0.2.1', domain: 'c.example', ownerId: 1, ns_active: true, created: '', updated: '', revision: 1, ...over });
  const node = (id: number, status: EdgeNode['status']): EdgeNode => ({ id, name: `n${id}`, ipv4: '192.0.2.9', ipv6: null, location: 'DE', status });

  it('a protected domain with no active node serving it is unserved', () => {
    expect(isUnserved(domain({}), [])).toBe(true);
    expect(isUnserved(domain({}), [node(1, 'maintenance')])).toBe(true);
    expect(isUnserved(domain({}), [node(1, 'active')])).toBe(false);
    expect(isUnserved(domain({ bind_node: [2] }), [node(1, 'active'), node(2, 'disabled')])).toBe(true);
    expect(isUnserved(domain({ enabled: false }), [])).toBe(false);
  });

  it('delegation: one of our name servers named is enough; case and final dot do not matter', () => {
    expect(delegatesToUs(['NS1.Palisade.example.net.', 'ns.other.example'], ['ns1.palisade.example.net', 'ns2.palisade.example.net'])).toBe(true);
    expect(delegatesToUs(['ns.other.example'], ['ns1.palisade.example.net', 'ns2.palisade.example.net'])).toBe(false);
    expect(delegatesToUs([], ['ns1.palisade.example.net'])).toBe(false);
    expect(isExpiring(new Date(10 * 86_400_000).toISOString(), 0, 14 * 86_400_000)).toBe(true);
    expect(isExpiring(new Date(20 * 86_400_000).toISOString(), 0, 14 * 86_400_000)).toBe(false);
  });

  it('retries wait longer each time, with jitter', () => {
    expect(retryDelay(1000, 1, 0.5)).toBe(1000);
    expect(retryDelay(1000, 2, 0.5)).toBe(2000);
    expect(retryDelay(1000, 4, 0)).toBe(6400);
    expect(retryDelay(1000, 4, 1)).toBe(9600);
  });

  it('event ids sort newest first', () => {
    const keys = [1000, 5000, 3000].map((t) => newestFirstKey(t, 'x'));
    expect([...keys].sort()).toEqual([keys[1], keys[2], keys[0]]);
  });

  it('webhooks go to public addresses only (unless allowed): loopback, private, link-local and names resolving to them are refused', async () => {
    for (const host of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '[::1]', '192.168.0.1', '0.0.0.0', 'localhost']) {
      const result = await resolveReceiver(host, false);
      expect('error' in result && result.error, host).toMatch(/public addresses only/);
    }
    expect(await resolveReceiver('198.51.100.200', true)).toEqual({ address: '198.51.100.200', family: 4 });
    expect(await resolveReceiver('127.0.0.1', true)).toEqual({ address: '127.0.0.1', family: 4 });
    expect(await resolveReceiver('no-such-host.invalid', false)).toMatchObject({ error: expect.stringMatching(/does not resolve/) });
  });
});
