// Zone transfers to a real Knot secondary (knotd, configured here, on loopback): it learns our
// zones from the catalog zone (RFC 9432), transfers each with TSIG, hears NOTIFY after every
// change and answers as our name servers do, record for record (dig on both); a zone removed
// here is removed there. Transfers without the key, with a wrong one, or from an address not
// listed are refused.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { freePort, startKnot, type KnotSecondary } from '../helpers/knot-secondary.ts';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const CATALOG = 'catalog.palisade.invalid';
const secret = randomBytes(32).toString('base64');
const tsig = `hmac-sha256:xfr-key:${secret}`;
let server: RunningServer;
let knot: KnotSecondary;
let key: string;
let env: Record<string, string>;

const fixture = JSON.parse(readFileSync(new URL('../../zones-fixtures/example.org.json', import.meta.url), 'utf8')) as {
  domain: Record<string, unknown> & { domain: string };
  records: Array<{ name: string; type: number; value: string }>;
};
const TYPE_NAMES: Record<number, string> = { 1: 'A', 2: 'AAAA', 3: 'CNAME', 4: 'MX', 5: 'NS', 6: 'TXT', 7: 'SOA', 8: 'SRV' };

function api(method: string, path: string, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function addDomain(domain: Record<string, unknown>, records: unknown[]): Promise<void> {
  expect((await api('POST', '/domains', domain)).status).toBe(201);
  const name = domain.domain as string;
  if (records.length > 0) expect((await api('POST', `/domains/${name}/dnsrecords/bulk`, { create: records })).status).toBe(200);
  expect((await api('POST', `/domains/${name}/activatens`)).status).toBe(200);
}

const serial = (r: DigResult) => Number(r.answer.find((a) => a.type === 'SOA')?.data.split(' ')[2]);
const ours = (name: string, type: string) => dig(server.dnsPort, name, type);
const theirs = (name: string, type: string) => dig(knot.port, name, type);
const shape = (r: DigResult) => ({ status: r.status, aa: r.flags.includes('aa'), answer: r.answer.map((a) => `${a.name} ${a.ttl} ${a.type} ${a.data}`).sort() });

/** Knot serves the zone at our serial. */
async function caughtUp(zone: string, timeoutMs = 15_000): Promise<void> {
  const want = serial(await ours(zone, 'SOA'));
  await until(`knot serving ${zone} at serial ${want}\n${knot.output().slice(-3000)}`, async () => serial(await theirs(zone, 'SOA').catch(() => ({ answer: [] }) as unknown as DigResult)) === want, timeoutMs, 100);
}

/** Every (name, type) asked of both servers gives the same answer. */
async function sameAnswers(zone: string, questions: Array<[string, string]>): Promise<void> {
  for (const [name, type] of questions) {
    const fqdn = name === '@' ? zone : `${name}.${zone}`;
    expect(shape(await theirs(fqdn, type)), `${fqdn} ${type}`).toEqual(shape(await ours(fqdn, type)));
  }
}

const fixtureQuestions = (): Array<[string, string]> => [
  ['@', 'SOA'],
  ['@', 'NS'],
  ...fixture.records.filter((r) => r.type !== 7 && r.type !== 5).map((r) => [r.name.replace('*', 'anything'), TYPE_NAMES[r.type]!] as [string, string]),
];

beforeAll(async () => {
  env = { PALISADE_DATA_DIR: tempDir() };
  const created = await runAdminCli(env, ['user', 'create', '--name', 'xfr', '--email', 'xfr@example.org']);
  key = JSON.parse(created.stdout).key.api_key;
  const knotPort = await freePort();
  const added = await runAdminCli(env, ['secondary', 'add', '--name', 'knot', '--address', '127.0.0.1', '--tsig-key', tsig, '--port', String(knotPort)]);
  expect(added.code, added.stderr).toBe(0);
  expect(added.stdout).not.toContain(secret);
  server = await startServe(env);
  await addDomain(fixture.domain, fixture.records.filter((r) => r.type !== 7).map(({ ...r }) => r));
  await addDomain({ domain: 'second.example', backend: '198.51.100.1' }, [{ name: 'host', type: 1, value: '192.0.2.7' }]);
  knot = await startKnot({ primaryPort: server.dnsPort, key: { name: 'xfr-key', secret }, catalog: CATALOG, port: knotPort });
}, 120_000);

afterAll(async () => {
  await knot?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe('zone transfers to a Knot secondary', () => {
  it('learns every zone from the catalog, transfers it with TSIG and answers as we do', async () => {
    await caughtUp(fixture.domain.domain);
    await caughtUp('second.example');
    await sameAnswers(fixture.domain.domain, fixtureQuestions());
    await sameAnswers('second.example', [['@', 'SOA'], ['@', 'NS'], ['host', 'A'], ['missing', 'A']]);
    expect(knot.output()).toMatch(/\[example\.org\.\] zone added from catalog/);
  }, 60_000);

  it('hears NOTIFY after a change and serves it within seconds (its refresh timer is hours)', async () => {
    const list = (await (await api('GET', '/domains/second.example/dnsrecords')).json()) as Array<{ id: number }>;
    expect((await api('PATCH', `/domains/second.example/dnsrecords/${list[0]!.id}`, { value: '192.0.2.77' })).status).toBe(200);
    await until('knot serving the change', async () => (await theirs('host.second.example', 'A')).answer[0]?.data === '192.0.2.77', 10_000, 100);
    expect(knot.output()).toMatch(/\[second\.example\.\] notify, incoming/);
  }, 30_000);

  it('after 100 changes answers the same for every record', async () => {
    for (let i = 0; i < 100; i++) expect((await api('POST', '/domains/second.example/dnsrecords', { name: `n${i}`, type: 1, value: `192.0.2.${i + 1}` })).status).toBe(201);
    await caughtUp('second.example', 30_000);
    await sameAnswers('second.example', Array.from({ length: 100 }, (_, i) => [`n${i}`, 'A'] as [string, string]));
    // Knot asked for the differences and got them as such (not the whole zone in AXFR form).
    expect(knot.output()).toMatch(/\[second\.example\.\] IXFR, incoming, remote [^,]+, finished/);
    expect(knot.output()).not.toMatch(/\[second\.example\.\] IXFR, incoming, remote [^,]+, receiving AXFR-style IXFR/);
  }, 120_000);

  it('learns a new zone from the catalog, and drops one removed here', async () => {
    await addDomain({ domain: 'third.example', backend: '198.51.100.1' }, [{ name: 'www2', type: 1, value: '192.0.2.33' }]);
    await caughtUp('third.example');
    await sameAnswers('third.example', [['www2', 'A'], ['@', 'SOA']]);
    expect((await api('DELETE', '/domains/third.example')).status).toBe(204);
    await until('knot dropping third.example', async () => (await theirs('third.example', 'SOA')).status === 'REFUSED', 15_000, 100);
    expect((await ours('third.example', 'SOA')).status).toBe('REFUSED');
  }, 60_000);

  it('refuses transfers without the key, with a wrong or unknown key, and from an address not listed', async () => {
    const zone = 'second.example';
    const axfr = (options: string[]) => dig(server.dnsPort, zone, 'AXFR', options);
    // dig prints a transfer's records without section headers: count the SOA lines.
    const soaLines = (r: DigResult) => r.raw.split('\n').filter((l) => /^\S+\s+\d+\s+IN\s+SOA\s/.test(l)).length;
    const good = await axfr(['-y', tsig]);
    expect(soaLines(good), good.raw).toBe(2);
    expect(good.raw).toMatch(/TSIG\s+hmac-sha256\. \d+ 300 32 \S+ \d+ NOERROR/);
    const unsigned = await axfr([]);
    expect(unsigned.raw).toMatch(/Transfer failed/);
    const wrong = await axfr(['-y', `hmac-sha256:xfr-key:${randomBytes(32).toString('base64')}`]);
    expect(wrong.raw).toMatch(/BADSIG/);
    const unknown = await axfr(['-y', `hmac-sha256:other-key:${secret}`]);
    expect(unknown.raw).toMatch(/BADKEY/);
    const elsewhere = await dig(server.dnsPort, zone, 'AXFR', ['-b', '127.0.0.2', '-y', tsig]);
    expect(elsewhere.raw).toMatch(/Transfer failed/);
    expect(soaLines(elsewhere)).toBe(0);
    for (const r of [unsigned, wrong, unknown]) expect(soaLines(r)).toBe(0);
    // What the operator sees of it (the serve role's /metrics, loopback).
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const value = (family: string) => Number(new RegExp(`^${family} (\\d+)`, 'm').exec(metrics)?.[1] ?? NaN);
    expect(value('palisade_dns_axfr_total')).toBeGreaterThanOrEqual(1);
    expect(value('palisade_dns_ixfr_total')).toBeGreaterThanOrEqual(1);
    expect(value('palisade_dns_tsig_failures_total')).toBeGreaterThanOrEqual(2);
    expect(value('palisade_dns_transfers_refused_total')).toBeGreaterThanOrEqual(2);
    expect(value('palisade_dns_notify_answered_total')).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
