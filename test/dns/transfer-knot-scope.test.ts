// What one secondary may see and do when the name server serves several accounts: a real Knot
// secondary limited (`secondary add --zone`) to account A's zone learns from the catalog zone
// exactly the zones it may transfer (never account B's), and the catalog's serial moves when that
// set changes; a second secondary cannot take the first one's key name, and if a hand-written
// file gives two secondaries one key name, each is known by its secret (neither transfers the
// other's zones, neither is refused its own); refusals and TSIG failures are logged, a line per
// client per minute. A signed NOTIFY for the catalog (Knot sends one back after each transfer)
// is answered as for any other zone.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEntries, SECONDARIES_FILE, writeEntries } from '../../src/dns/transfer/secondaries.ts';
import { dig, type DigResult } from '../helpers/dig.ts';
import { freePort, startKnot, type KnotSecondary } from '../helpers/knot-secondary.ts';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const CATALOG = 'catalog.palisade.invalid';
const KEY = 'scope-key';
const secretA = randomBytes(32).toString('base64');
const secretB = randomBytes(32).toString('base64');
const ZONE_A = 'a-customer.example';
const ZONE_B = 'b-customer.example';
let server: RunningServer;
let knot: KnotSecondary;
let knotPort: number;
let env: Record<string, string>;
const apiKeys: Record<string, string> = {};

function api(user: string, method: string, path: string, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': apiKeys[user]!, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function addZone(user: string, domain: string): Promise<void> {
  expect((await api(user, 'POST', '/domains', { domain, backend: '198.51.100.1' })).status).toBe(201);
  expect((await api(user, 'POST', `/domains/${domain}/dnsrecords`, { name: 'www', type: 1, value: '192.0.2.10' })).status).toBe(201);
  expect((await api(user, 'POST', `/domains/${domain}/activatens`)).status).toBe(200);
}

const serial = (r: DigResult) => Number(r.answer.find((a) => a.type === 'SOA')?.data.split(' ')[2]);
const soaLines = (r: DigResult) => r.raw.split('\n').filter((l) => /^\S+\s+\d+\s+IN\s+SOA\s/.test(l)).length;
const axfr = (zone: string, secret: string, options: string[] = []) => dig(server.dnsPort, zone, 'AXFR', [...options, '-y', `hmac-sha256:${KEY}:${secret}`]);
/** The zones a catalog transfer names (its PTR records' targets). */
const members = (r: DigResult) => r.raw.split('\n').flatMap((l) => /^\S+\.zones\.\S+\s+\d+\s+IN\s+PTR\s+(\S+)\.$/.exec(l)?.[1] ?? []);
const catalogSerial = async (secret: string) => serial(await dig(server.dnsPort, CATALOG, 'SOA', ['-y', `hmac-sha256:${KEY}:${secret}`]));

async function caughtUp(zone: string, timeoutMs = 20_000): Promise<void> {
  const want = serial(await dig(server.dnsPort, zone, 'SOA'));
  await until(`knot serving ${zone} at serial ${want}\n${knot.output().slice(-3000)}`, async () => serial(await dig(knot.port, zone, 'SOA').catch(() => ({ answer: [] }) as unknown as DigResult)) === want, timeoutMs, 100);
}

beforeAll(async () => {
  env = { PALISADE_DATA_DIR: tempDir() };
  for (const user of ['a', 'b']) {
    const created = await runAdminCli(env, ['user', 'create', '--name', user, '--email', `${user}@example.org`]);
    apiKeys[user] = JSON.parse(created.stdout).key.api_key;
  }
  knotPort = await freePort();
  const added = await runAdminCli(env, ['secondary', 'add', '--name', 'knot-a', '--address', '127.0.0.1', '--tsig-key', `${KEY}:${secretA}`, '--port', String(knotPort), '--zone', ZONE_A]);
  expect(added.code, added.stderr).toBe(0);
  server = await startServe(env);
  await addZone('a', ZONE_A);
  await addZone('b', ZONE_B);
  knot = await startKnot({ primaryPort: server.dnsPort, key: { name: KEY, secret: secretA }, catalog: CATALOG, port: knotPort, notifyPrimary: true });
}, 120_000);

