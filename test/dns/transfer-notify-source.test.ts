// NOTIFY leaves from the name server's own address. A name server bound to one address (here
// 127.0.0.7, as one address of a multi-homed host is) and a Knot secondary whose ACL takes
// NOTIFY from that address only: a change reaches Knot within seconds, by NOTIFY (its refresh
// timer is two hours). Sent from the wildcard address, every NOTIFY left from 127.0.0.1 and was
// dropped by the ACL; Knot stayed behind until its refresh.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { freePort, startKnot, type KnotSecondary } from '../helpers/knot-secondary.ts';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const ADDRESS = '127.0.0.7';
const ZONE = 'notify-source.example';
const secret = randomBytes(32).toString('base64');
let server: RunningServer;
let knot: KnotSecondary;
let key: string;

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
const serial = (r: DigResult) => Number(r.answer.find((a) => a.type === 'SOA')?.data.split(' ')[2]);

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_DNS_HOST: ADDRESS };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'ns', '--email', 'ns@example.org'])).stdout).key.api_key;
  const knotPort = await freePort();
  const added = await runAdminCli(env, ['secondary', 'add', '--name', 'knot', '--address', '127.0.0.1', '--tsig-key', `src-key:${secret}`, '--port', String(knotPort), '--zone', ZONE, '--no-catalog']);
  expect(added.code, added.stderr).toBe(0);
  server = await startServe(env);
  expect((await api('POST', '/domains', { domain: ZONE, backend: '198.51.100.1' })).status).toBe(201);
  expect((await api('POST', `/domains/${ZONE}/dnsrecords`, { name: 'www', type: 'A', value: '192.0.2.10' })).status).toBe(201);
  expect((await api('POST', `/domains/${ZONE}/activatens`)).status).toBe(200);
  knot = await startKnot({ primaryPort: server.dnsPort, primaryAddress: ADDRESS, key: { name: 'src-key', secret }, zones: [ZONE], port: knotPort });
}, 120_000);

afterAll(async () => {
  await knot?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe('NOTIFY from the address the name server is bound to', () => {
  it('reaches a secondary whose ACL names that address only', async () => {
    const want = serial(await dig(server.dnsPort, ZONE, 'SOA', [], ADDRESS));
    await until(`knot at serial ${want}\n${knot.output().slice(-3000)}`, async () => serial(await dig(knot.port, ZONE, 'SOA').catch(() => ({ answer: [] }) as unknown as DigResult)) === want, 20_000, 200);
    const list = (await (await api('GET', `/domains/${ZONE}/dnsrecords?name=www&type=A`)).json()) as Array<{ id: number }>;
    expect((await api('PATCH', `/domains/${ZONE}/dnsrecords/${list[0]!.id}`, { value: '192.0.2.99' })).status).toBe(200);
    await until(`knot serving the change\n${knot.output().slice(-3000)}`, async () => (await dig(knot.port, `www.${ZONE}`, 'A')).answer[0]?.data === '192.0.2.99', 15_000, 100);
    expect(knot.output()).toMatch(new RegExp(`\\[${ZONE.replace('.', '\\.')}\\.\\] notify, incoming, remote ${ADDRESS.replaceAll('.', '\\.')}@\\d+`));
    expect(knot.output()).not.toMatch(/notify, incoming, remote [^,]+, .*denied/i);
  }, 60_000);
});
