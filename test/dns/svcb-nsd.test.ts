// HTTPS and SVCB against real NSD: one zone file with many forms, loaded into NSD and imported
// into a real palisade through the API, answers compared with dig; the export imported again
// changes nothing; and an NSD secondary takes the zone by transfer and answers the same.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { freePort } from '../helpers/knot-secondary.ts';
import { startNsdPrimary, type NsdPrimary } from '../helpers/nsd-primary.ts';
import { startNsd, type NsdSecondary } from '../helpers/nsd-secondary.ts';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const ZONE = 'svcb.example';
const ECH = 'AEn+DQBFKwAgACABWIHUGj4u+PIggYXcR5JF0gYk3dCRioBW8uJq9H4mKAAIAAEAAQABAANAEnB1YmxpYy50bHMtZWNoLmRldgAA';
// Owner, type and data, as a zone file may spell them (relative targets, quoting, escapes, key order).
const FORMS: Array<[string, 'HTTPS' | 'SVCB', string]> = [
  ['@', 'HTTPS', '1 . alpn=h2,h3 ipv4hint=192.0.2.1 ipv6hint=2001:db8::1'],
  ['alias', 'HTTPS', '0 pool'],
  ['nowhere', 'HTTPS', '0 .'],
  ['pool', 'HTTPS', '1 . alpn="h2,http/1.1" port=8443 no-default-alpn mandatory=port,alpn'],
  ['multi', 'HTTPS', '1 pool.svcb.example. alpn=h3'],
  ['multi', 'HTTPS', '2 far.example.net. alpn=h2 port=443'],
  ['ech', 'HTTPS', `1 . ech=${ECH} alpn=h2`],
  ['esc', 'HTTPS', '1 . alpn="f\\\\\\\\oo\\\\,bar,h2"'],
  ['esc2', 'HTTPS', '1 . alpn=h2\\,x,h3'],
  ['_dns', 'SVCB', '1 dns alpn=dot,h2 port=853 dohpath=/dns-query{?dns}'],
  ['generic', 'SVCB', '3 . key667=hello key65000="a\\,b" key23="\\001\\255"'],
  ['keynum', 'SVCB', '1 . key3=8443 key1=h2'],
];
const ZONE_FILE = [
  `$ORIGIN ${ZONE}.`,
  '$TTL 300',
  '@ IN SOA ns1.svcb.example. hostmaster.svcb.example. 1 7200 900 1209600 300',
  '@ IN NS ns1.svcb.example.',
  'ns1 A 192.0.2.53',
  '@ A 192.0.2.1',
  '@ AAAA 2001:db8::1',
  'pool A 192.0.2.10',
  'dns A 192.0.2.53',
  'www CNAME svcb.example.',
  ...FORMS.map(([owner, type, data]) => `${owner} ${type} ${data}`),
  '',
].join('\n');

const secret = randomBytes(32).toString('base64');
let server: RunningServer;
let reference: NsdPrimary;
let secondary: NsdSecondary;
let key: string;

