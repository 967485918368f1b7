// A refusal sent before the body is read (413 past the body limit, 401 without a key) reaches
// clients that send the whole body before reading the answer: Python's http.client, Node's fetch,
// curl without `Expect: 100-continue`. Closing at once with unread bytes in the kernel's buffer
// sends a reset, and these clients then report a broken pipe instead of the answer; the API reads
// and discards a bounded amount first, as nginx's lingering close does.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

const run = promisify(execFile);
let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startApi();
  ({ key } = await api.user());
});
afterAll(() => api.close());

/** A JSON body of about `mib` MiB (the API's default limit is 1 MiB). */
const bigBody = (mib: number) => JSON.stringify({ domain: 'big.example', backend: '198.51.100.1', mask: 'a'.repeat(mib * 1_048_576) });

const PYTHON = `
import http.client, sys, json
port, key, size = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
body = b'{"domain":"big.example","backend":"198.51.100.1","mask":"' + b'a' * (size * 1048576) + b'"}'
headers = {'Content-Type': 'application/json'}
if key: headers['X-Auth-Key'] = key
c = http.client.HTTPConnection('127.0.0.1', port, timeout=20)
try:
    c.request('POST', '/domains', body, headers)
    r = c.getresponse()
    print(json.dumps({'status': r.status, 'body': r.read().decode()}))
except Exception as e:
    print(json.dumps({'error': type(e).__name__ + ': ' + str(e)}))
`;

async function python(mib: number, withKey: boolean): Promise<{ status?: number; body?: string; error?: string }> {
  const port = new URL(api.url).port;
  const { stdout } = await run('python3', ['-c', PYTHON, port, withKey ? key : '', String(mib)], { timeout: 30_000 });
  return JSON.parse(stdout) as { status?: number; body?: string; error?: string };
}

async function curl(mib: number, withKey: boolean): Promise<{ status: string; body: string }> {
  const file = `${api.dataDir}/body-${mib}.json`;
  const { writeFileSync } = await import('node:fs');
  writeFileSync(file, bigBody(mib));
  // `Expect:` empty: curl sends the whole body without waiting for 100-continue.
  const args = ['-sS', '-H', 'Expect:', '-H', 'Content-Type: application/json', ...(withKey ? ['-H', `X-Auth-Key: ${key}`] : []), '--data-binary', `@${file}`, '-w', '\n%{http_code}', `${api.url}/domains`];
  const { stdout } = await run('curl', args, { timeout: 30_000, maxBuffer: 1 << 20 }).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: `${e.stdout ?? ''}\nERR ${e.stderr ?? ''}` }));
  const lines = stdout.trim().split('\n');
  return { status: lines.at(-1)!, body: lines.slice(0, -1).join('\n') };
}

describe('refusals reach clients that send the whole body first', () => {
  for (const round of [1, 2, 3]) {
    it(`413 past the body limit, named, reaches Python http.client (round ${round})`, async () => {
      const r = await python(8, true);
      expect(r.error).toBeUndefined();
      expect(r.status).toBe(413);
      expect(JSON.parse(r.body!).detail).toContain('1,048,576 bytes');
    });
  }

  it('401 without a key reaches Python http.client before the body is read', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await python(8, false);
      expect(r.error).toBeUndefined();
      expect(r.status).toBe(401);
    }
  });

  it('413 reaches Node fetch in another process, four times of four', async () => {
    const script = `
      const [url, key] = process.argv.slice(1);
      const body = JSON.stringify({ domain: 'big.example', backend: '198.51.100.1', mask: 'a'.repeat(8 * 1048576) });
      fetch(url + '/domains', { method: 'POST', headers: { 'content-type': 'application/json', 'x-auth-key': key }, body })
        .then(async (res) => console.log(JSON.stringify({ status: res.status, body: await res.text() })), (e) => console.log(JSON.stringify({ error: String(e.cause ?? e) })));`;
    for (let i = 0; i < 4; i++) {
      const { stdout } = await run(process.execPath, ['-e', script, api.url, key], { timeout: 30_000 });
      const r = JSON.parse(stdout) as { status?: number; body?: string; error?: string };
      expect(r.error).toBeUndefined();
      expect(r.status).toBe(413);
      expect((JSON.parse(r.body!) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('413 reaches curl without Expect, three times of three', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await curl(8, true);
      expect(r.status, r.body).toBe('413');
      expect(JSON.parse(r.body).code).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('a zone file past its own limit is told that limit', async () => {
    await api.request('POST', '/domains', { key, body: { domain: 'zone.example', backend: '198.51.100.1' } });
    const res = await fetch(`${api.url}/domains/zone.example/zonefile`, { method: 'POST', headers: { 'content-type': 'text/dns', 'x-auth-key': key }, body: '; x\n'.repeat(2_400_000) });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { detail: string }).detail).toContain('8,388,608 bytes');
  });

  it('a body far past what is worth reading is cut, not read to its end', async () => {
    // 64 MiB is the most read and discarded: a client sending 80 MiB gets its answer or a reset,
    // and the API is not held reading it (the answer comes well before 80 MiB could be sent slowly).
    const r = await python(80, true);
    if (r.error === undefined) expect(r.status).toBe(413);
    else expect(r.error).toMatch(/Broken pipe|Connection reset|BrokenPipeError|ConnectionResetError/);
  });
});
