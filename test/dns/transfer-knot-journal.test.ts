// A real Knot secondary (knotd, on loopback) after our IXFR journal has dropped the history it
// would need (issue 37: the journal is bounded in bytes, here small bounds): a change larger than
// the zone's bound, and many changes made while Knot was stopped (SIGSTOP), leave it at a serial
// no longer held; it asks IXFR from there, gets the whole zone in AXFR form (RFC 1995 §4) and
// serves exactly what we do. Another account's zone, changed meanwhile, still goes incrementally.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { freePort, startKnot, type KnotSecondary } from '../helpers/knot-secondary.ts';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const secret = randomBytes(32).toString('base64');
const ZONE_BYTES = 65_536;
const WORKERS = 2;
const LOUD = 'loud.example';
const QUIET = 'quiet.example';
const RECORDS = 20;
let server: RunningServer;
let knot: KnotSecondary;
const keys = new Map<string, string>();

function api(zone: string, method: string, path: string, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': keys.get(zone)!, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A ~3.9 KB TXT value. */
const bigTxt = (seed: string) => `${seed}-`.repeat(4000).slice(0, 3900);

const serial = (r: DigResult) => Number(r.answer.find((a) => a.type === 'SOA')?.data.split(' ')[2]);
const ours = (name: string, type: string) => dig(server.dnsPort, name, type);
const theirs = (name: string, type: string) => dig(knot.port, name, type);
const shape = (r: DigResult) => ({ status: r.status, answer: r.answer.map((a) => `${a.name} ${a.ttl} ${a.type} ${a.data}`).sort() });

async function caughtUp(zone: string, timeoutMs = 60_000): Promise<void> {
  const want = serial(await ours(zone, 'SOA'));
  await until(`knot serving ${zone} at serial ${want}\n${knot.output().slice(-3000)}`, async () => serial(await theirs(zone, 'SOA').catch(() => ({ answer: [] }) as unknown as DigResult)) === want, timeoutMs, 100);
}

/** Runs `change`, then waits until our name servers serve a newer serial of `zone`. */
async function changed(zone: string, change: () => Promise<void>): Promise<void> {
  const before = serial(await ours(zone, 'SOA'));
  await change();
  await until(`our serial of ${zone} moving past ${before}`, async () => serial(await ours(zone, 'SOA')) > before, 30_000, 50);
}

async function sameAnswers(zone: string, names: string[]): Promise<void> {
  for (const name of names) {
    const fqdn = `${name}.${zone}`;
    expect(shape(await theirs(fqdn, 'TXT')), fqdn).toEqual(shape(await ours(fqdn, 'TXT')));
  }
}

async function recordIds(zone: string): Promise<Map<string, number>> {
  const list = (await (await api(zone, 'GET', `/domains/${zone}/dnsrecords`)).json()) as Array<{ id: number; name: string; type: number }>;
  return new Map(list.filter((r) => r.type === 6).map((r) => [r.name, r.id]));
}

/** Our IXFR answer from `from` (dig, signed as the secondary): incremental, or the whole zone in AXFR form. */
async function ixfrForm(zone: string, from: number): Promise<'incremental' | 'whole'> {
  const r = await dig(server.dnsPort, zone, `IXFR=${from}`, ['-y', `hmac-sha256:xfr-key:${secret}`]);
  const types = r.raw.split('\n').flatMap((l) => /^\S+\s+\d+\s+IN\s+(\S+)\s/.exec(l)?.[1] ?? []);
  expect(types[0], r.raw).toBe('SOA');
  return types[1] === 'SOA' ? 'incremental' : 'whole';
}

async function metric(family: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(new RegExp(`^${family} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

beforeAll(async () => {
  const env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_DNS_WORKERS: String(WORKERS),
    PALISADE_DNS_IXFR_ZONE_BYTES: String(ZONE_BYTES),
    PALISADE_DNS_IXFR_ACCOUNT_BYTES: '131072',
    PALISADE_DNS_IXFR_JOURNAL_BYTES: '262144',
  };
  for (const [zone, user] of [[LOUD, 'loud'], [QUIET, 'quiet']]) {
    const created = await runAdminCli(env, ['user', 'create', '--name', user!, '--email', `${user}@example.org`]);
    keys.set(zone!, JSON.parse(created.stdout).key.api_key);
  }
  const knotPort = await freePort();
  const added = await runAdminCli(env, ['secondary', 'add', '--name', 'knot', '--address', '127.0.0.1', '--tsig-key', `hmac-sha256:xfr-key:${secret}`, '--port', String(knotPort), '--no-catalog']);
  expect(added.code, added.stderr).toBe(0);
  server = await startServe(env);
  for (const zone of [LOUD, QUIET]) {
    expect((await api(zone, 'POST', '/domains', { domain: zone, backend: '198.51.100.1' })).status).toBe(201);
    const create = Array.from({ length: RECORDS }, (_, i) => ({ name: `t${i}`, type: 6, value: bigTxt(`v0-${i}`) }));
    expect((await api(zone, 'POST', `/domains/${zone}/dnsrecords/bulk`, { create })).status).toBe(200);
    expect((await api(zone, 'POST', `/domains/${zone}/activatens`)).status).toBe(200);
  }
  knot = await startKnot({ primaryPort: server.dnsPort, key: { name: 'xfr-key', secret }, zones: [LOUD, QUIET], port: knotPort });
  await caughtUp(LOUD);
  await caughtUp(QUIET);
}, 180_000);

afterAll(async () => {
  if (knot?.child.exitCode === null) knot.child.kill('SIGCONT');
  await knot?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

const NAMES = Array.from({ length: RECORDS }, (_, i) => `t${i}`);

describe('a Knot secondary once our IXFR journal has dropped its serial', () => {
  it('a change larger than the zone\'s bound: Knot gets the whole zone for it, then differences again', async () => {
    const ids = await recordIds(LOUD);
    const full = await metric('palisade_dns_ixfr_full_total');
    const ixfr = await metric('palisade_dns_ixfr_total');
    // All 20 records rewritten at once: ~80 KB removed, past the 64 KiB a zone may keep.
    const update = NAMES.map((name, i) => ({ id: ids.get(name)!, value: bigTxt(`bulk-${i}`) }));
    await changed(LOUD, async () => expect((await api(LOUD, 'POST', `/domains/${LOUD}/dnsrecords/bulk`, { update })).status).toBe(200));
    await caughtUp(LOUD);
    await sameAnswers(LOUD, NAMES);
    // Knot asked for the differences (IXFR) and got the whole zone in their place.
    expect(await metric('palisade_dns_ixfr_total')).toBeGreaterThan(ixfr);
    expect(await metric('palisade_dns_ixfr_full_total')).toBeGreaterThan(full);
    // A small change after it is held: Knot gets it as a difference.
    const fullAfter = await metric('palisade_dns_ixfr_full_total');
    const ixfrAfter = await metric('palisade_dns_ixfr_total');
    await changed(LOUD, async () => expect((await api(LOUD, 'PATCH', `/domains/${LOUD}/dnsrecords/${ids.get('t0')!}`, { value: 'small' })).status).toBe(200));
    await caughtUp(LOUD);
    await sameAnswers(LOUD, ['t0']);
    expect(await metric('palisade_dns_ixfr_total')).toBeGreaterThan(ixfrAfter);
    expect(await metric('palisade_dns_ixfr_full_total')).toBe(fullAfter);
  }, 120_000);

  it('many changes while Knot is stopped: it comes back, gets the whole zone of the account whose history went, differences of the other', async () => {
    const loud = await recordIds(LOUD);
    const quiet = await recordIds(QUIET);
    const full = await metric('palisade_dns_ixfr_full_total');
    const loudFrom = serial(await ours(LOUD, 'SOA'));
    const quietFrom = serial(await ours(QUIET, 'SOA'));
    knot.child.kill('SIGSTOP');
    try {
      // The quiet account's one change first (the oldest of all), then ~30 of the loud one's, ~8 KB each.
      expect((await api(QUIET, 'PATCH', `/domains/${QUIET}/dnsrecords/${quiet.get('t3')!}`, { value: bigTxt('quiet-1') })).status).toBe(200);
      for (let i = 0; i < 30; i++) {
        const name = NAMES[i % RECORDS]!;
        expect((await api(LOUD, 'PATCH', `/domains/${LOUD}/dnsrecords/${loud.get(name)!}`, { value: bigTxt(`stopped-${i}`) })).status).toBe(200);
      }
      // Every DNS process has applied them (each keeps its own journal, within its bounds).
      await until('the journal evicting', async () => (await metric('palisade_dns_ixfr_journal_evicted_total')) > 0, 30_000, 100);
    } finally {
      knot.child.kill('SIGCONT');
    }
    await caughtUp(LOUD);
    await caughtUp(QUIET);
    await sameAnswers(LOUD, NAMES);
    await sameAnswers(QUIET, NAMES);
    // Knot's serial of the loud zone is no longer held (it got the whole zone); the quiet
    // account's history is all there.
    expect(await metric('palisade_dns_ixfr_full_total')).toBeGreaterThan(full);
    expect(await ixfrForm(LOUD, loudFrom)).toBe('whole');
    expect(await ixfrForm(QUIET, quietFrom)).toBe('incremental');
    const bytes = await metric('palisade_dns_ixfr_journal_bytes');
    expect(bytes).toBeGreaterThan(0);
    // Each process within its account's bound (two zones' worth at most).
    expect(bytes).toBeLessThanOrEqual(WORKERS * 2 * ZONE_BYTES);
    expect(await metric('palisade_dns_ixfr_journal_entries')).toBeGreaterThan(0);
  }, 180_000);
});
