// Issue 26 end to end on `palisade serve` with PALISADE_OWNERSHIP_PROOF=required, a real DNS
// server standing for the resolver and the registry (PALISADE_DELEGATION_RESOLVER; delegations
// asked of the TLD's server without recursion, TXT records through the resolver) and `dig`
// against our name server:
// - B squats brand.example and shop.brand.example; A registers brand.example (201, pending, its
//   own pair); B proves nothing by being first, nor with A's token; A's delegation appears at the
//   registry, the monitor proves A, B's claims are released and both accounts are told; A's zone
//   is served and routed, never B's;
// - under A's proven zone, C's claim is proven only by what A puts in brand.example (the token at
//   the registry proves nothing there);
// - A deletes brand.example while the registry still delegates it to A's pair: D (whose account
//   pair is A's) registers it, gets another pair, and the old delegation neither proves nor
//   serves it;
// - certificates (DNS-01 and HTTP-01 alike) are refused for pending claims and asked for on proof;
// - a proof whose token is gone for the grace period is lost (told), and the domain unserved.
import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificate } from '../helpers/certs.ts';
import { dig } from '../helpers/dig.ts';
import { startRegistryDns, type RegistryDns } from '../helpers/registry-dns.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let serve: RunningServer;
let env: Record<string, string>;
let registry: RegistryDns;
let backend: Server;
let backendPort: number;
const backendHits: string[] = [];
const keys: Record<'A' | 'B' | 'C' | 'D', string> = { A: '', B: '', C: '', D: '' };
const ids: Record<'A' | 'B' | 'C' | 'D', number> = { A: 0, B: 0, C: 0, D: 0 };
/** What the registry (and the world's DNS beyond it) answers: NS sets and TXT strings by name. */
let ns: Map<string, string[]>;
let txt: Map<string, string[]>;

