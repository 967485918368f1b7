// The record types beyond the first eight (CAA, PTR, TLSA, SSHFP, NAPTR, DS), end to end: one
// zone file loaded into NSD and imported into a real palisade through the API (the change feed
// takes it to the name server) gives the same `dig` answers; an NSD secondary transferring the
// zones from us (AXFR) answers the same too; and the export, imported again, changes nothing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { freePort } from '../helpers/knot-secondary.ts';
import { startNsdPrimary, type NsdPrimary } from '../helpers/nsd-primary.ts';
import { startNsd, type NsdSecondary } from '../helpers/nsd-secondary.ts';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';
import { knotZoneCheck, namedCheckzone } from '../helpers/zone-check.ts';

const ZONE = 'rt.example';
const REVERSE = '2.0.192.in-addr.arpa';
const hex = (n: number, seed: string) => Buffer.alloc(n / 2, seed).toString('hex');

const HEAD = (origin: string) => `$ORIGIN ${origin}.
$TTL 300
@ IN SOA ns1.rt.example. hostmaster.rt.example. 1 7200 1800 1209600 300
@ IN NS ns1.rt.example.
`;
const FORWARD = `${HEAD(ZONE)}@ 300 IN CAA 0 issue "ca.example; account=123"
@ 300 IN CAA 0 issuewild ";"
@ 300 IN CAA 128 iodef "mailto:security@rt.example"
_443._tcp.www 300 IN TLSA 3 1 1 ${hex(64, 'a1')}
_25._tcp.mail 300 IN TLSA 2 0 2 ${hex(128, 'b2')}
www 300 IN SSHFP 4 2 ${hex(64, 'c3')}
www 300 IN SSHFP 1 1 ${hex(40, 'd4')}
www 300 IN A 192.0.2.10
@ 300 IN NAPTR 100 10 "S" "SIP+D2U" "" _sip._udp.rt.example.
@ 300 IN NAPTR 100 20 "U" "E2U+sip" "!^.*$!sip:info@rt.example!" .
_sip._udp 300 IN SRV 0 5 5060 sip.rt.example.
sip 300 IN A 192.0.2.7
sub 300 IN NS ns1.elsewhere.example.
sub 300 IN DS 12345 13 2 ${hex(64, 'e5')}
sub 300 IN DS 12345 8 1 ${hex(40, 'f6')}
deep 300 IN NS ns1.elsewhere.example.
deep 300 IN DS 60000 15 4 ${hex(96, '07')}
host 300 IN PTR www.rt.example.
`;
const BACKWARD = `${HEAD(REVERSE)}10 300 IN PTR www.rt.example.
7 300 IN PTR sip.rt.example.
`;

const QUESTIONS: Array<[string, string]> = [
  [ZONE, 'CAA'],
  [`_443._tcp.www.${ZONE}`, 'TLSA'],
  [`_25._tcp.mail.${ZONE}`, 'TLSA'],
  [`www.${ZONE}`, 'SSHFP'],
  [ZONE, 'NAPTR'],
  [`sub.${ZONE}`, 'DS'],
  [`deep.${ZONE}`, 'DS'],
  [`host.${ZONE}`, 'PTR'],
  [`10.${REVERSE}`, 'PTR'],
  [`7.${REVERSE}`, 'PTR'],
  [`www.${ZONE}`, 'CAA'],
];

const secret = randomBytes(32).toString('base64');
let server: RunningServer;
let reference: NsdPrimary;
let secondary: NsdSecondary;
let key: string;

const api = (method: string, path: string, body?: unknown, type = 'application/json') =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': type }) }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
const serial = (r: DigResult) => Number(r.answer.find((a) => a.type === 'SOA')?.data.split(' ')[2]);
/** What must match: status, the AA bit, the answer and additional sections (TTLs and order aside). */
const shape = (r: DigResult) => ({
  status: r.status,
  aa: r.flags.includes('aa'),
  answer: r.answer.map((a) => `${a.name} ${a.type} ${a.data}`).sort(),
  additional: r.additional.map((a) => `${a.name} ${a.type} ${a.data}`).sort(),
});

beforeAll(async () => {
  reference = await startNsdPrimary({ zones: { [ZONE]: FORWARD, [REVERSE]: BACKWARD } });
  const env = { PALISADE_DATA_DIR: tempDir() };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'rt', '--email', 'rt@example.org'])).stdout).key.api_key;
  const nsdPort = await freePort();
  const added = await runAdminCli(env, ['secondary', 'add', '--name', 'nsd', '--address', '127.0.0.1', '--tsig-key', `nsd-key:${secret}`, '--port', String(nsdPort), '--zone', ZONE, '--zone', REVERSE, '--no-catalog']);
  expect(added.code, added.stderr).toBe(0);
  server = await startServe(env);
  for (const [domain, text] of [[ZONE, FORWARD], [REVERSE, BACKWARD]] as const) {
    const created = await api('POST', '/domains', { domain, backend: '198.51.100.1' });
    expect(created.status, await created.text()).toBe(201);
    const imported = await api('POST', `/domains/${domain}/zonefile`, text, 'text/dns');
    expect(imported.status, await imported.text()).toBe(200);
    expect((await api('POST', `/domains/${domain}/activatens`)).status).toBe(200);
  }
  secondary = await startNsd({ primaryPort: server.dnsPort, key: { name: 'nsd-key', secret }, zones: [ZONE, REVERSE], port: nsdPort });
}, 120_000);

