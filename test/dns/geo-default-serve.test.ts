// Out of the box: `palisade serve` with no GeoIP setting answers geo-targeted names from the
// bundled database; with PALISADE_GEOIP_DB=off it says so and answers the general records.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countryByIsoCode } from '../../src/geo/targets.ts';
import { dig, type DigResult } from '../helpers/dig.ts';
import { runAdminCli, startServe, stopProcess } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const dataDir = tempDir();
const values = (r: DigResult) => r.answer.map((a) => a.data).sort();
const ecs = (r: DigResult) => r.edns?.options.find((o) => o.startsWith('CLIENT-SUBNET'));

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: dataDir };
  const created = await runAdminCli(env, ['user', 'create', '--name', 'geo', '--email', 'geo@example.org']);
  const key = JSON.parse(created.stdout).key.api_key as string;
  for (const [name, ipv4, location] of [['ams1', '192.0.2.201', 'NL'], ['syd1', '192.0.2.202', 'AU'], ['nyc1', '192.0.2.203', 'US']]) {
    expect((await runAdminCli(env, ['node', 'add', '--name', name!, '--ipv4', ipv4!, '--location', location!])).code).toBe(0);
  }
  const server = await startServe(env);
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  expect((await call('POST', '/domains', { domain: 'geo.example', backend: '198.51.100.1' })).status).toBe(201);
  for (const record of [
    { name: 'www', type: 1, value: '192.0.2.1' },
    { name: 'www', type: 1, value: '192.0.2.31', target: [countryByIsoCode('NL')!.id] },
    { name: 'www', type: 1, value: '192.0.2.61', target: [countryByIsoCode('AU')!.continentId] },
  ]) {
    expect((await call('POST', '/domains/geo.example/dnsrecords', record)).status).toBe(201);
  }
  expect((await call('GET', '/domains/geo.example/activatens')).status).toBe(200);
  await stopProcess(server);
});

afterAll(removeTempDirs);

describe('geo without configuration', () => {
  it('uses the bundled database: RIPE NCC’s subnet gets the Dutch variant, APNIC’s the Oceania one', async () => {
    const server = await startServe({ PALISADE_DATA_DIR: dataDir });
    try {
      expect(server.output()).toContain('bundled GeoIP database loaded');
      const nl = await dig(server.dnsPort, 'www.geo.example', 'A', ['+subnet=193.0.0.0/24']);
      expect(values(nl)).toEqual(['192.0.2.31']);
      expect(ecs(nl)).toMatch(/^CLIENT-SUBNET: 193\.0\.0\.0\/24\/(1[0-9]|2[0-4])$/);
      expect(values(await dig(server.dnsPort, 'www.geo.example', 'A', ['+subnet=202.12.29.0/24']))).toEqual(['192.0.2.61']);
      expect(values(await dig(server.dnsPort, 'www.geo.example', 'A', ['+subnet=2001:67c:2e8::/48']))).toEqual(['192.0.2.31']);
      expect(values(await dig(server.dnsPort, 'www.geo.example', 'A', ['+subnet=192.0.2.0/24']))).toEqual(['192.0.2.1']);
    } finally {
      await stopProcess(server);
    }
  });

  it('the protected apex answers with the edge node nearest the client', async () => {
    const server = await startServe({ PALISADE_DATA_DIR: dataDir });
    try {
      const nl = await dig(server.dnsPort, 'geo.example', 'A', ['+subnet=193.0.0.0/24']);
      expect(values(nl)).toEqual(['192.0.2.201']);
      expect(ecs(nl)).not.toBe('CLIENT-SUBNET: 193.0.0.0/24/0');
      expect(values(await dig(server.dnsPort, 'geo.example', 'A', ['+subnet=202.12.29.0/24']))).toEqual(['192.0.2.202']);
      expect(values(await dig(server.dnsPort, 'geo.example', 'A', ['+subnet=9.9.9.0/24']))).toEqual(['192.0.2.203']);
      // Brazil has no node and South America none either: every serving node.
      expect(values(await dig(server.dnsPort, 'geo.example', 'A', ['+subnet=200.160.0.0/24']))).toEqual(['192.0.2.201', '192.0.2.202', '192.0.2.203']);
      expect(values(await dig(server.dnsPort, 'geo.example', 'A'))).toEqual(['192.0.2.201', '192.0.2.202', '192.0.2.203']);
    } finally {
      await stopProcess(server);
    }
  });

  it('PALISADE_GEOIP_DB=off: says so at start-up and answers the general records', async () => {
    const server = await startServe({ PALISADE_DATA_DIR: dataDir, PALISADE_GEOIP_DB: 'off' });
    try {
      expect(server.output()).toContain('no GeoIP database (PALISADE_GEOIP_DB=off)');
      const r = await dig(server.dnsPort, 'www.geo.example', 'A', ['+subnet=193.0.0.0/24']);
      expect(values(r)).toEqual(['192.0.2.1']);
      expect(ecs(r)).toBe('CLIENT-SUBNET: 193.0.0.0/24/0');
    } finally {
      await stopProcess(server);
    }
  });
});
