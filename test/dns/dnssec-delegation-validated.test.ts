// Delegations under a signed zone, as a customer makes them through the API and a validating
// resolver sees them: a child that is another domain with dnssec on, whose DS (as the API shows
// it) the parent carries — a secure delegation, validated by Unbound (AD) and delv given only the
// parent's DS as trust anchor; a child without DS (unsigned) — an insecure delegation, answered
// without AD and never SERVFAIL. The DS question is the parent's even though this name server
// serves the child too: answered from the child (its own NODATA) the chain would break.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { freePort } from '../helpers/free-port.ts';
import { runAdminCli, START_TIMEOUT_MS, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { startUnbound, type Unbound } from '../helpers/unbound.ts';
import { until } from '../helpers/until.ts';

const PARENT = 'parent.example';
const SECURE = `secure.${PARENT}`;
const INSECURE = `insecure.${PARENT}`;

let server: RunningServer;
let unbound: Unbound;
let owner: string;
let parentDs: string;
let childDs: string;
let anchorsFile: string;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': owner, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function addDomain(domain: string, dnssec: boolean, records: object[]): Promise<void> {
  const created = await call('POST', '/domains', { domain, backend: '198.51.100.1', dnssec });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect((await call('GET', `/domains/${domain}/activatens`)).status).toBe(200);
  for (const record of records) {
    const added = await call('POST', `/domains/${domain}/dnsrecords`, record);
    expect(added.status, `${JSON.stringify(record)}: ${JSON.stringify(added.body)}`).toBe(201);
  }
}

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: String(await freePort()) };
  owner = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'owner', '--email', 'owner@example.org'])).stdout).key.api_key;
  server = await startServe(env);
  await addDomain(SECURE, true, [{ name: 'www', type: 'A', value: '192.0.2.80' }]);
  await addDomain(INSECURE, false, [{ name: 'www', type: 'A', value: '192.0.2.81' }]);
  childDs = (await call('GET', `/domains/${SECURE}/dnssec`)).body.keys[0].ds;
  await addDomain(PARENT, true, [
    { name: 'www', type: 'A', value: '192.0.2.70' },
    { name: 'secure', type: 'NS', value: 'ns1.example.net' },
    { name: 'secure', type: 'DS', value: childDs },
    { name: 'insecure', type: 'NS', value: 'ns1.example.net' },
  ]);
  parentDs = (await call('GET', `/domains/${PARENT}/dnssec`)).body.keys[0].ds;
  await until('zones served', async () => (await dig(server.dnsPort, `www.${PARENT}`, 'A')).answer.length === 1, 20_000, 200);
  // Each zone is a stub pointing at our name server (the delegations' NS names are not followed);
  // the only trust anchor is the parent's DS: the children are trusted, or not, through it.
  unbound = await startUnbound({ authorityPort: server.dnsPort, zones: [PARENT, SECURE, INSECURE], anchors: [`${PARENT}. DS ${parentDs}`] });
  anchorsFile = join(tempDir(), 'anchors.conf');
  const [tag, algorithm, digestType, digest] = parentDs.split(' ');
  writeFileSync(anchorsFile, `trust-anchors {\n  ${PARENT}. static-ds ${tag} ${algorithm} ${digestType} "${digest}";\n};\n`);
}, START_TIMEOUT_MS * 2);

afterAll(async () => {
  await unbound?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

async function resolved(name: string, type: string): Promise<DigResult> {
  const r = await unbound.ask(name, type);
  expect(r.status, `${name} ${type}: ${r.raw}\n${unbound.log().slice(-3000)}`).toBe('NOERROR');
  return r;
}

function delv(name: string, type: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('delv', ['@127.0.0.1', '-p', String(server.dnsPort), '-a', anchorsFile, `+root=${PARENT}`, name, type], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error && !stdout) return reject(new Error(`delv ${name} ${type}: ${error.message} (install the Debian package "bind9-dnsutils")\n${stderr}`));
      resolve(stdout + stderr);
    });
  });
}

describe('a secure delegation: a child domain with dnssec on, its DS at the parent', () => {
  it('the DS question is answered by the parent (its signature, AA), not by the child', async () => {
    const direct = await dig(server.dnsPort, SECURE, 'DS', ['+dnssec', '+norec']);
    expect(direct.flags).toContain('aa');
    expect(direct.answer.find((a) => a.type === 'DS')?.data.replace(/\s+/g, '').toLowerCase()).toBe(childDs.replace(/\s+/g, '').toLowerCase());
    const rrsig = direct.answer.find((a) => a.type === 'RRSIG')!;
    expect(rrsig.data.split(' ')[7]).toBe(`${PARENT}.`);
  });

  it('Unbound validates the child\'s answers through the parent (AD)', async () => {
    for (const [name, type] of [
      [SECURE, 'DS'],
      [SECURE, 'DNSKEY'],
      [`www.${SECURE}`, 'A'],
      [`nothing.${SECURE}`, 'A'],
      [`www.${PARENT}`, 'A'],
    ] as const) {
      const r = await resolved(name, type);
      expect(r.flags, `${name} ${type} not validated: ${r.raw}\n${unbound.log().slice(-3000)}`).toContain('ad');
    }
    expect((await resolved(`www.${SECURE}`, 'A')).answer.filter((a) => a.type === 'A').map((a) => a.data)).toEqual(['192.0.2.80']);
  });

  it('delv says "fully validated"', async () => {
    for (const [name, type] of [
      [`www.${SECURE}`, 'A'],
      [SECURE, 'DS'],
    ]) expect(await delv(name!, type!), `${name} ${type}`).toMatch(/fully validated/);
  });
});

describe('an insecure delegation: a child without DS', () => {
  it('the parent proves there is no DS: NODATA, its SOA, an NSEC at the cut with NS but neither DS nor SOA', async () => {
    const direct = await dig(server.dnsPort, INSECURE, 'DS', ['+dnssec', '+norec']);
    expect(direct.status).toBe('NOERROR');
    expect(direct.answer).toEqual([]);
    expect(direct.authority.find((a) => a.type === 'SOA')?.name).toBe(`${PARENT}.`);
    const nsec = direct.authority.find((a) => a.type === 'NSEC')!;
    expect(nsec.name).toBe(`${INSECURE}.`);
    expect(nsec.data.split(' ').slice(1).sort()).toEqual(['NS', 'NSEC', 'RRSIG']);
  });

  it('Unbound resolves the child without AD, never SERVFAIL; the proof of no DS itself validates', async () => {
    for (let round = 0; round < 2; round++) {
      const r = await resolved(`www.${INSECURE}`, 'A');
      expect(r.flags).not.toContain('ad');
      expect(r.answer.filter((a) => a.type === 'A').map((a) => a.data)).toEqual(['192.0.2.81']);
      const nx = await unbound.ask(`nothing.${INSECURE}`, 'A');
      expect(nx.status, nx.raw).toBe('NXDOMAIN');
      expect(nx.flags).not.toContain('ad');
    }
    const ds = await resolved(INSECURE, 'DS');
    expect(ds.flags).toContain('ad');
    expect(ds.answer).toEqual([]);
  });

  it('delv says the answer is unsigned (insecure), not a failure', async () => {
    const out = await delv(`www.${INSECURE}`, 'A');
    expect(out).toMatch(/unsigned answer/);
    expect(out).toContain('192.0.2.81');
  });
});
