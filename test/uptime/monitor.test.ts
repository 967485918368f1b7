// The conditions a customer is told of without any edge report, end to end on `palisade serve`
// with a real webhook receiver: a domain served by no active node (and served again once a node
// is added), name servers activated while the parent does not delegate to ours (asked of a real
// DNS server standing for the resolver, which then starts delegating), a certificate near its
// end, and an issuance that failed for good. Each is told once, however many sweeps see it.
import dns2 from 'dns2';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificate } from '../helpers/certs.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';

const { Packet } = dns2;

let serve: RunningServer;
let env: Record<string, string>;
let key: string;
let receiver: TestReceiver;
let resolver: ReturnType<typeof dns2.createServer>;
/**
 * The domains' backend: a real one that answers. The in-process edge checks its domains'
 * backends every few seconds and reports a dead one down (3 failed checks): a dead backend
 * (127.0.0.1:9) made backend.down arrive among the conditions whenever the test ran long enough
 * (a loaded machine) — a true event, not the one this test is about.
 */
let backendServer: Server;
let backend: string;
/** What the stand-in resolver says each domain's NS set is. */
const delegations = new Map<string, string[]>();

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${serve.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

const admin = async (args: string[]) => {
  const out = await runAdminCli(env, args);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as Record<string, unknown>;
};

const typesFor = (domain: string) => receiver.received.filter((r) => r.json.domain === domain).map((r) => r.json.type);

async function until(what: string, probe: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received ${JSON.stringify(receiver.received.map((r) => [r.json.domain, r.json.type]))}\n${serve.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  receiver = await startReceiver();
  backendServer = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => backendServer.listen(0, '127.0.0.1', resolve));
  backend = `127.0.0.1:${(backendServer.address() as AddressInfo).port}`;
  resolver = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const names = delegations.get(question!.name.toLowerCase());
      if (!names) response.header.rcode = 3;
      else for (const ns of names) response.answers.push({ name: question!.name, type: Packet.TYPE.NS, class: Packet.CLASS.IN, ttl: 60, ns } as unknown as (typeof response.answers)[number]);
      void send(response);
    },
  });
  const addresses = await resolver.listen({ udp: { port: 0, address: '127.0.0.1' } });
  env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_WEBHOOK_ALLOW_PRIVATE: 'true',
    PALISADE_MONITOR_SWEEP_SECONDS: '1',
    PALISADE_DELEGATION_RESOLVER: `127.0.0.1:${addresses.udp!.port}`,
    PALISADE_CERT_EXPIRING_DAYS: '14',
  };
  key = ((await admin(['user', 'create', '--name', 'M', '--email', 'm@example.org'])).key as { api_key: string }).api_key;
  serve = await startServe(env);
  expect((await call('POST', '/me/webhooks', { url: receiver.url })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  if (serve) await stopProcess(serve);
  await resolver?.close();
  await receiver?.close();
  backendServer?.closeAllConnections();
  await new Promise((resolve) => (backendServer ? backendServer.close(resolve) : resolve(undefined)));
  removeTempDirs();
});

describe('conditions told once', { timeout: 60_000 }, () => {
  it('a protected domain with no active node: unserved, then served once a node is added', async () => {
    expect((await call('POST', '/domains', { domain: 'lonely.example', backend })).status).toBe(201);
    await until('domain.unserved', () => typesFor('lonely.example').includes('domain.unserved'));
    // DNS only: no edge is needed, so nothing to tell.
    expect((await call('POST', '/domains', { domain: 'plain.example', enabled: false, backend })).status).toBe(201);
    await admin(['node', 'add', '--name', 'n1', '--ipv4', '127.0.0.1', '--location', 'DE']);
    await until('domain.served', () => typesFor('lonely.example').includes('domain.served'));
    await new Promise((r) => setTimeout(r, 2500));
    expect(typesFor('lonely.example')).toEqual(['domain.unserved', 'domain.served']);
    expect(typesFor('plain.example')).toEqual([]);
  });

  it('name servers active but the parent delegating elsewhere: delegation.missing, then delegation.ok', async () => {
    delegations.set('moved.example', ['ns.elsewhere.example']);
    expect((await call('POST', '/domains', { domain: 'moved.example', backend })).status).toBe(201);
    expect((await call('POST', '/domains/moved.example/activatens')).status).toBe(200);
    await until('delegation.missing', () => typesFor('moved.example').includes('delegation.missing'));
    const missing = receiver.received.find((r) => r.json.type === 'delegation.missing')!;
    expect(missing.json.data).toMatchObject({ seen: ['ns.elsewhere.example'], expected: ['ns1.palisade.example.net', 'ns2.palisade.example.net'] });
    delegations.set('moved.example', ['ns1.palisade.example.net', 'ns2.palisade.example.net']);
    await until('delegation.ok', () => typesFor('moved.example').includes('delegation.ok'));
    await new Promise((r) => setTimeout(r, 2500));
    expect(typesFor('moved.example')).toEqual(['delegation.missing', 'delegation.ok']);
  });

  it('a certificate near its end is told once; an issuance failed for good is told', async () => {
    // ssl on without a CA configured: the task fails at once, for good.
    expect((await call('POST', '/domains', { domain: 'tls.example', backend, ssl: true })).status).toBe(201);
    await until('certificate.failed', () => typesFor('tls.example').includes('certificate.failed'));
    const failed = receiver.received.find((r) => r.json.type === 'certificate.failed')!;
    expect(String(failed.json.data.error)).toMatch(/PALISADE_ACME_DIRECTORY/);
    // A certificate of the operator's, 5 days left: within the 14 days.
    const cert = makeCertificate(['tls.example', 'www.tls.example'], 5);
    await admin(['cert', 'put', 'tls.example', '--cert', cert.certPath, '--key', cert.keyPath]);
    await until('certificate.expiring', () => typesFor('tls.example').includes('certificate.expiring'));
    await new Promise((r) => setTimeout(r, 2500));
    expect(typesFor('tls.example').filter((t) => t === 'certificate.expiring')).toHaveLength(1);
    const expiring = receiver.received.find((r) => r.json.type === 'certificate.expiring')!;
    expect(Date.parse(String(expiring.json.data.not_after)) - Date.now()).toBeLessThan(6 * 86_400_000);
  });
});
