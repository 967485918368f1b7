// Which certificate the edge of `palisade serve` presents, seen by the real `openssl s_client` with
// its default ciphers and signature algorithms: a customer's RSA-2048 or P-256 certificate put by
// the operator, over TLS 1.2 and TLS 1.3, for every name it covers — never the node's own
// certificate in its place. A domain with `ssl: false` gets no HTTPS at all: its handshakes are
// refused (no certificate shown, not even one it has), while plain HTTP serves it.
import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opensslCertificate, sClient, type OpensslCertificate } from '../helpers/openssl.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let server: RunningServer;
let httpsPort: number;
let rsa: OpensslCertificate;
let ec: OpensslCertificate;
let plain: OpensslCertificate;
let backend: Server;
let api: (method: string, path: string, body: unknown) => Promise<Response>;

function overHttp(host: string, path: string): Promise<{ status: number; location?: string }> {
  const url = new URL(server.edgeUrl!);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true' };
  const admin = async (...args: string[]) => {
    const res = await runAdminCli(env, args);
    expect(res.code, res.stderr).toBe(0);
    return JSON.parse(res.stdout);
  };
  const key = (await admin('user', 'create', '--name', 'tls', '--email', 'tls@example.org')).key.api_key as string;
  backend = createServer((_req, res) => res.end('backend'));
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendAddress = `127.0.0.1:${(backend.address() as { port: number }).port}`;
  server = await startServe(env);
  httpsPort = Number(new URL(server.edgeHttpsUrl!).port);
  api = (method, path, body) => fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  for (const body of [
    { domain: 'rsa.test', backend: backendAddress, ssl: true, mask: 'www' },
    { domain: 'ec.test', backend: backendAddress, ssl: true, mask: '*' },
    { domain: 'plain.test', backend: backendAddress, ssl: false, fhttps: true },
  ]) {
    const res = await api('POST', '/domains', body);
    expect(res.status, await res.text()).toBe(201);
  }
  rsa = opensslCertificate({ key: 'rsa', names: ['rsa.test', 'www.rsa.test'] });
  ec = opensslCertificate({ key: 'ec', names: ['ec.test', '*.ec.test'] });
  plain = opensslCertificate({ key: 'ec', names: ['plain.test'] });
  // A certificate of its own changes nothing while ssl is off.
  await admin('cert', 'put', 'plain.test', '--cert', plain.certPath, '--key', plain.keyPath);
  await admin('cert', 'put', 'rsa.test', '--cert', rsa.certPath, '--key', rsa.keyPath);
  await admin('cert', 'put', 'ec.test', '--cert', ec.certPath, '--key', ec.keyPath);
  // The edge follows the store by polling (1 s), change after change in order: once it has the
  // last certificate put, it has them all.
  const started = Date.now();
  while (Date.now() - started < 10_000) {
    const [a, b] = await Promise.all([sClient(httpsPort, 'rsa.test', ['-sigalgs', 'RSA+SHA256', '-tls1_2']), sClient(httpsPort, 'ec.test')]);
    if (a.certificate?.fingerprint256 === rsa.x509.fingerprint256 && b.certificate?.fingerprint256 === ec.x509.fingerprint256) break;
    await new Promise((r) => setTimeout(r, 200));
  }
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  backend?.close();
  removeTempDirs();
});

describe("the edge presents the customer's certificate to ordinary clients", { timeout: 60_000 }, () => {
  it.each([
    ['RSA-2048', 'rsa.test', '-tls1_2'],
    ['RSA-2048', 'rsa.test', '-tls1_3'],
    ['RSA-2048', 'www.rsa.test', '-tls1_2'],
    ['RSA-2048', 'www.rsa.test', '-tls1_3'],
    ['P-256', 'ec.test', '-tls1_2'],
    ['P-256', 'ec.test', '-tls1_3'],
    ['P-256', 'deep.ec.test', '-tls1_2'],
    ['P-256', 'deep.ec.test', '-tls1_3'],
  ])('%s certificate for %s over %s, default ciphers and signature algorithms', async (kind, name, version) => {
    const expected = kind === 'RSA-2048' ? rsa : ec;
    const handshake = await sClient(httpsPort, name, [version]);
    expect(handshake.certificate, handshake.output).toBeDefined();
    expect(handshake.protocol, handshake.output).toBe(version === '-tls1_2' ? 'TLSv1.2' : 'TLSv1.3');
    const served = handshake.certificate!;
    expect(served.subject, `${name} was served someone else's certificate`).toBe(expected.x509.subject);
    expect(served.subjectAltName).toBe(expected.x509.subjectAltName);
    expect(served.fingerprint256).toBe(expected.x509.fingerprint256);
    expect(served.publicKey.asymmetricKeyType).toBe(kind === 'RSA-2048' ? 'rsa' : 'ec');
  });
});

describe('a domain with ssl off gets no HTTPS', { timeout: 60_000 }, () => {
  it.each(['-tls1_2', '-tls1_3'])('refuses the handshake for its name over %s: no certificate at all, not the node\'s', async (version) => {
    const handshake = await sClient(httpsPort, 'plain.test', [version]);
    expect(handshake.certificate, `a certificate was shown for an ssl-off domain:\n${handshake.output}`).toBeUndefined();
    expect(handshake.output).toMatch(/Cipher is \(NONE\)|handshake failure|unexpected eof/i);
  });

  it('serves it over plain HTTP, without an fhttps redirect into a refused handshake', async () => {
    expect(await overHttp('plain.test', '/')).toEqual({ status: 200, location: undefined });
  });

  it('other names keep their certificates, and a handshake without SNI gets the node\'s', async () => {
    expect((await sClient(httpsPort, 'rsa.test')).certificate?.fingerprint256).toBe(rsa.x509.fingerprint256);
    const none = await sClient(httpsPort, undefined);
    expect(none.certificate?.subject, none.output).toMatch(/^CN=palisade edge /);
  });

  it('serves its certificate once ssl is on', async () => {
    expect((await api('PATCH', '/domains/plain.test', { ssl: true })).status).toBe(200);
    const started = Date.now();
    let handshake = await sClient(httpsPort, 'plain.test');
    while (handshake.certificate?.fingerprint256 !== plain.x509.fingerprint256 && Date.now() - started < 10_000) {
      await new Promise((r) => setTimeout(r, 200));
      handshake = await sClient(httpsPort, 'plain.test');
    }
    expect(handshake.certificate?.fingerprint256, handshake.output).toBe(plain.x509.fingerprint256);
    expect((await overHttp('plain.test', '/x')).location).toMatch(/^https:\/\/plain\.test:\d+\/x$/);
  });
});
