// HTTP/2 at the edge beside nginx's, in one interleaved run: h2load against `palisade serve`'s edge
// (ALPN h2 on its TLS port) and against nginx with `listen … ssl http2`, the same P-256
// certificates, the same 1 KB static file from the same backend (nginx, one worker), a cache hit
// (cachelevel 3 / proxy_cache) and a proxied miss, and the protocol's own ceiling: a bare Node
// `http2` server answering a fixed body, through Node's compatibility API and on its stream API
// (the edge's). Each server on CPU 0, h2load and the backend on CPU 1;
// CPU time per request from /proc (the edge part's process, nginx's master and worker).
//
// The first edge keeps its default protections but one: h2load sends every request from one
// address with no X-Forwarded-For, so the per-client rate limit (PALISADE_EDGE_CLIENT_RATE) is off there.
//
// Then the issue's own workload, as bench:edge does over HTTP/1.1: 10,000 clients behind a trusted
// proxy (X-Forwarded-For), every default protection on, per-client rate limit included, against a
// second edge so configured (bench/edge/h2-many-clients.ts is the client: h2load cannot vary a header).
//
//   npm run bench:edge-h2        (needs h2load, nginx, openssl and taskset: Debian nghttp2-client, nginx-light, openssl, util-linux)
//   BENCH_SECONDS=10 BENCH_ROUNDS=3 BENCH_CONNECTIONS=32 BENCH_STREAMS=2 BENCH_MANY_CONNECTIONS=32 BENCH_MANY_STREAMS=8
//   BENCH_PROFILE_DIR=/tmp/prof  CPU profiles of the edge's h2 hit and miss paths and their top frames, then stop
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, processTree } from './dns/servers.ts';
import { freePort } from '../test/helpers/redis-server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
// 32 connections × 2 streams: 64 requests in flight, the one client's backend share
// (PALISADE_EDGE_BACKEND_SHARE_PER_CLIENT's default): more would be answered 429 by design.
const STREAMS = Number(process.env.BENCH_STREAMS ?? 2);
// The 10,000 clients' phase: a trusted proxy's connections, each carrying many clients' requests.
const MANY_CONNECTIONS = Number(process.env.BENCH_MANY_CONNECTIONS ?? 32);
const MANY_STREAMS = Number(process.env.BENCH_MANY_STREAMS ?? 8);
const MANY_CLIENTS = fileURLToPath(new URL('./edge/h2-many-clients.ts', import.meta.url));
/** BENCH_PROFILE_DIR: CPU profiles of the edge's h2 hit and miss paths (bench/edge/profiler.mjs) and their top frames, then stop. */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR ? resolvePath(process.env.BENCH_PROFILE_DIR) : undefined;
const PROFILER = fileURLToPath(new URL('./edge/profiler.mjs', import.meta.url));
const SERVER_CPU = '0';
const CLIENT_CPU = '1';

