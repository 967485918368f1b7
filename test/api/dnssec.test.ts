// DNSSEC keys end to end, through a real `palisade serve` (API, name server and edge) and a second
// name server (`palisade dns`) fed from its API: turning `dnssec` on makes a signing key whose DS
// BIND's dnssec-dsfromkey agrees with; the name servers' feed carries the private key (and the
// second name server keeps it in its local state); the edges' feed, /metrics, every API answer
// and every log line never do; another account sees nothing (404).
import { spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.ts';
import { runAdminCli, START_TIMEOUT_MS, startNameServer, startServe, stopStarted, type RunningNameServer, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';
import { dig } from '../helpers/dig.ts';
import { startUnbound } from '../helpers/unbound.ts';

const ZONE = 'signed.example';

let server: RunningServer;
let ns2: RunningNameServer;
let ns2Dir: string;
let owner: string;
let other: string;
let nsToken: string;
let adminEnv: Record<string, string>;
let edgeToken: string;
/** Every API answer's body, to grep for keys at the end. */
const answers: string[] = [];

async function call(method: string, path: string, body?: unknown, key = owner): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  answers.push(text);
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const feed = async (path: string, token: string) => {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return response.text();
};

/** What dnssec-dsfromkey (bind9-utils) makes of a DNSKEY. */
function bindDs(dnskey: string): string {
  const file = join(tempDir(), 'dnskey.db');
  writeFileSync(file, `${ZONE}. 3600 IN DNSKEY ${dnskey}\n`);
  const run = spawnSync('dnssec-dsfromkey', ['-2', '-f', file, ZONE], { encoding: 'utf8' });
  if (run.error) throw new Error('dnssec-dsfromkey is required for this test (Debian: apt-get install bind9-utils)');
  return /\sDS\s+(\d+ \d+ 2 [0-9A-F]+)\s*$/.exec(run.stdout.trim())?.[1] ?? `dnssec-dsfromkey said: ${run.stdout} ${run.stderr}`;
}

/** The signed zone's domain as a snapshot line of the name servers' feed carries it. */
async function nameServerDomain(): Promise<any> {
  const lines = (await feed('/sync/snapshot', nsToken)).trim().split('\n').map((l) => JSON.parse(l));
  return lines.find((l) => l.zone?.domain.domain === ZONE)?.zone.domain;
}

/** The DNSKEY public key field of a PKCS#8 private key, as a validator would rebuild it. */
function publicField(privateKey: string): string {
  const jwk = createPublicKey(createPrivateKey({ key: Buffer.from(privateKey, 'base64'), format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  return (jwk.crv === 'P-256' ? Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]) : Buffer.from(jwk.x!, 'base64url')).toString('base64');
}

/** Every file of a directory tree, read whole (the name server's local state: LMDB files). */
function filesText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name)).toString('latin1'))
    .join('\n');
}

/** The private keys the name servers' feed handed out during the test. */
const privateKeys = new Set<string>();

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: String(await freePort()) };
  adminEnv = env;
  const admin = async (args: string[]) => JSON.parse((await runAdminCli(env, args)).stdout);
  owner = (await admin(['user', 'create', '--name', 'owner', '--email', 'owner@example.org'])).key.api_key;
  other = (await admin(['user', 'create', '--name', 'other', '--email', 'other@example.org'])).key.api_key;
  await admin(['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  const notifyPort = await freePort();
  const ns = await admin(['consumer', 'add', '--name', 'ns2', '--url', `http://127.0.0.1:${notifyPort}/notify`]);
  nsToken = ns.token;
  edgeToken = (await admin(['consumer', 'add', '--name', 'edge-e1', '--node', '1'])).token;
  server = await startServe(env);
  ns2Dir = tempDir();
  ns2 = await startNameServer({ PALISADE_DATA_DIR: ns2Dir, PALISADE_SYNC_URL: server.url, PALISADE_SYNC_TOKEN: ns.token, PALISADE_SYNC_SECRET: ns.secret, PALISADE_SYNC_PORT: String(notifyPort), PALISADE_SYNC_POLL_MS: '300' });
  expect((await call('POST', '/domains', { domain: ZONE, backend: '198.51.100.1' })).status).toBe(201);
  expect((await call('GET', `/domains/${ZONE}/activatens`)).status).toBe(200);
}, START_TIMEOUT_MS * 3);

afterAll(async () => {
  await stopStarted('SIGTERM');
  removeTempDirs();
});