const api = async (method: string, path: string, body?: unknown, raw?: string) => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(raw !== undefined ? { 'content-type': 'text/dns' } : body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text };
};
const answers = (r: DigResult) => ({ status: r.status, answer: r.answer.map((a) => `${a.name} ${a.ttl} ${a.type} ${a.data}`).sort() });
const QUESTIONS = [...new Set(FORMS.map(([owner, type]) => `${owner === '@' ? ZONE : `${owner}.${ZONE}`} ${type}`)), `www.${ZONE} HTTPS`, `pool.${ZONE} SVCB`];

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir() };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'svcb', '--email', 'svcb@example.org'])).stdout).key.api_key;
  const secondaryPort = await freePort();
  const added = await runAdminCli(env, ['secondary', 'add', '--name', 'nsd', '--address', '127.0.0.1', '--tsig-key', `nsd-key:${secret}`, '--port', String(secondaryPort), '--zone', ZONE, '--no-catalog']);
  expect(added.code, added.stderr).toBe(0);
  server = await startServe(env);
  // DNS only, the backend at the apex's address: the apex A the service adds is the file's.
  expect((await api('POST', '/domains', { domain: ZONE, backend: '192.0.2.1' })).status).toBe(201);
  const imported = await api('POST', `/domains/${ZONE}/zonefile`, undefined, ZONE_FILE);
  expect(imported.status, JSON.stringify(imported.body)).toBe(200);
  expect((await api('POST', `/domains/${ZONE}/activatens`)).status).toBe(200);
  reference = await startNsdPrimary({ zones: { [ZONE]: ZONE_FILE } });
  secondary = await startNsd({ primaryPort: server.dnsPort, key: { name: 'nsd-key', secret }, zones: [ZONE], port: secondaryPort });
}, 120_000);