for (const tool of ['h2load', 'nginx', 'openssl', 'taskset']) {
  if (spawnSync('sh', ['-c', `command -v ${tool} || test -x /usr/sbin/${tool}`]).status !== 0) {
    console.error(`bench:edge-h2 needs ${tool} (Debian: apt-get install nghttp2-client nginx-light openssl util-linux)`);
    process.exit(2);
  }
}
const NGINX = spawnSync('sh', ['-c', 'command -v nginx || echo /usr/sbin/nginx'], { encoding: 'utf8' }).stdout.trim();
const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-h2-'));
const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function start(cpu: string, command: string, args: string[], env: Record<string, string> = {}): ChildProcess & { output: () => string } {
  const child = spawn('taskset', ['-c', cpu, command, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  // Only the first lines are kept (where it says it serves): the access log is not this bench's.
  const keep = (d: Buffer) => {
    if (out.length < 200_000) out += d.toString();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  children.push(child);
  return Object.assign(child, { output: () => out });
}

function certificate(name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const run = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`, '-keyout', key, '-out', cert], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return { cert, key };
}

interface H2Result {
  rps: number;
  ok: number;
  failed: number;
  cpuUs: number;
}

/** h2load on the client CPU against `authority` (SNI and :authority) at 127.0.0.1:`port`, with the server's CPU time per request. */
function h2load(port: number, authority: string, path: string, seconds: number, serverPids: number[]): H2Result {
  const before = cpuSeconds(serverPids);
  const run = spawnSync('taskset', ['-c', CLIENT_CPU, 'h2load', '-t1', `-c${CONNECTIONS}`, `-m${STREAMS}`, `-D${seconds}`, '--connect-to', `127.0.0.1:${port}`, `https://${authority}:${port}${path}`], { encoding: 'utf8' });
  const used = cpuSeconds(serverPids) - before;
  const text = run.stdout;
  const rps = Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(text)?.[1] ?? 0);
  const ok = Number(/status codes: (\d+) 2xx/.exec(text)?.[1] ?? 0);
  const failed = Number(/requests: .*?(\d+) failed/.exec(text)?.[1] ?? 0);
  if (rps === 0 || ok === 0) throw new Error(`h2load failed:\n${text}${run.stderr}`);
  return { rps, ok, failed, cpuUs: (used * 1e6) / ok };
}

/** `palisade serve` with the two bench sites over TLS (certificates put as an operator would): its edge's TLS port and process. */
async function startEdge(backendPort: number, hitCert: { cert: string; key: string }, missCert: { cert: string; key: string }, name: string, extraEnv: Record<string, string>): Promise<{ port: number; pid: number }> {
  const env = { PALISADE_DATA_DIR: join(dir, name), PALISADE_OWNERSHIP_PROOF: 'off', PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_API_RATE_PER_KEY: '0', PALISADE_API_RATE_PER_ADDRESS: '0', PALISADE_SECRET_KEY: 'be4c'.padEnd(64, '0'), ...extraEnv };
  const apiPort = await freePort();
  const edgePort = await freePort();
  const key = JSON.parse(await admin(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org'])).key.api_key as string;
  const profiling: Record<string, string> = PROFILE_DIR ? { NODE_OPTIONS: `--import ${PROFILER}`, BENCH_PROFILE_DIR: PROFILE_DIR } : {};
  const serve = start(SERVER_CPU, process.execPath, ['bin/palisade.js', 'serve'], { ...env, ...profiling, PALISADE_API_PORT: String(apiPort), PALISADE_DNS_PORT: String(await freePort()), PALISADE_EDGE_HTTP_PORT: String(await freePort()), PALISADE_EDGE_HTTPS_PORT: String(edgePort), PALISADE_LOG_LEVEL: 'info' });
  const started = Date.now();
  while (!/"parts":\{[^}]*"edge":\d+/.test(serve.output()) && Date.now() - started < 60_000) await sleep(200);
  const edgePid = Number(/"parts":\{[^}]*"edge":(\d+)/.exec(serve.output())?.[1]);
  if (!edgePid) throw new Error(`palisade serve did not start:\n${serve.output()}`);
  for (const [domain, extra] of [['miss.bench.example', {}], ['hit.bench.example', { cachelevel: 3 }]] as const) {
    const res = await fetch(`http://127.0.0.1:${apiPort}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain, backend: `127.0.0.1:${backendPort}`, ssl: true, mask: '', ...extra }) });
    if (res.status !== 201) throw new Error(`domain ${domain}: ${res.status} ${await res.text()}`);
  }
  await admin(env, ['cert', 'put', 'hit.bench.example', '--cert', hitCert.cert, '--key', hitCert.key]);
  await admin(env, ['cert', 'put', 'miss.bench.example', '--cert', missCert.cert, '--key', missCert.key]);
  return { port: edgePort, pid: edgePid };
}

/** The 10,000 clients' load (bench/edge/h2-many-clients.ts) on the client CPU, with the server's CPU time per request. */
function manyClients(port: number, authority: string, path: string, seconds: number, serverPids: number[]): H2Result {
  const before = cpuSeconds(serverPids);
  const run = spawnSync('taskset', ['-c', CLIENT_CPU, process.execPath, '--import', 'tsx', MANY_CLIENTS, String(port), authority, path, String(seconds), String(MANY_CONNECTIONS), String(MANY_STREAMS), '10000'], { encoding: 'utf8' });
  const used = cpuSeconds(serverPids) - before;
  const line = run.stdout.trim().split('\n').at(-1) ?? '';
  if (!line.startsWith('{')) throw new Error(`h2 many-clients load failed:\n${run.stdout}${run.stderr}`);
  const r = JSON.parse(line) as { ok: number; other: number; errors: number; rps: number };
  if (r.ok === 0) throw new Error(`h2 many-clients load: no 2xx (${line})`);
  return { rps: r.rps, ok: r.ok, failed: r.other + r.errors, cpuUs: (used * 1e6) / r.ok };
}

async function waitForH2(port: number, authority: string, path: string): Promise<void> {
  const started = Date.now();
  let last = '';
  while (Date.now() - started < 30_000) {
    const run = spawnSync('h2load', ['-n1', '-c1', '--connect-to', `127.0.0.1:${port}`, `https://${authority}:${port}${path}`], { encoding: 'utf8' });
    if (/status codes: 1 2xx/.test(run.stdout)) return;
    last = run.stdout + run.stderr;
    await sleep(200);
  }
  throw new Error(`no 200 over h2 from ${authority} at ${port}:\n${last}`);
}

async function admin(env: Record<string, string>, args: string[]): Promise<string> {
  const run = spawnSync(process.execPath, ['bin/palisade.js', 'admin', ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`palisade admin ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

async function main(): Promise<void> {
  // The backend: nginx, one worker, a 1 KB CSS file.
  mkdirSync(join(dir, 'www'));
  writeFileSync(join(dir, 'www', 'file.css'), `${'a'.repeat(1023)}\n`);
  // nginx's workers drop root: the file must be readable by them.
  chmodSync(dir, 0o755);
  chmodSync(join(dir, 'www'), 0o755);
  chmodSync(join(dir, 'www', 'file.css'), 0o644);
  const backendPort = await freePort();
  const nginxConf = (name: string, body: string) => {
    const base = join(dir, name);
    mkdirSync(base, { recursive: true });
    const conf = `worker_processes 1;\nerror_log ${base}/error.log;\npid ${base}/nginx.pid;\ndaemon off;\nevents { worker_connections 4096; }\nhttp {\n  client_body_temp_path ${base}; proxy_temp_path ${base}; fastcgi_temp_path ${base}; uwsgi_temp_path ${base}; scgi_temp_path ${base};\n${body}\n}\n`;
    writeFileSync(join(base, 'nginx.conf'), conf);
    return join(base, 'nginx.conf');
  };
  start(CLIENT_CPU, NGINX, ['-c', nginxConf('backend', `  access_log off;\n  types { text/css css; }\n  server { listen 127.0.0.1:${backendPort}; root ${dir}/www; }`)]);

  const hitCert = certificate('hit.bench.example');
  const missCert = certificate('miss.bench.example');

  // nginx as the peer: HTTP/2 over TLS, the same certificates, the same two sites, an access log.
  const nginxPort = await freePort();
  const proxy = 'proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $host; proxy_set_header X-Forwarded-For $remote_addr; proxy_set_header X-Forwarded-Proto $scheme;';
  const nginxProxy = start(SERVER_CPU, NGINX, [
    '-c',
    nginxConf(
      'proxy',
      `  access_log ${dir}/proxy/access.log;
  # nginx closes an h2 connection after 1000 requests by default; h2load does not reconnect.
  keepalive_requests 10000000;
  proxy_cache_path ${dir}/proxy/cache keys_zone=edge:10m;
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 64; }
  server { listen 127.0.0.1:${nginxPort} ssl http2; server_name miss.bench.example; ssl_certificate ${missCert.cert}; ssl_certificate_key ${missCert.key}; location / { proxy_pass http://backend; ${proxy} } }
  server { listen 127.0.0.1:${nginxPort} ssl http2; server_name hit.bench.example; ssl_certificate ${hitCert.cert}; ssl_certificate_key ${hitCert.key}; location / { proxy_pass http://backend; ${proxy} proxy_cache edge; proxy_cache_valid 200 120m; add_header X-Cache $upstream_cache_status; } }`,
    ),
  ]);

  // The protocol's ceiling: a bare Node http2 server, a fixed 1 KB body, the same certificate.
  const barePort = await freePort();
  const bareScript = `const h=require('node:http2'),f=require('node:fs');const body=Buffer.alloc(1024,97);h.createSecureServer({cert:f.readFileSync(${JSON.stringify(hitCert.cert)}),key:f.readFileSync(${JSON.stringify(hitCert.key)})},(q,r)=>{r.writeHead(200,{'content-type':'text/css','content-length':1024});r.end(body)}).listen(${barePort},'127.0.0.1')`;
  const bare = start(SERVER_CPU, process.execPath, ['-e', bareScript]);
  // The same on Node's stream API ('stream', respond(), end()): what the edge's h2 front rides on.
  const bareStreamPort = await freePort();
  const bareStreamScript = `const h=require('node:http2'),f=require('node:fs');const body=Buffer.alloc(1024,97);const s=h.createSecureServer({cert:f.readFileSync(${JSON.stringify(hitCert.cert)}),key:f.readFileSync(${JSON.stringify(hitCert.key)})});s.on('stream',(st)=>{st.respond({':status':200,'content-type':'text/css','content-length':1024});st.end(body)});s.listen(${bareStreamPort},'127.0.0.1')`;
  const bareStream = start(SERVER_CPU, process.execPath, ['-e', bareStreamScript]);

  // The edge: palisade serve with the two sites over TLS, the per-client rate limit off (h2load
  // is one client); and a second one for the 10,000 clients' phase with every protection at its
  // default, believing 127.0.0.1 as a trusted proxy.
  const edge = await startEdge(backendPort, hitCert, missCert, 'serve', { PALISADE_EDGE_CLIENT_RATE: '0' });
  const edgePort = edge.port;
  const edgePid = edge.pid;
  const manyEdge = await startEdge(backendPort, hitCert, missCert, 'serve-many', { PALISADE_EDGE_TRUSTED_PROXIES: '127.0.0.1' });

  const targets = {
    'edge h2 cache hit': { port: edgePort, authority: 'hit.bench.example', pids: processTree(edgePid) },
    'nginx h2 cache hit': { port: nginxPort, authority: 'hit.bench.example', pids: processTree(nginxProxy.pid!) },
    'edge h2 miss (proxied)': { port: edgePort, authority: 'miss.bench.example', pids: processTree(edgePid) },
    'nginx h2 miss (proxied)': { port: nginxPort, authority: 'miss.bench.example', pids: processTree(nginxProxy.pid!) },
    'bare node h2 fixed reply': { port: barePort, authority: 'hit.bench.example', pids: processTree(bare.pid!) },
    'bare node h2 stream API': { port: bareStreamPort, authority: 'hit.bench.example', pids: processTree(bareStream.pid!) },
  };
  console.log(`edge TLS port ${edgePort}, nginx ${nginxPort}, bare Node ${barePort} (stream API ${bareStreamPort})`);
  for (const t of Object.values(targets)) await waitForH2(t.port, t.authority, '/file.css');
  // The nginx pids again, now that its worker runs.
  targets['nginx h2 cache hit'].pids = targets['nginx h2 miss (proxied)'].pids = processTree(nginxProxy.pid!);
  for (const t of Object.values(targets)) h2load(t.port, t.authority, '/file.css', 2, t.pids);

  if (PROFILE_DIR) return profile(edgePid, { hit: targets['edge h2 cache hit'], miss: targets['edge h2 miss (proxied)'] });

  console.log(`h2load -t1 -c${CONNECTIONS} -m${STREAMS} -D${SECONDS} × ${ROUNDS} rounds (interleaved), servers on CPU ${SERVER_CPU}, h2load and the backend on CPU ${CLIENT_CPU}; 1 KB static file, P-256 certificates`);
  const results = new Map<string, H2Result[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, t] of Object.entries(targets)) {
      const r = h2load(t.port, t.authority, '/file.css', SECONDS, t.pids);
      results.set(name, [...(results.get(name) ?? []), r]);
      console.log(`  round ${round + 1}  ${name.padEnd(26)} ${String(Math.round(r.rps)).padStart(7)} req/s   ${r.cpuUs.toFixed(1)} CPU-µs/req   failed ${r.failed}`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const cpu = (name: string) => median(results.get(name)!.map((r) => r.cpuUs));
  console.log(`\nmedian of ${ROUNDS} rounds:`);
  for (const [name, rs] of results) console.log(`  ${name.padEnd(26)} ${String(Math.round(median(rs.map((r) => r.rps)))).padStart(7)} req/s   ${cpu(name).toFixed(1)} CPU-µs/req`);
  console.log(`\nrequests per CPU-second, edge/nginx (nginx CPU-µs per request / the edge's):`);
  console.log(`  h2 cache hit: ${(cpu('nginx h2 cache hit') / cpu('edge h2 cache hit')).toFixed(2)}   (target ≥ 0.4)`);
  console.log(`  h2 miss:      ${(cpu('nginx h2 miss (proxied)') / cpu('edge h2 miss (proxied)')).toFixed(2)}   (target ≥ 0.3)`);
  console.log(`  ceiling, bare Node http2 fixed reply/nginx h2 hit: ${(cpu('nginx h2 cache hit') / cpu('bare node h2 fixed reply')).toFixed(2)}   (no routing, no logs, no proxy)`);
  console.log(`  ceiling on the stream API (the edge's), /nginx h2 hit: ${(cpu('nginx h2 cache hit') / cpu('bare node h2 stream API')).toFixed(2)}`);

  // The workload: every default protection on (the per-client rate limit included), 10,000
  // clients behind a trusted proxy's connections. A Node client (h2load cannot vary a header per
  // request): it costs more on its own CPU than h2load, and the server's CPU per request is what is compared.
  const many = {
    'edge h2 cache hit': { port: manyEdge.port, authority: 'hit.bench.example', pids: processTree(manyEdge.pid) },
    'nginx h2 cache hit': { port: nginxPort, authority: 'hit.bench.example', pids: processTree(nginxProxy.pid!) },
    'edge h2 miss (proxied)': { port: manyEdge.port, authority: 'miss.bench.example', pids: processTree(manyEdge.pid) },
    'nginx h2 miss (proxied)': { port: nginxPort, authority: 'miss.bench.example', pids: processTree(nginxProxy.pid!) },
  };
  for (const t of Object.values(many)) manyClients(t.port, t.authority, '/file.css', 2, t.pids);
  console.log(`\n10,000 clients (X-Forwarded-For from a trusted 127.0.0.1), every protection at its default, a Node h2 client -c${MANY_CONNECTIONS} -m${MANY_STREAMS} -D${SECONDS} × ${ROUNDS} rounds (interleaved):`);
  const manyResults = new Map<string, H2Result[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, t] of Object.entries(many)) {
      const r = manyClients(t.port, t.authority, '/file.css', SECONDS, t.pids);
      manyResults.set(name, [...(manyResults.get(name) ?? []), r]);
      console.log(`  round ${round + 1}  ${name.padEnd(26)} ${String(Math.round(r.rps)).padStart(7)} req/s   ${r.cpuUs.toFixed(1)} CPU-µs/req   not 2xx ${r.failed}`);
    }
  }
  const manyCpu = (name: string) => median(manyResults.get(name)!.map((r) => r.cpuUs));
  console.log(`  median: edge hit ${manyCpu('edge h2 cache hit').toFixed(1)}, nginx hit ${manyCpu('nginx h2 cache hit').toFixed(1)}, edge miss ${manyCpu('edge h2 miss (proxied)').toFixed(1)}, nginx miss ${manyCpu('nginx h2 miss (proxied)').toFixed(1)} CPU-µs/req`);
  console.log(`  requests per CPU-second, edge/nginx: h2 cache hit ${(manyCpu('nginx h2 cache hit') / manyCpu('edge h2 cache hit')).toFixed(2)} (target ≥ 0.4), h2 miss ${(manyCpu('nginx h2 miss (proxied)') / manyCpu('edge h2 miss (proxied)')).toFixed(2)} (target ≥ 0.3)`);
}

/** CPU profiles of the edge's h2 hit and miss paths under h2load, and their top frames (docs/perf/). */
async function profile(edgePid: number, paths: Record<'hit' | 'miss', { port: number; authority: string; pids: number[] }>): Promise<void> {
  mkdirSync(PROFILE_DIR!, { recursive: true });
  for (const [name, t] of Object.entries(paths)) {
    process.kill(edgePid, 'SIGTTIN');
    await sleep(200);
    const r = h2load(t.port, t.authority, '/file.css', SECONDS, t.pids);
    writeFileSync(join(PROFILE_DIR!, 'next'), `h2-${name}`);
    process.kill(edgePid, 'SIGTTOU');
    while (!existsSync(join(PROFILE_DIR!, `h2-${name}.done`))) await sleep(100);
    rmSync(join(PROFILE_DIR!, `h2-${name}.done`));
    const top = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./profile-top.ts', import.meta.url)), join(PROFILE_DIR!, `h2-${name}.cpuprofile`), '40'], { encoding: 'utf8' });
    const text = `edge h2 ${name} path: h2load -t1 -c${CONNECTIONS} -m${STREAMS} -D${SECONDS}, ${Math.round(r.rps)} req/s, ${r.cpuUs.toFixed(1)} CPU-µs/req; CPU profile (200 µs sampling) of the edge process\n\n${top.stdout}`;
    writeFileSync(join(PROFILE_DIR!, `h2-${name}.txt`), text);
    console.log(text);
  }
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(async () => {
    // SIGTERM: nginx's master stops its workers, serve its parts (a SIGKILL would orphan them).
    for (const child of children) child.kill('SIGTERM');
    await sleep(2000);
    for (const child of children) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    process.exit();
  });