describe('DNSSEC keys', () => {
  it('off by default: no keys, state off', async () => {
    expect((await call('GET', `/domains/${ZONE}`)).body).toMatchObject({ dnssec: false, dnssec_algorithm: 13 });
    expect((await call('GET', `/domains/${ZONE}/dnssec`)).body).toMatchObject({ state: 'off', algorithm: 13, keys: [], parent: null });
  });

  it('turning dnssec on makes a P-256 CSK whose DS dnssec-dsfromkey agrees with', async () => {
    const patched = await call('PATCH', `/domains/${ZONE}`, { dnssec: true });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ dnssec: true, dnssec_algorithm: 13 });
    const { body } = await call('GET', `/domains/${ZONE}/dnssec`);
    expect(body).toMatchObject({ state: 'signing', algorithm: 13 });
    expect(body.keys).toHaveLength(1);
    const [key] = body.keys;
    expect(key).toMatchObject({ flags: 257, algorithm: 13 });
    expect(Object.keys(key).sort()).toEqual(['algorithm', 'dnskey', 'ds', 'flags', 'key_tag', 'role']);
    expect(key.dnskey).toMatch(/^257 3 13 [A-Za-z0-9+/]{86}==$/);
    expect(key.ds).toBe(bindDs(key.dnskey));
    expect(key.ds.startsWith(`${key.key_tag} 13 2 `)).toBe(true);
  });

  it('the name servers\' feed carries the key in the clear (snapshot, changes, the zone whole), and the second name server keeps it in its local state', async () => {
    const dnskey = (await call('GET', `/domains/${ZONE}/dnssec`)).body.keys[0].dnskey as string;
    const domain = await nameServerDomain();
    const [key] = domain.signing.keys;
    expect(key).toMatchObject({ algorithm: 13, flags: 257, active: true });
    // The private key that goes with the DNSKEY shown: the name servers can sign for that DS.
    expect(publicField(key.private_key)).toBe(dnskey.split(' ')[3]);
    expect(key.public_key).toBe(dnskey.split(' ')[3]);
    privateKeys.add(key.private_key);
    const changes = JSON.parse(await feed('/sync/changes?since=0&v=2', nsToken));
    // The zone's creation is in the page: it comes whole, as it now is (settings changes after it fold into it).
    const last = changes.changes.filter((c: any) => c.key === ZONE && (c.domain || c.data)).at(-1);
    expect((last.domain ?? last.data.domain).signing.keys[0].private_key).toBe(key.private_key);
    // A name server that is up to date hears of a settings change as the domain alone: with its keys.
    const revision = changes.revision;
    expect((await call('PATCH', `/domains/${ZONE}`, { tags: ['x'], mask: 'www,shop' })).status).toBe(200);
    const later = JSON.parse(await feed(`/sync/changes?since=${revision}&v=2`, nsToken));
    expect(later.changes.find((c: any) => c.key === ZONE).domain.signing.keys[0].private_key).toBe(key.private_key);
    expect(JSON.parse(await feed(`/sync/zones/${ZONE}`, nsToken)).domain.signing.keys[0].private_key).toBe(key.private_key);
    await until('the second name server to keep the key', () => filesText(ns2Dir).includes(key.private_key), 30_000, 200);
  });

  it('both name servers sign with that key: Unbound, given only the DS the API shows as its trust anchor, validates their answers', async () => {
    // The whole path as a customer takes it: the setting turned on through the API, the key made
    // and sealed there, carried by the feed to serve's name server and to a second one, and the
    // DS pasted at a "parent" — here the resolver's trust anchor.
    expect((await call('POST', `/domains/${ZONE}/dnsrecords`, { name: 'mail', type: 1, value: '192.0.2.25' })).status).toBe(201);
    const ds = (await call('GET', `/domains/${ZONE}/dnssec`)).body.keys[0].ds as string;
    for (const port of [server.dnsPort, ns2.dnsPort]) {
      const unbound = await startUnbound({ authorityPort: port, zones: [ZONE], anchors: [`${ZONE}. DS ${ds}`] });
      try {
        await until(`name server on ${port} to serve the new record`, async () => (await dig(port, `mail.${ZONE}`, 'A')).answer.length > 0, 20_000, 200);
        for (const [name, type] of [[`mail.${ZONE}`, 'A'], [ZONE, 'SOA'], [ZONE, 'DNSKEY'], [`none.${ZONE}`, 'A'], [`mail.${ZONE}`, 'AAAA']] as const) {
          const r = await unbound.ask(name, type);
          expect(r.status, `${name} ${type} via ${port}: ${r.raw}\n${unbound.log().slice(-2000)}`).not.toBe('SERVFAIL');
          expect(r.flags, `${name} ${type} via ${port} not validated: ${r.raw}\n${unbound.log().slice(-2000)}`).toContain('ad');
        }
      } finally {
        await unbound.stop();
      }
    }
  });

  it('another account gets 404 for the domain\'s DNSSEC and cannot change it', async () => {
    expect((await call('GET', `/domains/${ZONE}/dnssec`, undefined, other)).status).toBe(404);
    expect((await call('PATCH', `/domains/${ZONE}`, { dnssec: false }, other)).status).toBe(404);
    expect((await call('GET', `/domains/${ZONE}/dnssec`)).body.state).toBe('signing');
  });

  it('the algorithm of a signed zone cannot change (409); turned off without a resolver to see the parent, it stays unsigning (signed, the delete signal); on again, the same DS', async () => {
    const ds = (await call('GET', `/domains/${ZONE}/dnssec`)).body.keys[0].ds;
    const refused = await call('PATCH', `/domains/${ZONE}`, { dnssec_algorithm: 15 });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('algorithm rollover');
    expect((await call('PATCH', `/domains/${ZONE}`, { dnssec: false })).status).toBe(200);
    const unsigning = (await call('GET', `/domains/${ZONE}/dnssec`)).body;
    expect(unsigning).toMatchObject({ state: 'unsigning', algorithm: 13 });
    expect(unsigning.keys[0].ds).toBe(ds);
    expect(unsigning.next_step).toContain('operator');
    // Name servers keep the key (they go on signing, and publish the delete signal).
    const off = await nameServerDomain();
    expect(off.dnssec).toBe(false);
    expect(off.signing.unsigning).toBe(true);
    await until('the delete signal', async () => (await dig(server.dnsPort, ZONE, 'CDS')).answer[0]?.data === '0 0 0 00', 20_000, 200);
    expect((await call('PATCH', `/domains/${ZONE}`, { dnssec: true })).status).toBe(200);
    const on = (await call('GET', `/domains/${ZONE}/dnssec`)).body;
    expect(on.state).toBe('signing');
    expect(on.keys[0].ds).toBe(ds);
    expect((await nameServerDomain()).signing.unsigning).toBeUndefined();
  });

  it('Ed25519 (15): turned off, the algorithm changed, on again makes a new key, its DS as dnssec-dsfromkey says', async () => {
    const old = (await call('GET', `/domains/${ZONE}/dnssec`)).body.keys[0].ds;
    expect((await call('PATCH', `/domains/${ZONE}`, { dnssec: false, dnssec_algorithm: 15 })).status).toBe(200);
    // Still unsigning (the parent may hold the DS of the P-256 key): a new key's algorithm is refused.
    const refused = await call('PATCH', `/domains/${ZONE}`, { dnssec: true });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('being turned off');
    // The operator says the DS is gone: off, and the name servers no longer get the key.
    const ended = await runAdminCli(adminEnv, ['domain', 'dnssec-off', ZONE]);
    expect(ended.code, ended.stderr).toBe(0);
    expect((await call('GET', `/domains/${ZONE}/dnssec`)).body).toMatchObject({ state: 'off', keys: [] });
    expect((await nameServerDomain()).signing).toBeUndefined();
    expect((await call('PATCH', `/domains/${ZONE}`, { dnssec: true })).status).toBe(200);
    const { body } = await call('GET', `/domains/${ZONE}/dnssec`);
    expect(body).toMatchObject({ state: 'signing', algorithm: 15 });
    const [key] = body.keys;
    expect(key.dnskey).toMatch(/^257 3 15 [A-Za-z0-9+/]{43}=$/);
    expect(key.ds).toBe(bindDs(key.dnskey));
    expect(key.ds).not.toBe(old);
    const domain = await nameServerDomain();
    expect(publicField(domain.signing.keys[0].private_key)).toBe(key.dnskey.split(' ')[3]);
    privateKeys.add(domain.signing.keys[0].private_key);
    // A domain registered with dnssec on gets its key at once.
    const created = await call('POST', '/domains', { domain: 'born-signed.example', backend: '198.51.100.2', dnssec: true, dnssec_algorithm: 15 });
    expect(created.status).toBe(201);
    expect((await call('GET', '/domains/born-signed.example/dnssec')).body).toMatchObject({ state: 'signing', algorithm: 15, keys: [{ flags: 257, algorithm: 15 }] });
  });

  it('the private keys are nowhere else: not in the edge\'s feed, /metrics, any API answer or any log line', async () => {
    expect(privateKeys.size).toBe(2);
    const edgeSnapshot = await feed('/sync/edge/snapshot', edgeToken);
    // Not empty: the signed domain is there, without its keys.
    expect(edgeSnapshot).toContain(`"domain":"${ZONE}"`);
    const edgeChanges = await feed('/sync/edge/changes?since=0', edgeToken);
    expect(edgeChanges).toContain(`"key":"${ZONE}"`);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('palisade_');
    const lists = [(await call('GET', '/domains')).body, (await call('GET', `/domains/${ZONE}`)).body];
    expect(JSON.stringify(lists)).toContain(ZONE);
    // What the zone publishes for parents (CDS, CDNSKEY: RFC 7344) is public: digests and the public key.
    const published: string[] = [];
    for (const port of [server.dnsPort, ns2.dnsPort]) {
      for (const type of ['CDS', 'CDNSKEY', 'DNSKEY']) published.push((await dig(port, ZONE, type, ['+dnssec'])).raw);
    }
    expect(published.join('\n')).toContain('CDNSKEY');
    const places: Record<string, string> = {
      'edge snapshot': edgeSnapshot,
      'edge changes': edgeChanges,
      metrics,
      'API answers': answers.join('\n'),
      'serve log': server.output(),
      'name server log': ns2.output(),
      'CDS, CDNSKEY and DNSKEY answers': published.join('\n'),
    };
    for (const [place, text] of Object.entries(places)) {
      for (const key of privateKeys) expect(text.includes(key), `a private key in the ${place}`).toBe(false);
      expect(text, place).not.toContain('private_key');
      expect(text, place).not.toContain('"signing":');
    }
  });
});
