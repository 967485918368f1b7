// A CSK rollover through a real chain of trust, as dnssec-states.test.ts sets it up: the parent
// zone (`parent.test`, signed) served by a second `palisade serve`, whose DS set for the child
// this test changes in its store; the service under test serving `child.parent.test`, its monitor
// looking at the parent's DS; Unbound validating from the parent's DNSKEY only. From a secure
// zone, `palisade admin domain dnssec-rollover` starts a rollover while Unbound is asked A, SOA,
// DNSKEY and a new nonexistent name every 200 ms all the way through: the new key published
// (CDS lists both) → the new DS added at the parent → the new key signs once the DNSKEY TTL and
// the DS's TTL are over (CDS: the new key only) → the old DS removed → the old key gone once its
// TTL and the zone's are over: `secure` with the new key. Never a SERVFAIL, AD on every answer, no
// validation failure in Unbound's log. Beside it, on a second child (`late.parent.test`), a
// rollover whose new DS reaches the parent late: it stays published (the old key signing) past
// every TTL until then, and the new key signs no sooner than the DS's TTL after. The two run at
// once: each mostly waits out TTLs, and each zone has its own keys, DS set and rollover.
//
// Timings shortened: Unbound keeps nothing longer than CACHE_TTL seconds, and the service is told
// so (PALISADE_DNSSEC_RESOLVER_CACHE_MAX_SECONDS); the parent's DS set lives DS_TTL seconds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { freePort } from '../helpers/free-port.ts';
import { runAdminCli, START_TIMEOUT_MS, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import type { Unbound } from '../helpers/unbound.ts';
import { until } from '../helpers/until.ts';
import { startSignedParent, validatingResolver, type SignedParent } from '../helpers/signed-parent.ts';

const PARENT = 'parent.test';
/** The child of the rollover whose new DS is added at once, and the one whose DS comes late. */
const CHILD = `child.${PARENT}`;
const LATE = `late.${PARENT}`;
const LABELS = ['child', 'late'];
/** The parent's DS set's TTL. */
const DS_TTL = 4;
/**
 * The longest Unbound keeps anything (and what the service is told): the DNSKEY and zone waits.
 * Longer than DS_TTL, so the DNSKEY wait is the one that binds when the new DS is added at once
 * — though not by much: a switch that ignored our waits came at 7.9 s here (the new DS's path:
 * published, seen, its TTL), just under the first rollover's bound; the late rollover's bound on
 * the old key's removal caught it by far (5.1 s of 8).
 */
const CACHE_TTL = 8;

let parent: RunningServer;
let signedParent: SignedParent;
let server: RunningServer;
let unbound: Unbound;
let key: string;
let env: Record<string, string>;
let nsToken: string;
let edgeToken: string;
/** Every answer of the API and the CLI during the test, to grep for private keys. */
const answers: string[] = [];
/** The private keys the name servers' feed carried. */
const privateKeys = new Set<string>();

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  answers.push(text);
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const status = async (zone = CHILD) => (await call('GET', `/domains/${zone}/dnssec`)).body;

async function admin(args: string[]): Promise<any> {
  const run = await runAdminCli(env, args);
  answers.push(run.stdout, run.stderr);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

const feed = async (path: string, token: string) => {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return response.text();
};

/** The private keys the name servers' feed carries for the zone now. */
async function noteFeedKeys(zone = CHILD): Promise<void> {
  const domain = JSON.parse(await feed(`/sync/zones/${zone}`, nsToken)).domain;
  for (const k of domain.signing.keys) privateKeys.add(k.private_key);
}


/** The key tags of the RRSIGs over www's A record, from our name server. */
const signerTags = async (zone = CHILD) =>
  (await dig(server.dnsPort, `www.${zone}`, 'A', ['+dnssec'])).answer.filter((a) => a.type === 'RRSIG').map((a) => Number(a.data.split(/\s+/)[6]));
/** The key tags of the CDS records our name server publishes. */
const cdsTags = async (zone = CHILD) => (await dig(server.dnsPort, zone, 'CDS')).answer.filter((a) => a.type === 'CDS').map((a) => Number(a.data.split(/\s+/)[0])).sort((a, b) => a - b);

/** Asks Unbound A, SOA, DNSKEY and a new nonexistent name every 200 ms until stopped (bounded: 1,000 rounds). */
function keepAsking(zone: string): { stop: () => Promise<Array<{ at: number; what: string; status: string; ad: boolean }>> } {
  const seen: Array<{ at: number; what: string; status: string; ad: boolean }> = [];
  let stopped = false;
  const done = (async () => {
    for (let i = 0; i < 1000 && !stopped; i++) {
      const questions: Array<[string, string]> = [[`www.${zone}`, 'A'], [zone, 'SOA'], [zone, 'DNSKEY'], [`nx${i}.${zone}`, 'A']];
      const results = await Promise.all(questions.map(([name, type]) => unbound.ask(name, type).then((r: DigResult) => ({ what: `${name} ${type}`, status: r.status, ad: r.flags.includes('ad') }))));
      for (const r of results) seen.push({ at: Date.now(), ...r });
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return seen;
    },
  };
}

beforeAll(async () => {
  signedParent = await startSignedParent(PARENT, DS_TTL, LABELS);
  parent = signedParent.server;

  const dnsPort = await freePort();
  unbound = await validatingResolver(PARENT, signedParent, dnsPort, CACHE_TTL, LABELS);
  env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_API_PORT: String(await freePort()),
    PALISADE_DNS_PORT: String(dnsPort),
    PALISADE_DELEGATION_RESOLVER: `127.0.0.1:${unbound.port}`,
    PALISADE_DELEGATION_PARENT_PORT: String(parent.dnsPort),
    PALISADE_MONITOR_WATCH_SECONDS: '1',
    PALISADE_OWNERSHIP_RECHECK_SECONDS: '1',
    PALISADE_OWNERSHIP_RECHECK_MAX_SECONDS: '1',
    PALISADE_DNSSEC_RESOLVER_CACHE_MAX_SECONDS: String(CACHE_TTL),
  };
  key = (await admin(['user', 'create', '--name', 'owner', '--email', 'owner@example.org'])).key.api_key;
  await admin(['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  nsToken = (await admin(['consumer', 'add', '--name', 'ns2'])).token;
  edgeToken = (await admin(['consumer', 'add', '--name', 'edge-e1', '--node', '1'])).token;
  server = await startServe(env);
  await Promise.all([CHILD, LATE].map(async (zone, i) => {
    expect((await call('POST', '/domains', { domain: zone, backend: '198.51.100.1' })).status).toBe(201);
    expect((await call('GET', `/domains/${zone}/activatens`)).status).toBe(200);
    expect((await call('POST', `/domains/${zone}/dnsrecords`, { name: 'www', type: 1, value: '192.0.2.10' })).status).toBe(201);
    // Secure to begin with: the key's DS at the parent, answers validated.
    expect((await call('PATCH', `/domains/${zone}`, { dnssec: true })).status).toBe(200);
    await until(`${zone}: a key`, async () => (await status(zone)).keys.length === 1, 10_000, 100);
    await signedParent.childDs([(await status(zone)).keys[0].ds], LABELS[i]);
    await until(`${zone}: secure`, async () => (await status(zone)).state === 'secure', 20_000, 200);
    await until(`${zone}: answers validated`, async () => (await unbound.ask(`www.${zone}`, 'A')).flags.includes('ad'), 20_000, 200);
  }));
}, START_TIMEOUT_MS * 3);

afterAll(async () => {
  await unbound?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe.concurrent('a CSK rollover, Unbound validating all the way through', () => {
  it('new key published → its DS added → it signs → the old DS removed → the old key gone: never a failure', { timeout: 120_000 }, async () => {
    const before = await status();
    const oldKey = before.keys[0];
    const asking = keepAsking(CHILD);
    const started = Date.now();
    const start = await admin(['domain', 'dnssec-rollover', CHILD]);
    expect(start).toMatchObject({ domain: CHILD, rollover: 'publish' });
    const publishing = await status();
    expect(publishing).toMatchObject({ state: 'rolling_over', rollover: { phase: 'publish', ds_to_remove: [] } });
    expect(publishing.keys.map((k: any) => [k.key_tag, k.role])).toEqual([[oldKey.key_tag, 'active'], [start.key_tag, 'published']]);
    const newDs = publishing.rollover.ds_to_add[0] as string;
    expect(newDs).toBe(start.ds_to_add);
    // The name servers publish the new key (CDS lists both), and sign with the old one only.
    await until('CDS of both keys', async () => (await cdsTags()).length === 2, 10_000, 100);
    expect(await cdsTags()).toEqual([oldKey.key_tag, start.key_tag].sort((a, b) => a - b));
    expect(await signerTags()).toEqual([oldKey.key_tag]);
    await noteFeedKeys();

    // The registrar takes the new DS at once: the DNSKEY TTL is what the switch waits for then.
    await signedParent.childDs([oldKey.ds, newDs]);
    const added = Date.now();
    await until('the retire phase', async () => (await status()).rollover?.phase === 'retire', 30_000, 200);
    const switched = Date.now();
    expect(switched - started, 'the new key signed before the DNSKEY TTL was over').toBeGreaterThanOrEqual(CACHE_TTL * 1000);
    expect(switched - added, 'the new key signed before the new DS\'s TTL was over').toBeGreaterThanOrEqual(DS_TTL * 1000);
    const retiring = await status();
    expect(retiring.keys.map((k: any) => [k.key_tag, k.role])).toEqual([[oldKey.key_tag, 'retiring'], [start.key_tag, 'active']]);
    expect(retiring.rollover).toMatchObject({ ds_to_add: [], ds_to_remove: [oldKey.ds] });
    await until('the new key signing', async () => (await signerTags()).join() === String(start.key_tag), 10_000, 100);
    expect(await cdsTags()).toEqual([start.key_tag]);
    expect((await dig(server.dnsPort, CHILD, 'DNSKEY')).answer.filter((a) => a.type === 'DNSKEY')).toHaveLength(2);
    await noteFeedKeys();

    // The old DS stays at the parent a while: the old key stays published past the zone's TTL.
    await new Promise((r) => setTimeout(r, (CACHE_TTL + 2) * 1000));
    expect((await status()).rollover?.phase).toBe('retire');
    await signedParent.childDs([newDs]);
    const removed = Date.now();
    await until('secure with the new key', async () => (await status()).state === 'secure', 30_000, 200);
    expect(Date.now() - removed, 'the old key removed before the old DS\'s TTL was over').toBeGreaterThanOrEqual(DS_TTL * 1000);
    const done = await status();
    expect(done).toMatchObject({ rollover: null, keys: [{ key_tag: start.key_tag, role: 'active', ds: newDs }] });
    await until('the old key out of the DNSKEY set', async () => (await dig(server.dnsPort, CHILD, 'DNSKEY')).answer.filter((a) => a.type === 'DNSKEY').length === 1, 10_000, 100);
    // Past every cache's TTL after the last change.
    await new Promise((r) => setTimeout(r, (CACHE_TTL + 1) * 1000));
    const seen = await asking.stop();
    expect(seen.length).toBeGreaterThan(100);
    expect(seen.filter((a) => a.status !== 'NOERROR' && a.status !== 'NXDOMAIN')).toEqual([]);
    expect(seen.filter((a) => !a.ad)).toEqual([]);
    expect(unbound.log().match(/.*validation failure.*/g) ?? []).toEqual([]);
  });

  it('without the new DS at the parent it stays published (the old key signing) past every TTL; the DS added later: the new key signs no sooner than its TTL — never a failure', { timeout: 120_000 }, async () => {
    const current = (await status(LATE)).keys[0];
    const asking = keepAsking(LATE);
    const start = await admin(['domain', 'dnssec-rollover', LATE]);
    const again = await runAdminCli(env, ['domain', 'dnssec-rollover', LATE]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already under way');
    await until('CDS of both keys', async () => (await cdsTags(LATE)).length === 2, 10_000, 100);
    // Past the DNSKEY wait (CACHE_TTL and its allowance), and three of the monitor's looks (one a
    // second here) beyond: a rollover that moved on without the DS would have done so by then.
    await new Promise((r) => setTimeout(r, (CACHE_TTL + 2 + 3) * 1000));
    const waiting = await status(LATE);
    expect(waiting).toMatchObject({ state: 'rolling_over', rollover: { phase: 'publish', ds_to_add: [start.ds_to_add], waiting_for: ['the new key\'s DS at the parent'] } });
    expect(waiting.next_step).toContain('add the new key\'s DS');
    expect(await signerTags(LATE)).toEqual([current.key_tag]);
    // Turning DNSSEC off meanwhile is refused (409), naming the rollover.
    const off = await call('PATCH', `/domains/${LATE}`, { dnssec: false });
    expect(off.status).toBe(409);
    expect(JSON.stringify(off.body)).toContain('rollover');
    await noteFeedKeys(LATE);

    // The DS arrives late: the DS set's TTL is what the switch waits for now.
    await signedParent.childDs([current.ds, start.ds_to_add], 'late');
    const added = Date.now();
    await until('the retire phase', async () => (await status(LATE)).rollover?.phase === 'retire', 30_000, 200);
    const switched = Date.now();
    expect(switched - added, 'the new key signed before the new DS\'s TTL was over').toBeGreaterThanOrEqual(DS_TTL * 1000);
    await until('the new key signing', async () => (await signerTags(LATE)).join() === String(start.key_tag), 10_000, 100);
    // The parent drops the old DS at once: the zone's TTL is what the old key's removal waits for now.
    await signedParent.childDs([start.ds_to_add], 'late');
    await until('secure with the new key', async () => (await status(LATE)).state === 'secure', 40_000, 200);
    expect(Date.now() - switched, 'the old key removed before the zone\'s TTL was over').toBeGreaterThanOrEqual(CACHE_TTL * 1000);
    expect((await status(LATE)).keys).toMatchObject([{ key_tag: start.key_tag, role: 'active' }]);
    await new Promise((r) => setTimeout(r, (CACHE_TTL + 1) * 1000));
    const seen = await asking.stop();
    expect(seen.length).toBeGreaterThan(100);
    expect(seen.filter((a) => a.status !== 'NOERROR' && a.status !== 'NXDOMAIN')).toEqual([]);
    expect(seen.filter((a) => !a.ad)).toEqual([]);
    expect(unbound.log().match(/.*validation failure.*/g) ?? []).toEqual([]);
  });

});

describe('after both rollovers', () => {
  it('the private keys are nowhere but in the name servers\' feed: not in the edge\'s feed, any API or CLI answer, or any log line', async () => {
    // Each zone's first key and the one rolled in.
    expect(privateKeys.size).toBe(4);
    const places: Record<string, string> = {
      'edge snapshot': await feed('/sync/edge/snapshot', edgeToken),
      'edge changes': await feed('/sync/edge/changes?since=0', edgeToken),
      'API and CLI answers': answers.join('\n'),
      'serve log': server.output(),
    };
    for (const zone of [CHILD, LATE]) expect(places['edge snapshot']).toContain(`"domain":"${zone}"`);
    for (const [place, text] of Object.entries(places)) {
      for (const k of privateKeys) expect(text.includes(k), `a private key in the ${place}`).toBe(false);
      expect(text, place).not.toContain('private_key');
      expect(text, place).not.toContain('"signing":');
    }
  });
});