afterAll(async () => {
  await secondary?.stop();
  await reference?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe('HTTPS and SVCB beside NSD', () => {
  it('the zone file imported through the API answers as NSD answers from the same file', async () => {
    expect(reference.output()).not.toMatch(/error/i);
    for (const q of QUESTIONS) {
      const [name, type] = q.split(' ') as [string, string];
      const ours = answers(await dig(server.dnsPort, name, type));
      if (!q.startsWith('pool.') || !q.endsWith('SVCB')) expect(ours.answer.length, q).toBeGreaterThan(0);
      expect(ours, q).toEqual(answers(await dig(reference.port, name, type)));
    }
  }, 60_000);

  it('stores each value as NSD prints it', async () => {
    const list = (await api('GET', `/domains/${ZONE}/dnsrecords?limit=1000`)).body as Array<{ name: string; type_name: string; value: string }>;
    const https = list.filter((r) => r.type_name === 'HTTPS' || r.type_name === 'SVCB');
    expect(https).toHaveLength(FORMS.length);
    expect(https.find((r) => r.name === '@')!.value).toBe('1 . alpn="h2,h3" ipv4hint=192.0.2.1 ipv6hint=2001:db8::1');
    expect(https.find((r) => r.name === 'pool')!.value).toBe('1 . mandatory=alpn,port alpn="h2,http/1.1" no-default-alpn port=8443');
    expect(https.find((r) => r.name === '_dns')!.value).toBe('1 dns.svcb.example. alpn="dot,h2" port=853 dohpath="/dns-query{?dns}"');
    expect(https.find((r) => r.name === 'alias')!.value).toBe('0 pool.svcb.example.');
  });

  it('the export, imported again, changes nothing; NSD loads the export and answers the same', async () => {
    const exported = (await api('GET', `/domains/${ZONE}/zonefile`)).body as string;
    expect(exported).toContain('HTTPS 1 . alpn="h2,h3"');
    const again = await api('POST', `/domains/${ZONE}/zonefile`, undefined, exported);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ added: [], changed: [], removed: [] });
    const fromExport = await startNsdPrimary({ zones: { [ZONE]: exported } });
    try {
      for (const q of QUESTIONS) {
        const [name, type] = q.split(' ') as [string, string];
        expect(answers(await dig(fromExport.port, name, type)), q).toEqual(answers(await dig(server.dnsPort, name, type)));
      }
    } finally {
      await fromExport.stop();
    }
  }, 60_000);

  it('an NSD secondary transfers the zone and answers HTTPS and SVCB as we do', async () => {
    const serial = (r: DigResult) => Number(r.answer.find((a) => a.type === 'SOA')?.data.split(' ')[2]);
    const want = serial(await dig(server.dnsPort, ZONE, 'SOA'));
    await until(`nsd at serial ${want}\n${secondary.output()}`, async () => serial(await dig(secondary.port, ZONE, 'SOA').catch(() => ({ answer: [] }) as unknown as DigResult)) === want, 20_000, 200);
    for (const q of QUESTIONS) {
      const [name, type] = q.split(' ') as [string, string];
      expect(answers(await dig(secondary.port, name, type)), q).toEqual(answers(await dig(server.dnsPort, name, type)));
    }
  }, 60_000);

  it('an HTTPS change through the API reaches the secondary by NOTIFY and IXFR', async () => {
    const serial = (r: DigResult) => Number(r.answer.find((a) => a.type === 'SOA')?.data.split(' ')[2]);
    const from = serial(await dig(server.dnsPort, ZONE, 'SOA'));
    const list = (await api('GET', `/domains/${ZONE}/dnsrecords?name=multi&type=HTTPS`)).body as Array<{ id: number; value: string }>;
    const far = list.find((r) => r.value.startsWith('2 '))!;
    const patched = await api('PATCH', `/domains/${ZONE}/dnsrecords/${far.id}`, { value: '3 far.example.net. alpn=h3 ech=' + ECH });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const added = await api('POST', `/domains/${ZONE}/dnsrecords`, { name: 'fresh', type: 'SVCB', value: '1 . alpn=h2 port=8080' });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const wanted = `fresh.${ZONE}. 300 SVCB 1 . alpn="h2" port=8080`;
    await until(`nsd serving the change\n${secondary.output()}`, async () => answers(await dig(secondary.port, `fresh.${ZONE}`, 'SVCB')).answer.join() === wanted, 20_000, 200);
    for (const q of [`multi.${ZONE} HTTPS`, `fresh.${ZONE} SVCB`]) {
      const [name, type] = q.split(' ') as [string, string];
      expect(answers(await dig(secondary.port, name, type)), q).toEqual(answers(await dig(server.dnsPort, name, type)));
    }
    expect(answers(await dig(secondary.port, `multi.${ZONE}`, 'HTTPS')).answer.join('\n')).toContain(`3 far.example.net. alpn="h3" ech=${ECH}`);
    // Our IXFR from before the change is incremental (more than the AXFR form's two SOAs): the
    // old HTTPS out, the new HTTPS and the SVCB in.
    const ixfr = await dig(server.dnsPort, ZONE, `IXFR=${from}`, ['-y', `hmac-sha256:nsd-key:${secret}`]);
    // dig prints a transfer without sections: its records are the lines that are not comments.
    const rrs = ixfr.raw.split('\n').filter((l) => l.trim() !== '' && !l.startsWith(';')).map((l) => l.split(/\s+/));
    expect(rrs.filter((f) => f[3] === 'SOA').length, ixfr.raw).toBeGreaterThan(2);
    const changed = rrs.filter((f) => f[3] === 'HTTPS' || f[3] === 'SVCB').map((f) => `${f[0]} ${f[3]} ${f.slice(4).join(' ')}`);
    expect(changed).toEqual([`multi.${ZONE}. HTTPS 2 far.example.net. alpn="h2" port=443`, `multi.${ZONE}. HTTPS 3 far.example.net. alpn="h3" ech=${ECH}`, `fresh.${ZONE}. SVCB 1 . alpn="h2" port=8080`]);
  }, 60_000);

  it('HTTPS at the apex carries the apex addresses in ADDITIONAL (RFC 9460 §4.1, as BIND adds them; NSD 4.6 adds none)', async () => {
    const r = await dig(server.dnsPort, ZONE, 'HTTPS');
    expect(r.additional.map((a) => `${a.name} ${a.type} ${a.data}`).sort()).toEqual([`${ZONE}. A 192.0.2.1`, `${ZONE}. AAAA 2001:db8::1`]);
    const alias = await dig(server.dnsPort, `alias.${ZONE}`, 'HTTPS');
    expect(alias.additional.map((a) => `${a.name} ${a.type}`).sort()).toEqual([`pool.${ZONE}. A`, `pool.${ZONE}. HTTPS`]);
  });
});