afterAll(async () => {
  await secondary?.stop();
  await reference?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe('CAA, PTR, TLSA, SSHFP, NAPTR and DS', () => {
  it('are answered as NSD answers the same zone file', async () => {
    let last = '';
    await until(`the imported zones served\n${last}`, async () => {
      const r = await dig(server.dnsPort, `10.${REVERSE}`, 'PTR');
      last = r.raw;
      return r.answer.length === 1;
    }, 20_000, 100).catch((e: Error) => {
      throw new Error(`${e.message}\n${last}`);
    });
    for (const [name, type] of QUESTIONS) {
      const ours = await dig(server.dnsPort, name, type);
      expect(ours.answer.length + (type === 'CAA' && name.startsWith('www') ? 1 : 0), `${name} ${type}\n${ours.raw}`).toBeGreaterThan(0);
      expect(shape(ours), `${name} ${type}`).toEqual(shape(await dig(reference.port, name, type)));
    }
  }, 60_000);

  it('answers a DS question at a delegation from the parent side, authoritatively, and refers the rest', async () => {
    const ds = await dig(server.dnsPort, `sub.${ZONE}`, 'DS');
    expect(ds.flags).toContain('aa');
    expect(ds.answer.map((a) => a.type)).toEqual(['DS', 'DS']);
    const below = await dig(server.dnsPort, `sub.${ZONE}`, 'A');
    expect(below.flags).not.toContain('aa');
    expect(below.authority.map((a) => a.type)).toEqual(['NS']);
    expect(shape(below)).toEqual(shape(await dig(reference.port, `sub.${ZONE}`, 'A')));
  }, 30_000);

  it('reach an NSD secondary by zone transfer, which answers the same', async () => {
    for (const zone of [ZONE, REVERSE]) {
      const want = serial(await dig(server.dnsPort, zone, 'SOA'));
      await until(`nsd at serial ${want} for ${zone}\n${secondary.output()}`, async () => serial(await dig(secondary.port, zone, 'SOA').catch(() => ({ answer: [] }) as unknown as DigResult)) === want, 30_000, 200);
    }
    for (const [name, type] of QUESTIONS) {
      expect(shape(await dig(secondary.port, name, type)), `${name} ${type}`).toEqual(shape(await dig(server.dnsPort, name, type)));
    }
  }, 60_000);

  it('a change to each new type reaches the secondary by IXFR after NOTIFY', async () => {
    const list = (await (await api('GET', `/domains/${ZONE}/dnsrecords?limit=1000`)).json()) as Array<{ id: number; type_name: string; value: string }>;
    const changes: Record<string, string> = {
      CAA: '0 issue "other-ca.example"',
      TLSA: `3 1 1 ${hex(64, '5a')}`,
      SSHFP: `4 2 ${hex(64, '6b')}`,
      NAPTR: '90 10 "S" "SIP+D2T" "" _sip._tcp.rt.example',
      DS: `54321 13 2 ${hex(64, '7c')}`,
      PTR: 'sip.rt.example',
    };
    const update = Object.entries(changes).map(([type, value]) => ({ id: list.find((r) => r.type_name === type)!.id, value }));
    const res = await api('POST', `/domains/${ZONE}/dnsrecords/bulk`, { update });
    expect(res.status, await res.text()).toBe(200);
    const want = serial(await dig(server.dnsPort, ZONE, 'SOA'));
    await until(`nsd at serial ${want}\n${secondary.output()}`, async () => serial(await dig(secondary.port, ZONE, 'SOA')) === want, 30_000, 200);
    // Answered from the journal of differences, not as a whole zone.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(Number(/^palisade_dns_ixfr_total (\d+)/m.exec(metrics)?.[1]), metrics.split('\n').filter((l) => l.includes('xfr')).join('\n')).toBeGreaterThan(0);
    for (const [name, type] of QUESTIONS.filter(([n]) => n.endsWith(ZONE))) {
      expect(shape(await dig(secondary.port, name, type)), `${name} ${type}`).toEqual(shape(await dig(server.dnsPort, name, type)));
    }
    expect((await dig(secondary.port, ZONE, 'CAA')).answer.map((a) => a.data)).toContain('0 issue "other-ca.example"');
  }, 60_000);

  it('export and import again: nothing changes', async () => {
    for (const zone of [ZONE, REVERSE]) {
      const exported = await (await api('GET', `/domains/${zone}/zonefile`)).text();
      await namedCheckzone(zone, exported);
      await knotZoneCheck(zone, exported);
      const again = await api('POST', `/domains/${zone}/zonefile?dry_run=true`, exported, 'text/dns');
      const body = (await again.json()) as { added: unknown[]; removed: unknown[]; errors?: unknown };
      expect(again.status, JSON.stringify(body)).toBe(200);
      expect({ added: body.added, removed: body.removed }, exported).toEqual({ added: [], removed: [] });
    }
  }, 30_000);
});
