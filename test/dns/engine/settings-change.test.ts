// A change of a domain's settings alone (the feed's head) applied to the records the index
// holds: answers follow the new settings, the records never come again, and rebuilds are bounded
// per zone and per account while the latest settings always land.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { answer } from '../../../src/dns/engine/answer.ts';
import { QTYPE } from '../../../src/dns/wire/constants.ts';
import { ZoneIndex, type RebuildLimits } from '../../../src/dns/zone/index.ts';
import { applyBatch } from '../../../src/dns/zone/apply.ts';
import type { DomainState } from '../../../src/model/domain.ts';
import type { RecordState } from '../../../src/model/record.ts';
import type { Zone } from '../../../src/store/types.ts';
import { addressOf, EDGE_NODES, HOSTMASTER, makeZone, NAMESERVERS } from '../../helpers/dns-fixture.ts';

const UNBOUNDED: RebuildLimits = { zonePerMinute: 1e9, zoneBurst: 1e9, accountMsPerSecond: 1e9, accountBurstMs: 1e9 };

const a = (index: ZoneIndex, qname: string) => answer(index, { qname, qtype: QTYPE.A }, {});
const addresses = (index: ZoneIndex, qname: string) => a(index, qname).answer.flatMap((set) => set.rdata.map(addressOf)).sort();
const serial = (index: ZoneIndex, zone: string) => (answer(index, { qname: zone, qtype: QTYPE.SOA }, {}).answer[0]!.rdata[0] as { serial: number }).serial;

// The index times its builds (budgets, and the 20 ms share of one synchronous step) by the clock
// it is given. Each test gives it one that the test drives: on the real clock, a build preempted
// for 20 ms on a loaded machine (other test files' servers on the same cores) ends the step's share
// and defers the next build, and the test then fails for the machine's load, not the code's.
const FROZEN = () => 0;

function indexOf(zones: Zone[], limits: RebuildLimits = UNBOUNDED, now: () => number = FROZEN): ZoneIndex {
  const index = new ZoneIndex({ nameservers: NAMESERVERS, hostmaster: HOSTMASTER }, limits, now);
  index.replaceAll(zones, EDGE_NODES, 1);
  return index;
}

/** A feeder that counts what it is asked for. */
function feeder(zones: Zone[]) {
  const asked: string[] = [];
  return {
    asked,
    source: (name: string) => {
      asked.push(name);
      return zones.find((z) => z.domain.domain === name);
    },
  };
}

const head = (zone: Zone, change: Partial<DomainState>, revision: number): DomainState => ({ ...zone.domain, ...change, revision });

afterEach(() => vi.useRealTimers());

