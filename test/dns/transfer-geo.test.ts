// Names that hold only geo variants (records for some countries or continents, none for the rest
// of the world), transferred to real secondaries (Knot and NSD). Our name servers answer such a
// name NODATA to a client outside the targeted places; a secondary has no client place, so it
// must answer as we do for the rest of the world: NODATA, never NXDOMAIN (the name and the names
// above it exist), and never a country's answer. Transfers used to leave such names out: both
// secondaries answered NXDOMAIN for them and for the empty non-terminals above them.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { GEO, writeTestDb } from '../helpers/geo-db.ts';
import { freePort, startKnot, type KnotSecondary } from '../helpers/knot-secondary.ts';
import { startNsd, type NsdSecondary } from '../helpers/nsd-secondary.ts';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const ZONE = 'geo-xfr.example';
const knotSecret = randomBytes(32).toString('base64');
const nsdSecret = randomBytes(32).toString('base64');
let server: RunningServer;
let knot: KnotSecondary;
let nsd: NsdSecondary;
let key: string;

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
const serial = (r: DigResult) => Number(r.answer.find((a) => a.type === 'SOA')?.data.split(' ')[2]);
const shape = (r: DigResult) => ({ status: r.status, answer: r.answer.map((a) => `${a.name} ${a.ttl} ${a.type} ${a.data}`).sort() });

async function caughtUp(name: string, port: number, output: () => string): Promise<void> {
  const want = serial(await dig(server.dnsPort, ZONE, 'SOA'));
  await until(`${name} at serial ${want}\n${output().slice(-3000)}`, async () => serial(await dig(port, ZONE, 'SOA').catch(() => ({ answer: [] }) as unknown as DigResult)) === want, 20_000, 200);
}

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_GEOIP_DB: writeTestDb('maxmind') };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'geo', '--email', 'geo@example.org'])).stdout).key.api_key;
  const knotPort = await freePort();
  const nsdPort = await freePort();
  for (const [name, secret, port] of [['knot', knotSecret, knotPort], ['nsd', nsdSecret, nsdPort]] as const) {
    const added = await runAdminCli(env, ['secondary', 'add', '--name', name, '--address', '127.0.0.1', '--tsig-key', `${name}-key:${secret}`, '--port', String(port), '--zone', ZONE, '--no-catalog']);
    expect(added.code, added.stderr).toBe(0);
  }
  server = await startServe(env);
  expect((await api('POST', '/domains', { domain: ZONE, backend: '198.51.100.1' })).status).toBe(201);
  const records = [
    { name: 'www', type: 1, value: '192.0.2.1' },
    { name: 'www', type: 1, value: '192.0.2.49', target: [GEO.DE.country] },
    // Only variants: Germany gets an address, the rest of the world nothing.
    { name: 'de-only', type: 1, value: '192.0.2.50', target: [GEO.DE.country] },
    { name: 'de-only', type: 2, value: '2001:db8::50', target: [GEO.DE.country] },
    // Only variants, below an empty non-terminal.
    { name: 'shop.eu', type: 1, value: '192.0.2.51', target: [GEO.DE.country] },
    { name: 'plain', type: 1, value: '192.0.2.9' },
  ];
  expect((await api('POST', `/domains/${ZONE}/dnsrecords/bulk`, { create: records })).status).toBe(200);
  expect((await api('POST', `/domains/${ZONE}/activatens`)).status).toBe(200);
  knot = await startKnot({ primaryPort: server.dnsPort, key: { name: 'knot-key', secret: knotSecret }, zones: [ZONE], port: knotPort });
  nsd = await startNsd({ primaryPort: server.dnsPort, key: { name: 'nsd-key', secret: nsdSecret }, zones: [ZONE], port: nsdPort });
}, 120_000);

afterAll(async () => {
  await knot?.stop();
  await nsd?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe('geo-only names on secondaries', () => {
  it('are NODATA on Knot and NSD as on our name servers for the rest of the world, never NXDOMAIN nor a country answer', async () => {
    await caughtUp('knot', knot.port, knot.output);
    await caughtUp('nsd', nsd.port, nsd.output);
    // 127.0.0.1 is in no targeted country: our answers are the rest of the world's.
    const questions: Array<[string, string]> = [
      [`de-only.${ZONE}`, 'A'],
      [`de-only.${ZONE}`, 'AAAA'],
      [`de-only.${ZONE}`, 'TXT'],
      [`shop.eu.${ZONE}`, 'A'],
      [`eu.${ZONE}`, 'A'],
      [`www.${ZONE}`, 'A'],
      [`plain.${ZONE}`, 'A'],
      [`missing.${ZONE}`, 'A'],
    ];
    for (const [name, type] of questions) {
      const ours = shape(await dig(server.dnsPort, name, type));
      expect(shape(await dig(knot.port, name, type)), `knot: ${name} ${type}`).toEqual(ours);
      expect(shape(await dig(nsd.port, name, type)), `nsd: ${name} ${type}`).toEqual(ours);
    }
    expect(shape(await dig(server.dnsPort, `de-only.${ZONE}`, 'A')).status).toBe('NOERROR');
    expect(shape(await dig(server.dnsPort, `missing.${ZONE}`, 'A')).status).toBe('NXDOMAIN');
    // No country's data reached the secondaries.
    for (const port of [knot.port, nsd.port]) {
      const transferred = await dig(port, ZONE, 'AXFR', ['-y', port === knot.port ? `hmac-sha256:knot-key:${knotSecret}` : `hmac-sha256:nsd-key:${nsdSecret}`]);
      expect(transferred.raw).not.toMatch(/192\.0\.2\.(49|50|51)|2001:db8::50/);
    }
  }, 60_000);

  it('stay so through changes (IXFR): a name that loses its general records, and one that gets some', async () => {
    const list = (await (await api('GET', `/domains/${ZONE}/dnsrecords`)).json()) as Array<{ id: number; name: string; value: string }>;
    const general = list.find((r) => r.name === 'www' && r.value === '192.0.2.1')!;
    expect((await api('DELETE', `/domains/${ZONE}/dnsrecords/${general.id}`)).status).toBe(204);
    expect((await api('POST', `/domains/${ZONE}/dnsrecords`, { name: 'shop.eu', type: 1, value: '192.0.2.52' })).status).toBe(201);
    await caughtUp('knot', knot.port, knot.output);
    await caughtUp('nsd', nsd.port, nsd.output);
    for (const [name, type] of [[`www.${ZONE}`, 'A'], [`shop.eu.${ZONE}`, 'A'], [`de-only.${ZONE}`, 'A'], [`eu.${ZONE}`, 'A']] as const) {
      const ours = shape(await dig(server.dnsPort, name, type));
      expect(shape(await dig(knot.port, name, type)), `knot: ${name} ${type}`).toEqual(ours);
      expect(shape(await dig(nsd.port, name, type)), `nsd: ${name} ${type}`).toEqual(ours);
    }
    expect(shape(await dig(knot.port, `www.${ZONE}`, 'A')).status).toBe('NOERROR');
    expect(shape(await dig(knot.port, `shop.eu.${ZONE}`, 'A')).answer).toHaveLength(1);
    expect(knot.output()).toMatch(/IXFR, incoming, remote [^,]+, finished/);
  }, 60_000);
});
