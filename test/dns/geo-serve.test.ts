// Geo answers end to end: `palisade serve` with a GeoIP database built by our writer, queried
// with dig — by ECS subnet (IPv4 /24, IPv6 /56) and, without ECS, by the source address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { GEO, writeTestDb } from '../helpers/geo-db.ts';
import { runAdminCli, startServe, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

let server: RunningServer;

const ecs = (r: DigResult) => r.edns?.options.find((o) => o.startsWith('CLIENT-SUBNET'));
const values = (r: DigResult) => r.answer.map((a) => a.data).sort();

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_GEOIP_DB: writeTestDb('maxmind') };
  const created = await runAdminCli(env, ['user', 'create', '--name', 'geo', '--email', 'geo@example.org']);
  const key = JSON.parse(created.stdout).key.api_key as string;
  server = await startServe(env);
  expect(server.output()).toContain('GeoIP database loaded');
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  expect((await call('POST', '/domains', { domain: 'geo.example', backend: '198.51.100.1' })).status).toBe(201);
  for (const record of [
    { name: 'www', type: 1, value: '192.0.2.1' },
    { name: 'www', type: 1, value: '192.0.2.49', target: [GEO.DE.country] },
    { name: 'www', type: 1, value: '192.0.2.2', target: [GEO.US.continent] },
    { name: 'www', type: 1, value: '192.0.2.81', target: [GEO.JP.country] },
    { name: 'www', type: 1, value: '192.0.2.55', target: [GEO.BR.country] },
    { name: 'plain', type: 1, value: '192.0.2.9' },
  ]) {
    expect((await call('POST', '/domains/geo.example/dnsrecords', record)).status).toBe(201);
  }
  expect((await call('GET', '/domains/geo.example/activatens')).status).toBe(200);
  await until('geo.example served', async () => (await dig(server.dnsPort, 'plain.geo.example', 'A')).answer.length > 0);
});

afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  removeTempDirs();
});

describe('geo answers through palisade serve', () => {
  it('by ECS subnet, country before continent before general, SCOPE = the database network', async () => {
    const cases: Array<[string, string, string]> = [
      ['192.0.2.0/24', '192.0.2.49', '192.0.2.0/24/24'],
      ['198.51.100.0/24', '192.0.2.2', '198.51.100.0/24/24'],
      ['203.0.113.0/24', '192.0.2.81', '203.0.113.0/24/24'],
      ['2001:db8:4500::/56', '192.0.2.55', '2001:db8:4500::/56/32'],
    ];
    for (const [subnet, answer, option] of cases) {
      const r = await dig(server.dnsPort, 'www.geo.example', 'A', [`+subnet=${subnet}`]);
      expect(values(r), subnet).toEqual([answer]);
      expect(ecs(r)).toBe(`CLIENT-SUBNET: ${option}`);
    }
    const unknown = await dig(server.dnsPort, 'www.geo.example', 'A', ['+subnet=100.64.0.0/24']);
    expect(values(unknown)).toEqual(['192.0.2.1']);
  });

  it('SCOPE 0 for names without geo variants', async () => {
    const r = await dig(server.dnsPort, 'plain.geo.example', 'A', ['+subnet=192.0.2.0/24']);
    expect(ecs(r)).toBe('CLIENT-SUBNET: 192.0.2.0/24/0');
  });

  it('without ECS, by the source address, and no ECS in the answer', async () => {
    const de = await dig(server.dnsPort, 'www.geo.example', 'A', ['-b', '127.0.0.2']);
    expect(values(de)).toEqual(['192.0.2.49']);
    expect(ecs(de)).toBeUndefined();
    expect(values(await dig(server.dnsPort, 'www.geo.example', 'A', ['-b', '127.0.0.3']))).toEqual(['192.0.2.2']);
    expect(values(await dig(server.dnsPort, 'www.geo.example', 'A'))).toEqual(['192.0.2.1']);
  });
});