afterAll(async () => {
  await knot?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe('one secondary among several accounts (Knot)', () => {
  it("its catalog names exactly the zones it may transfer: account A's, never B's", async () => {
    await caughtUp(ZONE_A);
    const catalog = await axfr(CATALOG, secretA);
    expect(members(catalog), catalog.raw).toEqual([ZONE_A]);
    // Knot took the catalog whole: no member it was never allowed to transfer.
    const want = await catalogSerial(secretA);
    // Knot answers no queries for a catalog it interprets: what it took shows in its log.
    await until(`knot holding the catalog at serial ${want}`, () => new RegExp(`\\[${CATALOG.replace(/\./g, '\\.')}\\.\\] refresh, .* -> ${want}\\b`).test(knot.output()), 20_000, 100);
    expect(knot.output()).toMatch(new RegExp(`\\[${ZONE_A.replace(/\./g, '\\.')}\\.\\] zone added from catalog`));
    expect(knot.output()).not.toContain(`[${ZONE_B}.]`);
    expect((await dig(knot.port, ZONE_B, 'SOA')).status).toBe('REFUSED');
  }, 60_000);

  it('a signed NOTIFY for the catalog is answered as one for any zone', async () => {
    // Knot sends NOTIFY back to us after each transfer, signed with its key: the answers it got, as it logs them.
    const outcome = (zone: string) => new RegExp(`\\[${zone.replace(/\./g, '\\.')}\\.\\] notify, outgoing, remote [^,]+, (.*)`).exec(knot.output())?.[1];
    await until(`knot's NOTIFY outcomes\n${knot.output().slice(-3000)}`, () => outcome(ZONE_A) !== undefined && outcome(CATALOG) !== undefined, 20_000, 100);
    expect(outcome(CATALOG)!.replace(/serial \d+/, 'serial N')).toBe(outcome(ZONE_A)!.replace(/serial \d+/, 'serial N'));
  }, 30_000);

  it('the catalog serial moves when the set it may transfer changes, and Knot then learns the new member', async () => {
    const before = await catalogSerial(secretA);
    expect((await runAdminCli(env, ['secondary', 'remove', 'knot-a'])).code).toBe(0);
    const added = await runAdminCli(env, ['secondary', 'add', '--name', 'knot-a', '--address', '127.0.0.1', '--tsig-key', `${KEY}:${secretA}`, '--port', String(knotPort), '--zone', ZONE_A, '--zone', ZONE_B]);
    expect(added.code, added.stderr).toBe(0);
    await until('the catalog naming both zones', async () => members(await axfr(CATALOG, secretA)).length === 2, 20_000, 200);
    expect(await catalogSerial(secretA)).not.toBe(before);
    await caughtUp(ZONE_B);
    // Back to A's zone only (for what follows), B's dropped by Knot.
    expect((await runAdminCli(env, ['secondary', 'remove', 'knot-a'])).code).toBe(0);
    expect((await runAdminCli(env, ['secondary', 'add', '--name', 'knot-a', '--address', '127.0.0.1', '--tsig-key', `${KEY}:${secretA}`, '--port', String(knotPort), '--zone', ZONE_A])).code).toBe(0);
    await until('knot dropping the zone it no longer takes', async () => (await dig(knot.port, ZONE_B, 'SOA')).status === 'REFUSED', 20_000, 200);
  }, 90_000);

  it("a second secondary cannot take the first one's key name; given one by hand, each is known by its secret", async () => {
    const duplicate = await runAdminCli(env, ['secondary', 'add', '--name', 'other', '--address', '127.0.0.1', '--tsig-key', `${KEY}:${secretB}`, '--zone', ZONE_B, '--no-catalog']);
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.stderr).toMatch(new RegExp(`key ${KEY}.*knot-a`));
    // A file written by hand (or by an older version) with the same key name for a second secondary at the same address.
    const file = join(env.PALISADE_DATA_DIR!, SECONDARIES_FILE);
    writeEntries(file, [...readEntries(file), { name: 'other', addresses: ['127.0.0.1'], port: 53, tsigKey: `${KEY}:${secretB}`, zones: [ZONE_B], catalog: false }]);
    await until('the other secondary transferring its zone', async () => soaLines(await axfr(ZONE_B, secretB)) === 2, 20_000, 200);
    expect(server.output()).toMatch(/several secondaries use one TSIG key name/);
    const stolen = await axfr(ZONE_A, secretB);
    expect(soaLines(stolen), stolen.raw).toBe(0);
    const own = await axfr(ZONE_A, secretA);
    expect(soaLines(own), own.raw).toBe(2);
    // Knot (A's key) still hears of changes and transfers them.
    const list = (await (await api('a', 'GET', `/domains/${ZONE_A}/dnsrecords?name=www&type=A`)).json()) as Array<{ id: number }>;
    expect((await api('a', 'PATCH', `/domains/${ZONE_A}/dnsrecords/${list[0]!.id}`, { value: '192.0.2.99' })).status).toBe(200);
    await until(`knot serving the change\n${knot.output().slice(-3000)}`, async () => (await dig(knot.port, `www.${ZONE_A}`, 'A')).answer[0]?.data === '192.0.2.99', 20_000, 100);
  }, 90_000);

  it('logs refusals and TSIG failures, one line per client per minute', async () => {
    const from = ['-b', '127.0.0.3'];
    for (let i = 0; i < 5; i++) {
      expect((await axfr(ZONE_A, randomBytes(32).toString('base64'), from)).raw).toMatch(/BADSIG/);
      expect(soaLines(await axfr(ZONE_A, secretA, from))).toBe(0);
    }
    await until('the log line', () => /127\.0\.0\.3/.test(server.output()), 10_000, 100);
    const lines = server.output().split('\n').filter((l) => l.includes('"client":"127.0.0.3"'));
    expect(lines.length, lines.join('\n')).toBe(1);
    expect(lines[0]).toMatch(/TSIG|refused/);
  }, 60_000);
});