describe('a settings change applied to the records held', () => {
  const zone = makeZone({ domain: 'set.example', mask: 'www', enabled: true }, [{ name: 'mail', type: 1, value: '192.0.2.9' }, { name: 'shop', type: 6, value: 'hello' }], 5);

  it('rebuilds from the feeder once, then from the records it keeps; answers and serial follow', () => {
    const index = indexOf([zone]);
    const { asked, source } = feeder([zone]);
    expect(addresses(index, 'www.set.example')).toEqual(['192.0.2.101', '192.0.2.102']);
    expect(a(index, 'shop.set.example').rcode).toBe(0);
    const before = index.get('set.example')!;
    expect(index.wantsRecords({ name: 'set.example', head: head(zone, { mask: 'shop' }, 6) })).toBe(true);
    applyBatch(index, { zones: [{ name: 'set.example', head: head(zone, { mask: 'shop' }, 6) }] }, source);
    expect(asked).toEqual(['set.example']);
    expect(before.stale).toBe(true);
    // www no longer protected; shop has the customer's TXT only, so it gets the edges' addresses.
    expect(a(index, 'www.set.example').rcode).toBe(3);
    expect(addresses(index, 'shop.set.example')).toEqual(['192.0.2.101', '192.0.2.102']);
    expect(addresses(index, 'mail.set.example')).toEqual(['192.0.2.9']);
    expect(serial(index, 'set.example')).toBe(6);
    // Protection off: the backend; the records it keeps are enough, the feeder is not asked again.
    expect(index.wantsRecords({ name: 'set.example', head: head(zone, { enabled: false }, 7) })).toBe(false);
    applyBatch(index, { zones: [{ name: 'set.example', head: head(zone, { mask: 'shop', enabled: false }, 7) }] }, source);
    expect(asked).toEqual(['set.example']);
    expect(addresses(index, 'shop.set.example')).toEqual(['198.51.100.1']);
    // Records changed afterwards patch the zone built from the new settings.
    applyBatch(index, { zones: [{ name: 'set.example', delta: { put: [{ id: 50, name: 'api', type: 1, value: '192.0.2.50', ttl: 300, priority: null, target: [] }], del: [] }, revision: 8 }] }, source);
    expect(addresses(index, 'api.set.example')).toEqual(['192.0.2.50']);
    expect(addresses(index, 'shop.set.example')).toEqual(['198.51.100.1']);
    expect(serial(index, 'set.example')).toBe(8);
  });

  it('a change of tags alone after records keeps the serial at the records (nsRevision); a head read after a difference keeps its revision', () => {
    const index = indexOf([zone]);
    const { source } = feeder([zone]);
    // The feed sends settings as they now are, before the differences of its page: a difference
    // older than the settings read does not take the serial back.
    applyBatch(
      index,
      {
        zones: [
          { name: 'set.example', head: { ...head(zone, { mask: 'mail,www' }, 12), nsRevision: 10 } },
          { name: 'set.example', delta: { put: [{ id: 60, name: 'x', type: 1, value: '192.0.2.60', ttl: 300, priority: null, target: [] }], del: [] }, revision: 9 },
        ],
      },
      source,
    );
    expect(serial(index, 'set.example')).toBe(10);
    expect(addresses(index, 'x.set.example')).toEqual(['192.0.2.60']);
  });

  it('deactivation stops serving; activation serves from the feeder\'s records; a zone the feeder lacks is left alone', () => {
    const index = indexOf([zone]);
    const off = makeZone({ domain: 'off.example', ns_active: false }, [{ name: 'www', type: 1, value: '192.0.2.77' }], 3);
    const { asked, source } = feeder([zone, off]);
    const generation = index.generation;
    applyBatch(index, { zones: [{ name: 'set.example', head: head(zone, { ns_active: false }, 6) }] }, source);
    expect(a(index, 'set.example').rcode).toBe(5);
    expect(index.generation).toBeGreaterThan(generation);
    expect(index.wantsRecords({ name: 'off.example', head: head(off, { ns_active: true }, 4) })).toBe(true);
    applyBatch(index, { zones: [{ name: 'off.example', head: head(off, { ns_active: true }, 4) }] }, source);
    expect(addresses(index, 'www.off.example')).toEqual(['192.0.2.77']);
    expect(serial(index, 'off.example')).toBe(4);
    expect(index.applyHead({ ...off.domain, domain: 'gone.example', ns_active: true }, source)).toBe(false);
    expect(a(index, 'gone.example').rcode).toBe(5);
    expect(asked).toEqual(['off.example', 'gone.example']);
  });
});