type Who = keyof typeof keys;
const call = async (who: Who, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${serve.url}${path}`, { method, headers: { 'x-auth-key': keys[who], ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};
const events = async (who: Who) => ((await call(who, 'GET', '/me/events?limit=100')).body as Array<{ type: string; domain: string; data: Record<string, unknown> }>).filter((e) => e.type.startsWith('domain.'));

const admin = async (args: string[]) => {
  const out = await runAdminCli(env, args);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout);
};

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${serve.output().split('\n').filter((l) => !l.includes('request completed')).join('\n').slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One request through the edge with a chosen Host. */
function edge(host: string): Promise<{ status: number; body: string }> {
  const url = new URL(serve.edgeUrl!);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: '/', headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  // The registry and the resolver in one (its TLD's server is the registry stand-in too).
  registry = await startRegistryDns();
  ns = registry.ns;
  txt = registry.txt;
  backend = createServer((req, res) => {
    backendHits.push(String(req.headers.host));
    res.end(`backend of ${req.headers.host}`);
  });
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  backendPort = (backend.address() as { port: number }).port;
  env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_OWNERSHIP_PROOF: 'required',
    PALISADE_DELEGATION_RESOLVER: `127.0.0.1:${registry.port}`,
    // The TLD's server is the registry stand-in too (a lab cannot listen on port 53).
    PALISADE_DELEGATION_PARENT_PORT: String(registry.port),
    PALISADE_NS1: 'ns1.pal.test',
    PALISADE_NS2: 'ns2.pal.test',
    // Three names, three pairs: the fourth account shares the first one's pair.
    PALISADE_NAMESERVER_POOL: 'ns1.pal.test,ns2.pal.test,ns3.pal.test',
    PALISADE_OWNERSHIP_RECHECK_SECONDS: '1',
    PALISADE_OWNERSHIP_RECHECK_MAX_SECONDS: '2',
    PALISADE_OWNERSHIP_GRACE_SECONDS: '2',
    PALISADE_MONITOR_SWEEP_SECONDS: '1',
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
  };
  for (const who of ['A', 'B', 'C', 'D'] as const) {
    const made = await admin(['user', 'create', '--name', who, '--email', `${who.toLowerCase()}@example.org`]);
    keys[who] = made.key.api_key;
    ids[who] = made.user.id;
  }
  serve = await startServe(env);
}, 90_000);

afterAll(async () => {
  if (serve) await stopProcess(serve);
  await registry?.close();
  backend?.close();
  removeTempDirs();
});

describe('claims and their proof', { timeout: 90_000 }, () => {
  let pairA: string[];

  it('each account has its own pair (GET /me)', async () => {
    const me = await Promise.all((['A', 'B', 'C', 'D'] as const).map(async (who) => (await call(who, 'GET', '/me')).body.nameservers as string[]));
    expect(me[0]).toEqual(['ns1.pal.test', 'ns2.pal.test']);
    expect(me[1]).toEqual(['ns1.pal.test', 'ns3.pal.test']);
    expect(me[2]).toEqual(['ns2.pal.test', 'ns3.pal.test']);
    expect(me[3]).toEqual(me[0]);
  });

  it('B squats; A registers the same name (201, pending); B proves nothing by being first, nor with A\'s token; A\'s delegation proves A and releases B', async () => {
    const backendText = `127.0.0.1:${backendPort}`;
    for (const name of ['brand.example', 'shop.brand.example']) {
      const made = await call('B', 'POST', '/domains', { domain: name, backend: backendText });
      expect(made.status).toBe(201);
      expect(made.body.verification).toMatchObject({ state: 'pending', method: null, token: expect.stringMatching(/^palisade-verify=[0-9a-f]{32}$/) });
      expect((await call('B', 'POST', `/domains/${name}/activatens`)).status).toBe(200);
    }
    expect((await call('B', 'POST', '/domains/brand.example/dnsrecords', { name: 'www', type: 'A', value: '192.0.2.66' })).status).toBe(201);
    // A pending claim is not served, however its name servers are set, nor routed.
    expect((await dig(serve.dnsPort, 'www.brand.example', 'A')).status).toBe('REFUSED');
    expect((await edge('www.brand.example')).body).not.toContain('backend of');

    const a = await call('A', 'POST', '/domains', { domain: 'brand.example', backend: backendText });
    expect(a.status).toBe(201);
    expect(a.body.verification.state).toBe('pending');
    pairA = a.body.nameservers;
    expect(pairA).toEqual(['ns1.pal.test', 'ns2.pal.test']);
    const b = (await call('B', 'GET', '/domains/brand.example')).body;
    expect(b.nameservers).toEqual(['ns1.pal.test', 'ns3.pal.test']);
    expect(b.verification.token).not.toBe(a.body.verification.token);
    expect((await call('A', 'POST', '/domains/brand.example/activatens')).status).toBe(200);
    expect((await call('A', 'POST', '/domains/brand.example/dnsrecords', { name: 'www', type: 'A', value: '192.0.2.1' })).status).toBe(201);

    // B asks first: nothing is there, so nothing is proven.
    const first = await call('B', 'POST', '/domains/brand.example/verify');
    expect(first.status).toBe(200);
    expect(first.body.verification).toMatchObject({ state: 'pending', seen: { delegation: false, token: false, from: 'resolver' } });
    // A token of another claim (A's, of another name) proves nothing for B: a token is its claim's alone.
    const other = (await call('A', 'POST', '/domains', { domain: 'a-other.example', backend: backendText })).body.verification.token as string;
    txt.set('_palisade-verify.brand.example', [other]);
    expect((await call('B', 'POST', '/domains/brand.example/verify')).body.verification).toMatchObject({ state: 'pending', seen: { token: false, txt: [other] } });
    expect((await call('A', 'POST', '/domains/brand.example/verify')).body.verification.state).toBe('pending');
    txt.delete('_palisade-verify.brand.example');
    // A delegation naming B's pair beside A's proves no one.
    ns.set('brand.example', ['ns1.pal.test', 'ns2.pal.test', 'ns3.pal.test']);
    expect((await call('B', 'POST', '/domains/brand.example/verify')).body.verification.state).toBe('pending');
    expect((await call('A', 'POST', '/domains/brand.example/verify')).body.verification.state).toBe('pending');

    // The registrar now delegates to A's pair: the monitor's next look proves A (no request needed).
    ns.set('brand.example', [...pairA]);
    const proven = await until('A proven', async () => {
      const got = (await call('A', 'GET', '/domains/brand.example')).body;
      return got.verification.state === 'verified' && got;
    });
    expect(proven.verification).toMatchObject({ method: 'delegation', seen: { delegation: true, nameservers: pairA } });
    expect(proven.records).toBe(1);
    // B's claims at and under the name are released (a few store steps after the proof: waited
    // for), and B is told of each; A is told too.
    await until("B's claims released", async () => (await call('B', 'GET', '/domains/brand.example')).status === 404 && (await call('B', 'GET', '/domains/shop.brand.example')).status === 404);
    const told = await until('B told', async () => {
      const list = (await events('B')).filter((e) => e.type === 'domain.claim_released');
      return list.length === 2 && list;
    });
    expect(told.map((e) => e.domain).sort()).toEqual(['brand.example', 'shop.brand.example']);
    for (const event of told) expect(event.data).toMatchObject({ by: 'proof', proven: 'brand.example' });
    const verified = (await events('A')).find((e) => e.type === 'domain.verified')!;
    expect(verified).toMatchObject({ domain: 'brand.example', data: { method: 'delegation' } });
    expect((verified.data.released as string[]).sort()).toEqual(['brand.example', 'shop.brand.example']);

    // A's zone is what our name server answers, with A's pair at the apex; the edge routes it.
    const www = await until('served', async () => {
      const r = await dig(serve.dnsPort, 'www.brand.example', 'A');
      return r.status === 'NOERROR' && r;
    });
    expect(www.answer.map((r) => r.data)).toEqual(['192.0.2.1']);
    expect((await dig(serve.dnsPort, 'brand.example', 'NS')).answer.map((r) => r.data.replace(/\.$/, '')).sort()).toEqual(pairA);
    const routed = await until('routed', async () => {
      const r = await edge('www.brand.example');
      return r.body.startsWith('backend of') && r;
    });
    expect(routed.status).toBe(200);
  });

  it('under A\'s proven zone, C is proven only by what A puts in its zone, never by the registry or first come', async () => {
    const c = await call('C', 'POST', '/domains', { domain: 'api.brand.example', backend: `127.0.0.1:${backendPort}` });
    expect(c.status).toBe(201);
    expect(c.body.verification.state).toBe('pending');
    const token = c.body.verification.token as string;
    // The token at the registry (or anywhere but A's zone) proves nothing here.
    txt.set('_palisade-verify.api.brand.example', [token]);
    const refused = (await call('C', 'POST', '/domains/api.brand.example/verify')).body.verification;
    expect(refused).toMatchObject({ state: 'pending', seen: { from: 'parent', token: false } });
    // A adds the token in brand.example: C is proven.
    expect((await call('A', 'POST', '/domains/brand.example/dnsrecords', { name: '_palisade-verify.api', type: 'TXT', value: token })).status).toBe(201);
    const proven = (await call('C', 'POST', '/domains/api.brand.example/verify')).body.verification;
    expect(proven).toMatchObject({ state: 'verified', method: 'token', seen: { from: 'parent', token: true } });
    // A's own name under its zone is proven at once, even where another account squatted it meanwhile.
    expect((await call('B', 'POST', '/domains', { domain: 'own.brand.example', backend: `127.0.0.1:${backendPort}` })).status).toBe(201);
    expect((await call('A', 'POST', '/domains', { domain: 'own.brand.example', backend: `127.0.0.1:${backendPort}` })).body.verification).toMatchObject({ state: 'verified', method: 'parent' });
    expect((await call('B', 'GET', '/domains/own.brand.example')).status).toBe(404);
  });

  it('a deleted zone registered again by another account gets another pair: the old delegation neither proves nor serves it', async () => {
    expect((await call('A', 'DELETE', '/domains/api.brand.example')).status).toBe(404);
    expect((await call('C', 'DELETE', '/domains/api.brand.example')).status).toBe(204);
    expect((await call('A', 'DELETE', '/domains/own.brand.example')).status).toBe(204);
    expect((await call('A', 'DELETE', '/domains/brand.example')).status).toBe(204);
    await until('unserved', async () => (await dig(serve.dnsPort, 'www.brand.example', 'A')).status === 'REFUSED');
    // The registry still delegates to A's pair; D's account has that very pair.
    expect(ns.get('brand.example')).toEqual(pairA);
    expect((await call('D', 'GET', '/me')).body.nameservers).toEqual(pairA);
    const d = await call('D', 'POST', '/domains', { domain: 'brand.example', backend: `127.0.0.1:${backendPort}` });
    expect(d.status).toBe(201);
    expect(d.body.nameservers).not.toEqual(pairA);
    expect((await call('D', 'POST', '/domains/brand.example/activatens')).status).toBe(200);
    expect((await call('D', 'POST', '/domains/brand.example/dnsrecords', { name: 'www', type: 'A', value: '192.0.2.99' })).status).toBe(201);
    const looked = (await call('D', 'POST', '/domains/brand.example/verify')).body.verification;
    expect(looked).toMatchObject({ state: 'pending', seen: { nameservers: pairA, delegation: false } });
    await new Promise((r) => setTimeout(r, 3000));
    expect((await call('D', 'GET', '/domains/brand.example')).body.verification.state).toBe('pending');
    expect((await dig(serve.dnsPort, 'www.brand.example', 'A')).status).toBe('REFUSED');
    // The operator sees every claim of the name and what was seen.
    const claims = await admin(['domain', 'claims', 'brand.example']);
    expect(claims).toMatchObject([{ user: ids.D, holds_name: true, verification: { state: 'pending', seen: { delegation: false } } }]);
    // Delegated to D's pair, it is D's.
    ns.set('brand.example', d.body.nameservers);
    expect((await call('D', 'POST', '/domains/brand.example/verify')).body.verification.state).toBe('verified');
    expect((await until('served', async () => {
      const r = await dig(serve.dnsPort, 'www.brand.example', 'A');
      return r.status === 'NOERROR' && r;
    })).answer.map((r) => r.data)).toEqual(['192.0.2.99']);
    // What is kept by name (the certificate and its key) is the holder's: a claim beside it sees none.
    const cert = makeCertificate(['brand.example', 'www.brand.example'], 30);
    await admin(['cert', 'put', 'brand.example', '--cert', cert.certPath, '--key', cert.keyPath]);
    const exportAs = async (who: Who) => (await fetch(`${serve.url}/domains/brand.example/certexport`, { headers: { 'x-auth-key': keys[who] } })).status;
    expect(await exportAs('D')).toBe(200);
    expect((await call('B', 'POST', '/domains', { domain: 'brand.example', backend: `127.0.0.1:${backendPort}` })).status).toBe(201);
    expect(await exportAs('B')).toBe(409);
    expect((await call('B', 'DELETE', '/domains/brand.example')).status).toBe(204);
    expect(await exportAs('D')).toBe(200);
  });

  it('no certificate is ordered for a pending claim, by DNS-01 (name servers active) or HTTP-01; proof asks for one', async () => {
    for (const [name, active] of [['dns01.example', true], ['http01.example', false]] as const) {
      const made = await call('C', 'POST', '/domains', { domain: name, backend: `127.0.0.1:${backendPort}`, ssl: true });
      expect(made.status).toBe(201);
      if (active) expect((await call('C', 'POST', `/domains/${name}/activatens`)).status).toBe(200);
      const asked = await call('C', 'POST', `/domains/${name}/certificate`);
      expect(asked.status).toBe(409);
      expect(asked.body.detail).toMatch(/not proven/);
    }
    const tasks = async () => (await call('C', 'GET', '/tasks?state=all')).body as Array<{ domain: string; error: string | null; state: string }>;
    expect((await tasks()).filter((t) => t.domain === 'dns01.example' || t.domain === 'http01.example')).toEqual([]);
    // Proven by its token: a task is made at once (it fails here only because no CA is configured).
    const token = (await call('C', 'GET', '/domains/http01.example')).body.verification.token as string;
    txt.set('_palisade-verify.http01.example', [token]);
    expect((await call('C', 'POST', '/domains/http01.example/verify')).body.verification).toMatchObject({ state: 'verified', method: 'token' });
    const task = await until('a task', async () => (await tasks()).find((t) => t.domain === 'http01.example' && t.state === 'failed'));
    expect(task.error).toMatch(/PALISADE_ACME_DIRECTORY/);
    expect((await tasks()).find((t) => t.domain === 'dns01.example')).toBeUndefined();
    // Proven by the monitor (its delegation appears): the task is made without anyone asking.
    ns.set('dns01.example', (await call('C', 'GET', '/domains/dns01.example')).body.nameservers);
    const dns01 = await until('a DNS-01 task', async () => (await tasks()).find((t) => t.domain === 'dns01.example' && t.state === 'failed'));
    expect(dns01.error).toMatch(/PALISADE_ACME_DIRECTORY/);
    expect((await call('C', 'GET', '/domains/dns01.example')).body.verification).toMatchObject({ state: 'verified', method: 'delegation' });
  });

  it('a proof whose token is gone for the grace period is lost: told, unrouted, pending again', async () => {
    expect((await edge('www.http01.example')).body).toContain('backend of');
    txt.delete('_palisade-verify.http01.example');
    const lost = await until('proof lost', async () => (await events('C')).find((e) => e.type === 'domain.verification_lost' && e.domain === 'http01.example'));
    expect(lost.data.missing_since).toEqual(expect.any(String));
    expect((await call('C', 'GET', '/domains/http01.example')).body.verification.state).toBe('pending');
    await until('unrouted', async () => !(await edge('www.http01.example')).body.includes('backend of'));
  });

  it('the operator releases a claim in a dispute, and the account is told', async () => {
    expect((await call('B', 'POST', '/domains', { domain: 'dispute.example', backend: `127.0.0.1:${backendPort}` })).status).toBe(201);
    expect((await call('C', 'POST', '/domains', { domain: 'dispute.example', backend: `127.0.0.1:${backendPort}` })).status).toBe(201);
    const claims = await admin(['domain', 'claims', 'dispute.example']);
    expect(claims.map((c: { user: number }) => c.user)).toEqual([ids.B, ids.C]);
    expect(await admin(['domain', 'release', 'dispute.example', '--user', String(ids.B)])).toMatchObject({ released: 'dispute.example', user: ids.B, was: 'pending' });
    expect((await call('B', 'GET', '/domains/dispute.example')).status).toBe(404);
    expect((await events('B')).find((e) => e.type === 'domain.claim_released' && e.domain === 'dispute.example')?.data).toMatchObject({ by: 'operator' });
    // The operator's word proves C's (now the only) claim.
    expect(await admin(['domain', 'prove', 'dispute.example', '--user', String(ids.C)])).toMatchObject({ proven: 'dispute.example', claim: { verified: true, method: 'operator' } });
    expect((await call('C', 'GET', '/domains/dispute.example')).body.verification).toMatchObject({ state: 'verified', method: 'operator' });
  });
});
