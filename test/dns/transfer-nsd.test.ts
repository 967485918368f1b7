// NSD as a second kind of secondary: it transfers our zone with TSIG (asking IXFR, taking our
// answer in AXFR form), hears NOTIFY after a change, and answers as our name servers do.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { freePort } from '../helpers/knot-secondary.ts';
import { startNsd, type NsdSecondary } from '../helpers/nsd-secondary.ts';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const secret = randomBytes(32).toString('base64');
let server: RunningServer;
let nsd: NsdSecondary;
let key: string;
const ZONE = 'nsd.example';

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
const serial = (r: DigResult) => Number(r.answer.find((a) => a.type === 'SOA')?.data.split(' ')[2]);
const shape = (r: DigResult) => ({ status: r.status, answer: r.answer.map((a) => `${a.name} ${a.ttl} ${a.type} ${a.data}`).sort() });

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir() };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'nsd', '--email', 'nsd@example.org'])).stdout).key.api_key;
  const nsdPort = await freePort();
  const added = await runAdminCli(env, ['secondary', 'add', '--name', 'nsd', '--address', '127.0.0.1', '--tsig-key', `nsd-key:${secret}`, '--port', String(nsdPort), '--zone', ZONE, '--no-catalog']);
  expect(added.code, added.stderr).toBe(0);
  server = await startServe(env);
  expect((await api('POST', '/domains', { domain: ZONE, backend: '198.51.100.1' })).status).toBe(201);
  const records = [
    { name: 'www', type: 'A', value: '192.0.2.10' },
    { name: 'www', type: 'AAAA', value: '2001:db8::10' },
    { name: '@', type: 'MX', value: 'mail.nsd.example', priority: 10 },
    { name: 'mail', type: 'A', value: '192.0.2.25' },
    { name: '@', type: 'TXT', value: '"v=spf1 mx -all" "second string"' },
    { name: '_sip._tcp', type: 'SRV', value: '5 5060 sip.nsd.example', priority: 1 },
  ];
  expect((await api('POST', `/domains/${ZONE}/dnsrecords/bulk`, { create: records })).status).toBe(200);
  expect((await api('POST', `/domains/${ZONE}/activatens`)).status).toBe(200);
  nsd = await startNsd({ primaryPort: server.dnsPort, key: { name: 'nsd-key', secret }, zones: [ZONE], port: nsdPort });
}, 120_000);

afterAll(async () => {
  await nsd?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe('zone transfers to an NSD secondary', () => {
  it('transfers the zone with TSIG and answers as we do', async () => {
    const want = serial(await dig(server.dnsPort, ZONE, 'SOA'));
    await until(`nsd at serial ${want}\n${nsd.output()}`, async () => serial(await dig(nsd.port, ZONE, 'SOA').catch(() => ({ answer: [] }) as unknown as DigResult)) === want, 20_000, 200);
    for (const [name, type] of [[ZONE, 'SOA'], [ZONE, 'NS'], [`www.${ZONE}`, 'A'], [`www.${ZONE}`, 'AAAA'], [ZONE, 'MX'], [ZONE, 'TXT'], [`_sip._tcp.${ZONE}`, 'SRV'], [`none.${ZONE}`, 'A']] as const) {
      expect(shape(await dig(nsd.port, name, type)), `${name} ${type}`).toEqual(shape(await dig(server.dnsPort, name, type)));
    }
  }, 60_000);

  it('hears NOTIFY after a change and serves it', async () => {
    const list = (await (await api('GET', `/domains/${ZONE}/dnsrecords?name=www&type=A`)).json()) as Array<{ id: number }>;
    expect((await api('PATCH', `/domains/${ZONE}/dnsrecords/${list[0]!.id}`, { value: '192.0.2.99' })).status).toBe(200);
    await until(`nsd serving the change\n${nsd.output()}`, async () => (await dig(nsd.port, `www.${ZONE}`, 'A')).answer[0]?.data === '192.0.2.99', 15_000, 100);
  }, 30_000);
});