describe('rebuild budgets', () => {
  const big = (name: string, owner: number, count: number): Zone =>
    makeZone(
      { domain: name, ownerId: owner, mask: 'www' },
      Array.from({ length: count }, (_, i) => ({ name: `t${i}`, type: 6, value: `${i}`.padEnd(200, 'x') })),
      2,
    );

  it('per zone: builds of the whole zone (activation) a burst, then so many a minute, the latest landing when the budget allows; settings of a zone it keeps are applied at once', () => {
    vi.useFakeTimers();
    let clock = 0;
    const zone = big('burst.example', 1, 10);
    const off: Zone = { ...zone, domain: { ...zone.domain, ns_active: false } };
    const index = indexOf([], { zonePerMinute: 6, zoneBurst: 2, accountMsPerSecond: 1e9, accountBurstMs: 1e9 }, () => clock);
    const { asked, source } = feeder([off]);
    const set = (change: Partial<DomainState>, revision: number) => applyBatch(index, { zones: [{ name: 'burst.example', head: head(zone, change, revision) }] }, source);
    set({ ns_active: true, mask: 'a' }, 3);
    set({ ns_active: false }, 4);
    set({ ns_active: true, mask: 'b' }, 5);
    expect(addresses(index, 'b.burst.example')).toHaveLength(2);
    expect(asked).toHaveLength(2);
    // Served, with its records kept: settings apply at once, whatever the zone's budget.
    for (let i = 0; i < 10; i++) set({ ns_active: true, mask: `m${i}` }, 6 + i);
    expect(index.deferredRebuilds).toBe(0);
    expect(addresses(index, 'm9.burst.example')).toHaveLength(2);
    expect(asked).toHaveLength(2);
    // Past the burst, a build of the whole zone waits: not served meanwhile; later changes replace it.
    set({ ns_active: false }, 16);
    set({ ns_active: true, mask: 'c' }, 17);
    set({ ns_active: true, mask: 'd' }, 18);
    expect(index.deferredRebuilds).toBe(1);
    expect(a(index, 'd.burst.example').rcode).toBe(5);
    expect(index.domainOf('burst.example')).toMatchObject({ mask: 'd', revision: 18 });
    // A record changed meanwhile is kept for the build.
    applyBatch(index, { zones: [{ name: 'burst.example', delta: { put: [{ id: 999, name: 'new', type: 1, value: '192.0.2.99', ttl: 300, priority: null, target: [] }], del: [] }, revision: 19 }] }, source);
    // One token every 10 s.
    clock += 9_000;
    vi.advanceTimersByTime(9_000);
    expect(index.deferredRebuilds).toBe(1);
    clock += 1_100;
    vi.advanceTimersByTime(1_100);
    expect(index.deferredRebuilds).toBe(0);
    expect(addresses(index, 'd.burst.example')).toHaveLength(2);
    expect(a(index, 'm9.burst.example').rcode).toBe(3);
    expect(addresses(index, 'new.burst.example')).toEqual(['192.0.2.99']);
    expect(serial(index, 'burst.example')).toBe(19);
  });

  it('per account: one account\'s rebuilds wait for its budget, another account\'s are built at once', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // Every reading of the clock 2 ms later: each build looks like it took 2 ms, more than the
    // account's 1 ms burst and far less than a step's 20 ms share, whatever the machine's load.
    let clock = 0;
    const mine = [big('m1.example', 1, 50), big('m2.example', 1, 50), big('m3.example', 1, 50)];
    const theirs = big('t1.example', 2, 50);
    const index = indexOf([...mine, theirs], { zonePerMinute: 1e9, zoneBurst: 1e9, accountMsPerSecond: 1, accountBurstMs: 1 }, () => (clock += 2));
    const { source } = feeder([...mine, theirs]);
    applyBatch(index, { zones: mine.map((z) => ({ name: z.domain.domain, head: head(z, { mask: 'shop' }, 3) })) }, source);
    // The first build spends the account's budget: the others wait.
    expect(index.deferredRebuilds).toBe(2);
    expect(addresses(index, 'shop.m1.example')).toHaveLength(2);
    expect(a(index, 'shop.m2.example').rcode).toBe(3);
    applyBatch(index, { zones: [{ name: 't1.example', head: head(theirs, { mask: 'shop' }, 3) }] }, source);
    expect(addresses(index, 'shop.t1.example')).toHaveLength(2);
    expect(index.deferredRebuilds).toBe(2);
    // A change of a zone already waiting replaces its settings: nothing is read.
    const asked = (name: string): Zone | undefined => {
      throw new Error(`asked for ${name}`);
    };
    applyBatch(index, { zones: [{ name: 'm3.example', head: head(mine[2]!, { mask: 'api' }, 4) }] }, asked);
    expect(index.domainOf('m3.example')).toMatchObject({ mask: 'api' });
  });

  it('one synchronous step starts rebuilds only while it has spent less than 20 ms: the rest come in steps of their own', () => {
    vi.useFakeTimers();
    // Every reading of the clock 30 ms later: each build looks like it took 30 ms.
    let clock = 0;
    const zones = ['s1.example', 's2.example', 's3.example'].map((name) => big(name, 1, 5));
    const index = indexOf(zones, UNBOUNDED, () => (clock += 30));
    const { source } = feeder(zones);
    applyBatch(index, { zones: zones.map((z) => ({ name: z.domain.domain, head: head(z, { mask: 'shop' }, 3) })) }, source);
    expect(index.deferredRebuilds).toBe(2);
    expect(addresses(index, 'shop.s1.example')).toHaveLength(2);
    expect(a(index, 'shop.s3.example').rcode).toBe(3);
    vi.advanceTimersByTime(1);
    expect(index.deferredRebuilds).toBe(1);
    vi.advanceTimersByTime(10);
    expect(index.deferredRebuilds).toBe(0);
    expect(addresses(index, 'shop.s3.example')).toHaveLength(2);
  });

  it('an activation deferred reads its records when it is built, with the differences that came meanwhile', () => {
    vi.useFakeTimers();
    let clock = 0;
    const off: Zone = makeZone({ domain: 'later.example', ns_active: false, ownerId: 3 }, [{ name: 'www', type: 1, value: '192.0.2.1' }], 2);
    const index = indexOf([], { zonePerMinute: 6, zoneBurst: 1, accountMsPerSecond: 1e9, accountBurstMs: 1e9 }, () => clock);
    const { asked, source } = feeder([off]);
    const on = (active: boolean, revision: number) => applyBatch(index, { zones: [{ name: 'later.example', head: head(off, { ns_active: active }, revision) }] }, source);
    on(true, 3);
    on(false, 4);
    expect(a(index, 'www.later.example').rcode).toBe(5);
    on(true, 5);
    expect(index.deferredRebuilds).toBe(1);
    expect(a(index, 'www.later.example').rcode).toBe(5);
    const record: RecordState = { id: 7, name: 'api', type: 1, value: '192.0.2.7', ttl: 300, priority: null, target: [] };
    applyBatch(index, { zones: [{ name: 'later.example', delta: { put: [record], del: [{ id: 1, name: 'www' }] }, revision: 6 }] }, () => undefined);
    // As the feeder stores it (a name server's local state keeps zones it does not serve).
    off.records = [record];
    off.domain = { ...off.domain, revision: 6 };
    expect(index.domainOf('later.example')).toMatchObject({ ns_active: true, revision: 6 });
    clock += 10_001;
    vi.advanceTimersByTime(10_001);
    expect(addresses(index, 'api.later.example')).toEqual(['192.0.2.7']);
    expect(a(index, 'www.later.example').rcode).toBe(0);
    expect(addresses(index, 'www.later.example')).toEqual(['192.0.2.101', '192.0.2.102']);
    expect(serial(index, 'later.example')).toBe(6);
    expect(asked).toEqual(['later.example', 'later.example']);
    // Toggled while it waits: stops being served at once; deferring reads nothing, the records are
    // read once, when it is built.
    on(false, 7);
    expect(a(index, 'www.later.example').rcode).toBe(5);
    on(true, 8);
    expect(index.deferredRebuilds).toBe(1);
    on(false, 9);
    on(true, 10);
    expect(asked).toEqual(['later.example', 'later.example']);
    clock += 10_001;
    vi.advanceTimersByTime(10_001);
    expect(index.deferredRebuilds).toBe(0);
    expect(asked).toEqual(['later.example', 'later.example', 'later.example']);
    expect(addresses(index, 'api.later.example')).toEqual(['192.0.2.7']);
    expect(serial(index, 'later.example')).toBe(10);
    // Deactivated while it waits, and left so: nothing is built.
    on(false, 11);
    on(true, 12);
    on(false, 13);
    clock += 10_001;
    vi.advanceTimersByTime(10_001);
    expect(index.deferredRebuilds).toBe(0);
    expect(a(index, 'www.later.example').rcode).toBe(5);
    // Removed while waiting: nothing is built.
    on(true, 14);
    on(false, 15);
    on(true, 16);
    applyBatch(index, { zones: [{ name: 'later.example', zone: undefined }] }, source);
    clock += 60_000;
    vi.advanceTimersByTime(60_000);
    expect(index.deferredRebuilds).toBe(0);
    expect(a(index, 'www.later.example').rcode).toBe(5);
  });
});
