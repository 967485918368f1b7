// The control plane over TLS: the API serves HTTPS from the operator's PEM files and takes a
// renewed pair without a restart (a broken one is refused, the old one kept); a name server reaches
// it over HTTPS trusting a private CA (PALISADE_SYNC_CA_FILE) and says why when it does not; plain
// HTTP on an address other hosts can reach is refused at start unless asked for.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { privateCa, type PrivateCa } from '../helpers/private-ca.ts';
import { freePort } from '../helpers/redis-server.ts';
import { BIN, runAdminCli, startNameServer, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

let ca: PrivateCa;
let api: RunningServer;
let certFile: string;
let keyFile: string;
let key: string;
let apiEnv: Record<string, string>;

/** The certificate the API presents (its serial number), verified against the private CA. */
function servedSerial(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ca: readFileSync(ca.caFile), servername: undefined }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on('error', reject);
  });
}

beforeAll(async () => {
  ca = privateCa();
  const first = ca.issue('api');
  // The files the API is told about; renewals are copied over them, as certbot's hooks do.
  const dir = tempDir();
  certFile = join(dir, 'api.pem');
  keyFile = join(dir, 'api.key');
  copyFileSync(first.certFile, certFile);
  copyFileSync(first.keyFile, keyFile);
  apiEnv = { PALISADE_DATA_DIR: tempDir(), PALISADE_API_TLS_CERT: certFile, PALISADE_API_TLS_KEY: keyFile };
  key = JSON.parse((await runAdminCli(apiEnv, ['user', 'create', '--name', 'tls', '--email', 'tls@example.org'])).stdout).key.api_key;
  api = await startServe(apiEnv, 30_000, 'api');
}, 60_000);

afterAll(async () => {
  await stopStarted();
  removeTempDirs();
});

describe('the API over TLS', () => {
  it('serves HTTPS with the given certificate: curl verifies it with the CA; plain HTTP gets no API', async () => {
    expect(api.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const me = execFileSync('curl', ['-sS', '--cacert', ca.caFile, '-H', `X-Auth-Key: ${key}`, `${api.url}/me`], { encoding: 'utf8' });
    expect(JSON.parse(me)).toMatchObject({ email: 'tls@example.org' });
    const plain = await fetch(api.url.replace('https:', 'http:') + '/me', { headers: { 'x-auth-key': key } }).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(plain === 'refused' || plain === 400).toBe(true);
  });

  it('a renewed pair is served without a restart; a broken one is refused and the served one kept', async () => {
    const before = await servedSerial(api.url);
    const renewed = ca.issue('api');
    copyFileSync(renewed.certFile, certFile);
    copyFileSync(renewed.keyFile, keyFile);
    const after = await until('the renewed certificate served', async () => {
      const served = await servedSerial(api.url);
      return served !== before ? served : undefined;
    }, 15_000, 200);
    expect(after).not.toBe(before);
    // The log line is written beside the swap, not before it: a client may see the new certificate first.
    await until('the reload in the log', () => api.output().includes('api: TLS certificate reloaded'), 15_000, 100);
    // A key that does not match the certificate: refused, said, and the served certificate stays.
    const other = ca.issue('other');
    writeFileSync(keyFile, readFileSync(other.keyFile));
    await until('the broken pair refused in the log', () => api.output().includes('do not load'), 15_000, 200);
    expect(await servedSerial(api.url)).toBe(after);
    const res = await fetch(`${api.url}/healthz`).catch((e: Error) => e);
    // Node's fetch does not know the private CA: the point is only that the server still answers TLS.
    expect(res).toBeDefined();
    copyFileSync(renewed.keyFile, keyFile);
  });

  it('a name server pulls over HTTPS trusting the private CA; without it, the log says to set PALISADE_SYNC_CA_FILE', async () => {
    const call = (method: string, path: string, body?: unknown) =>
      new Promise<number>((resolve, reject) => {
        const args = ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '--cacert', ca.caFile, '-X', method, '-H', `X-Auth-Key: ${key}`, ...(body ? ['-H', 'Content-Type: application/json', '--data', JSON.stringify(body)] : []), `${api.url}${path}`];
        execFile('curl', args, (error, stdout) => (error ? reject(error) : resolve(Number(stdout))));
      });
    expect(await call('POST', '/domains', { domain: 'tls.example', backend: '198.51.100.1', enabled: false })).toBe(201);
    expect(await call('GET', '/domains/tls.example/activatens')).toBe(200);
    expect(await call('POST', '/domains/tls.example/dnsrecords', { name: 'www', type: 'A', value: '192.0.2.44' })).toBe(201);
    const consumer = JSON.parse((await runAdminCli(apiEnv, ['consumer', 'add', '--name', 'ns-tls'])).stdout) as { token: string; secret: string };
    const nsEnv = { PALISADE_DATA_DIR: tempDir(), PALISADE_SYNC_URL: api.url, PALISADE_SYNC_TOKEN: consumer.token, PALISADE_SYNC_SECRET: consumer.secret, PALISADE_SYNC_POLL_MS: '300' };

    const trusting = await startNameServer({ ...nsEnv, PALISADE_SYNC_CA_FILE: ca.caFile });
    await until('the record served over a feed pulled by HTTPS', async () => (await dig(trusting.dnsPort, 'www.tls.example', 'A')).answer.some((r) => JSON.stringify(r).includes('192.0.2.44')), 15_000, 200);

    const distrusting = await startNameServer({ ...nsEnv, PALISADE_DATA_DIR: tempDir() }).catch((e: Error) => e);
    // The failed pull is logged when it fails, which may come after the server says it serves.
    const out = distrusting instanceof Error ? distrusting.message : await until('the untrusted certificate named in the log', () => /PALISADE_SYNC_CA_FILE/.test(distrusting.output()) && distrusting.output(), 20_000, 100);
    expect(out).toContain('PALISADE_SYNC_CA_FILE');
    expect(out).toMatch(/SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/);
  });
});

describe('plain HTTP where other hosts reach it', () => {
  const start = async (env: Record<string, string>) => {
    const child = spawn(process.execPath, [BIN, 'api'], { env: { ...process.env, PALISADE_LOG_LEVEL: 'error', PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: String(await freePort()), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    return { code, stderr };
  };

  it('is refused at start with one line saying what to set (no socket is opened)', async () => {
    // 192.0.2.1 is not an address of this host: were the check missing, listening would fail
    // with EADDRNOTAVAIL instead of this message (and nothing listens beyond loopback either way).
    const r = await start({ PALISADE_API_HOST: '192.0.2.1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PALISADE_API_HOST=192.0.2.1 is reachable from other hosts and the API would speak plain HTTP');
    expect(r.stderr).toContain('PALISADE_API_PLAIN_HTTP=true');
    const asked = await start({ PALISADE_API_HOST: '192.0.2.1', PALISADE_API_PLAIN_HTTP: 'true' });
    expect(asked.stderr).not.toContain('would speak plain HTTP');
    expect(asked.stderr).toContain('EADDRNOTAVAIL');
  });

  it('half a pair, or a pair that does not load, is refused at start', async () => {
    const half = await start({ PALISADE_API_TLS_CERT: certFile });
    expect(half.code).toBe(1);
    expect(half.stderr).toContain('PALISADE_API_TLS_CERT and PALISADE_API_TLS_KEY: set both');
    const other = ca.issue('mismatch');
    const mismatched = await start({ PALISADE_API_TLS_CERT: certFile, PALISADE_API_TLS_KEY: other.keyFile });
    expect(mismatched.code).toBe(1);
    expect(mismatched.stderr).toContain('do not load as a certificate and its key');
  });
});
