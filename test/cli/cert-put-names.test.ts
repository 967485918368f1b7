// `palisade admin cert put`, run as a real process, refuses certificates that must not be stored
// for the domain — another tenant's names (alone, mixed with the domain's, or under a look-alike
// name), a wildcard that is not a whole first label, the apex left out, expired or not yet valid,
// a key that is not the certificate's, no subjectAltName, no such domain — with a clear message,
// a non-zero exit code and nothing stored; and stores good ones (RSA and P-256), telling what they
// leave uncovered and when ssl is off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opensslCertificate, type CertificateSpec } from '../helpers/openssl.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let env: Record<string, string>;
let server: RunningServer;

const admin = (...args: string[]) => runAdminCli(env, args);
const put = (domain: string, cert: { certPath: string; keyPath: string }) => admin('cert', 'put', domain, '--cert', cert.certPath, '--key', cert.keyPath);
const stored = async (): Promise<Array<{ domain: string; names: string[]; fingerprint: string }>> => {
  const res = await admin('cert', 'list');
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
};
const day = 86_400_000;

beforeAll(async () => {
  env = { PALISADE_DATA_DIR: tempDir() };
  const keyOf = async (name: string) => {
    const res = await admin('user', 'create', '--name', name, '--email', `${name}@example.org`);
    expect(res.code, res.stderr).toBe(0);
    return JSON.parse(res.stdout).key.api_key as string;
  };
  const alpha = await keyOf('alpha');
  const bravo = await keyOf('bravo');
  server = await startServe(env);
  for (const [key, body] of [
    [alpha, { domain: 'alpha.test', backend: '192.0.2.1', mask: 'www,api', ssl: true }],
    [alpha, { domain: 'quiet.test', backend: '192.0.2.1', mask: '', ssl: false }],
    [bravo, { domain: 'bravo.test', backend: '192.0.2.2', ssl: true }],
  ] as const) {
    const res = await fetch(`${server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status, await res.text()).toBe(201);
  }
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  removeTempDirs();
});

// Each case starts a CLI process (~2 s here).
describe('palisade admin cert put refuses what must not be stored', { timeout: 60_000 }, () => {
  const refusals: Array<[string, CertificateSpec, RegExp]> = [
    ["another tenant's domain", { key: 'ec', names: ['bravo.test'] }, /names bravo\.test, which is not alpha\.test or a name under it/],
    ["the domain and another tenant's", { key: 'rsa', names: ['alpha.test', 'www.alpha.test', 'bravo.test'] }, /names bravo\.test, which is not alpha\.test/],
    ["another tenant's wildcard", { key: 'ec', names: ['alpha.test', '*.bravo.test'] }, /names \*\.bravo\.test, which is not/],
    ['a look-alike name that ends the same', { key: 'ec', names: ['alpha.test', 'evilalpha.test', 'alpha.test.evil'] }, /names evilalpha\.test, alpha\.test\.evil, which are not/],
    ['a wildcard above the domain', { key: 'ec', names: ['alpha.test', '*.test'] }, /names \*\.test, which is not/],
    ['a wildcard that is not a whole first label', { key: 'ec', names: ['alpha.test', 'w*.alpha.test'] }, /wildcard must be a whole first label/],
    ['names under the domain without the domain itself', { key: 'ec', names: ['www.alpha.test', '*.alpha.test'] }, /does not cover alpha\.test itself/],
    ['an expired certificate', { key: 'ec', names: ['alpha.test'], from: new Date(Date.now() - 90 * day), to: new Date(Date.now() - day) }, /expired on/],
    ['a certificate not valid yet', { key: 'ec', names: ['alpha.test'], from: new Date(Date.now() + day), to: new Date(Date.now() + 90 * day) }, /not valid before/],
    ['a certificate with a subject CN and no subjectAltName', { key: 'rsa', names: [], cn: 'alpha.test' }, /names no DNS name \(subjectAltName\)/],
  ];
  it.each(refusals)('%s', async (_what, spec, message) => {
    const res = await put('alpha.test', opensslCertificate(spec));
    expect(res.code, res.stdout).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stdout).toBe('');
    expect(await stored()).toEqual([]);
  });

  it("a key that is not the certificate's", async () => {
    const one = opensslCertificate({ key: 'ec', names: ['alpha.test'] });
    const other = opensslCertificate({ key: 'ec', names: ['alpha.test'] });
    const res = await put('alpha.test', { certPath: one.certPath, keyPath: other.keyPath });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/private key does not match/);
    expect(await stored()).toEqual([]);
  });

  it('a domain that does not exist', async () => {
    const res = await put('nowhere.test', opensslCertificate({ key: 'ec', names: ['nowhere.test'] }));
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/no domain nowhere\.test/);
    expect(await stored()).toEqual([]);
  });
});

describe('palisade admin cert put stores what fits', { timeout: 60_000 }, () => {
  it('an RSA-2048 certificate for the domain and names under it, none left uncovered', async () => {
    const cert = opensslCertificate({ key: 'rsa', names: ['alpha.test', '*.alpha.test', 'deep.api.alpha.test'] });
    const res = await put('alpha.test', cert);
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({ domain: 'alpha.test', names: ['alpha.test', '*.alpha.test', 'deep.api.alpha.test'] });
    expect(out.warnings).toBeUndefined();
    expect((await stored()).map((c) => [c.domain, c.fingerprint])).toEqual([['alpha.test', cert.x509.fingerprint256.replaceAll(':', '').toLowerCase()]]);
  });

  it('a P-256 certificate that leaves protected names uncovered, with a warning naming them', async () => {
    const res = await put('alpha.test', opensslCertificate({ key: 'ec', names: ['alpha.test', 'www.alpha.test'] }));
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).warnings).toEqual(['it does not cover api.alpha.test: edges answer those names with their own certificate']);
  });

  it('a certificate for a domain with ssl off, with a warning that edges refuse HTTPS for it', async () => {
    const res = await put('quiet.test', opensslCertificate({ key: 'ec', names: ['quiet.test'] }));
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).warnings).toEqual(['ssl is off for quiet.test: edges refuse HTTPS for its names until it is on']);
    expect((await stored()).map((c) => c.domain)).toEqual(['alpha.test', 'quiet.test']);
  });
});
