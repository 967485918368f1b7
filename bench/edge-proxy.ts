// Edge benchmark: `palisade edge` as it ships (fed by a `palisade api` over the change feed, access
// log on, the default protections on: baseprotection, the per-client rate limit, the client's
// backend share) against nginx configured as the same reverse proxy (keep-alive upstream,
// forwarding headers, access log on; proxy_cache for the hit path), both on one core, in the same
// run, with wrk on the other core and a tiny static backend (nginx, one worker) behind both.
// wrk stands for a front proxy carrying 10,000 clients (127.0.0.1 is a trusted proxy, each
// request names its client in X-Forwarded-For, bench/edge/many-clients.lua): one client at wrk's
// pace is what the per-client limit exists to refuse. Every round prints its non-2xx count, and a
// ratio over a round with refusals is not printed (it would measure refusals, not the proxy).
// Also: the edge's memory with 10,000 domains (where it goes: heap, buffers, mapped files), and
// the time from an API change to the edge applying it. A bare Node http server answering from
// memory on the same core shows the platform's ceiling.
// Then workers: `palisade edge` with 1 and 2 worker processes (PALISADE_EDGE_WORKERS) beside nginx
// with 1 and 2 worker_processes, everything on both cores (wrk too): the proxied miss and the cache
// hit over keep-alive, and the cache hit with a new connection per request (where handing each
// connection from the primary to a worker costs most), for both ways of balancing the edge's
// workers (PALISADE_EDGE_WORKER_BALANCE=client, kernel).
//
//   npm run bench:edge                  (needs wrk, nginx and taskset: Debian wrk, nginx-light, util-linux)
//   BENCH_SECONDS=20 BENCH_ROUNDS=5 npm run bench:edge
//   BENCH_WORKERS=0 npm run bench:edge  (without the workers part)
//   BENCH_PROFILE_DIR=docs/perf/edge    CPU profiles of the hit and miss paths and their top frames, then stop
//   BENCH_RATE=5000                     the fixed rate of the latency part (open loop, bench/edge/open-loop.ts)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DOMAIN_DEFAULTS } from '../src/model/domain.ts';
import { generateApiKey, hashApiKey } from '../src/model/user.ts';
import { openStore } from '../src/store/index.ts';
import { freePort } from '../test/helpers/redis-server.ts';
import { runBench } from './harness.ts';
import { cpuSeconds, memoryMiB, processTree } from './dns/servers.ts';
import { memoryBreakdown } from './edge/memory.ts';
import { median, spread } from './stats.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const FIXED_RATE = Number(process.env.BENCH_RATE ?? 5000);
const OPEN_LOOP = fileURLToPath(new URL('./edge/open-loop.ts', import.meta.url));
/** wrk's script: each request from one of 10,000 clients (X-Forwarded-For, believed from the trusted 127.0.0.1). */
const MANY_CLIENTS = fileURLToPath(new URL('./edge/many-clients.lua', import.meta.url));
const PROXY_CPU = '0';
const OTHER_CPU = '1';
const FILLER_DOMAINS = 10_000;
const CHANGES = 50;

for (const tool of ['wrk', 'nginx', 'taskset']) {
  if (spawnSync('sh', ['-c', `command -v ${tool} || test -x /usr/sbin/${tool}`]).status !== 0) {
    console.error(`bench:edge needs ${tool} (Debian: apt-get install wrk nginx-light util-linux)`);
    process.exit(2);
  }
}
const MEMORY_REPORT = new URL('./edge/memory-report.mjs', import.meta.url).href;
const PROFILER = new URL('./edge/profiler.mjs', import.meta.url).href;
/** BENCH_PROFILE_DIR: profile the edge's hit and miss paths (a CPU profile each, and its top frames), then stop. */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR ? resolvePath(process.env.BENCH_PROFILE_DIR) : undefined;
const NGINX = spawnSync('sh', ['-c', 'command -v nginx || echo /usr/sbin/nginx'], { encoding: 'utf8' }).stdout.trim();

const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-edge-'));
const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `logFile`: standard output (the edge's access log) goes to this file, as nginx's access log goes
 * to its file: a pipe read by this process, on the core wrk saturates, would fall behind, and the
 * edge would drop lines past its bounded backlog — measuring less logging than nginx does.
 */
function start(cpu: string, command: string, args: string[], env: Record<string, string> = {}, logFile?: string): ChildProcess {
  const stdout = logFile ? openSync(logFile, 'a') : 'pipe';
  const child = spawn('taskset', ['-c', cpu, command, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'pipe'] });
  if (typeof stdout === 'number') closeSync(stdout);
  children.push(child);
  // Start-up problems are shown; the rest (access logs) is read and dropped, as a log shipper would.
  let head = '';
  child.stderr!.on('data', (d: Buffer) => {
    const text = d.toString();
    if (head.length < 4000) head += text;
    // The edge dropping log lines would make it look cheaper than it is: said, never hidden.
    if (text.includes('log line(s) dropped')) console.error(`  ${command} ${args.at(-1)}: ${text.trim()}`);
  });
  child.stdout?.on('data', (d: Buffer) => (head.length < 4000 ? (head += d.toString()) : undefined));
  child.once('exit', (code) => {
    if (code) console.error(`${command} ${args.join(' ')} exited ${code}:\n${head}`);
  });
  return child;
}

async function waitFor(url: string, host: string, want = 200, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  let last: unknown;
  while (Date.now() - started < timeoutMs) {
    last = await get(url, host).catch((error: Error) => error.message);
    if (last === want) return;
    await sleep(50);
  }
  throw new Error(`${url} (${host}) did not answer ${want} (last: ${String(last)})`);
}

function get(url: string, host: string): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

function nginxConfig(name: string, body: string, workers = 1): string {
  const base = join(dir, name);
  mkdirSync(base, { recursive: true });
  const conf = `worker_processes ${workers};
daemon off;
pid ${base}/nginx.pid;
error_log ${base}/error.log warn;
events { worker_connections 4096; }
http {
  client_body_temp_path ${base}/body; proxy_temp_path ${base}/proxy; fastcgi_temp_path ${base}/fcgi; uwsgi_temp_path ${base}/uwsgi; scgi_temp_path ${base}/scgi;
${body}
}
`;
  writeFileSync(join(base, 'nginx.conf'), conf);
  return join(base, 'nginx.conf');
}

/** A process's memory as one phrase: PSS (what it adds to the host, shared pages split) and RSS. */
function memoryText(pid: number): string {
  const { pss, rss } = memoryMiB(pid);
  return `PSS ${pss.toFixed(0)} MB (RSS ${rss.toFixed(0)})`;
}

/** PSS of a process and its children (an edge's primary and workers), MB: summed RSS would count their shared pages once per process. */
function pssTreeMb(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return memoryMiB(pid).pss + children.reduce((sum, child) => sum + pssTreeMb(child), 0);
}

interface WrkResult {
  rps: number;
  p99: number;
  /** Answers other than 2xx/3xx, and socket errors (connect, read, write, timeout). */
  non2xx: number;
  errors: number;
  /** CPU time (user + system) the server's processes spent per answered request, µs. */
  cpuUs?: number;
}

/** wrk as below, with the CPU time of the server's processes (`pid` and its children) over the run. */
function measured(pid: number, url: string, host: string, seconds: number): WrkResult {
  const pids = processTree(pid);
  const before = cpuSeconds(pids);
  const r = wrk(url, host, seconds);
  return { ...r, cpuUs: ((cpuSeconds(pids) - before) * 1e6) / (r.rps * seconds) };
}

/**
 * wrk against one URL with a Host header (on `cpu`; `close`: a new connection per request;
 * `manyClients`: each request from one of 10,000 clients): requests/s, p99 (ms), refusals.
 */
function wrk(url: string, host: string, seconds: number, cpu = OTHER_CPU, close = false, manyClients = true): WrkResult {
  const headers = ['-H', `Host: ${host}`, ...(close ? ['-H', 'Connection: close'] : [])];
  const script = manyClients ? ['-s', MANY_CLIENTS] : [];
  const run = spawnSync('taskset', ['-c', cpu, 'wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', ...script, ...headers, url], { encoding: 'utf8' });
  const text = run.stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? 0);
  const p99m = /99%\s+([\d.]+)(us|ms|s)/.exec(text);
  const p99 = p99m ? Number(p99m[1]) * (p99m[2] === 'us' ? 0.001 : p99m[2] === 's' ? 1000 : 1) : NaN;
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const errors = socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  if (rps === 0) throw new Error(`wrk failed: ${text}${run.stderr}`);
  return { rps, p99, non2xx, errors };
}

const roundLine = (round: number, name: string, r: WrkResult, width = 22) =>
  `  round ${round} ${name.padEnd(width)} ${String(Math.round(r.rps)).padStart(7)} req/s${r.cpuUs === undefined ? '' : `   ${r.cpuUs.toFixed(1).padStart(5)} CPU-µs/req`}   p99 ${r.p99.toFixed(2)} ms   non-2xx ${r.non2xx}${r.errors ? `   socket errors ${r.errors}` : ''}`;

/**
 * "a/b = median (min–max over rounds)", the rounds paired as they ran; withheld when any round of
 * either side had refusals or socket errors: a ratio over refusals measures the refusing.
 */
function ratioLine(label: string, a: WrkResult[], b: WrkResult[], target: string): string {
  const refused = [...a, ...b].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
  if (refused > 0) return `  ${label}: NO RATIO — ${refused} non-2xx answers or socket errors in its rounds (see above)`;
  const ratios = a.map((r, i) => r.rps / b[i]!.rps);
  const [lo, hi] = spread(ratios);
  return `  ${label} = ${median(ratios).toFixed(2)} (${lo.toFixed(2)}–${hi.toFixed(2)} over ${ratios.length} rounds; target ${target})`;
}

/** The same per-core ratio from CPU time per request (a/b of µs: the share of nginx's speed), steady on a busy machine. */
function cpuRatioLine(label: string, a: WrkResult[], b: WrkResult[]): string {
  const refused = [...a, ...b].reduce((sum, r) => sum + r.non2xx + r.errors, 0);
  if (refused > 0) return `  ${label}: NO RATIO — ${refused} non-2xx answers or socket errors in its rounds`;
  const ratios = a.map((r, i) => r.cpuUs! / b[i]!.cpuUs!);
  const [lo, hi] = spread(ratios);
  return `  ${label} = ${median(ratios).toFixed(2)} (${lo.toFixed(2)}–${hi.toFixed(2)} over ${ratios.length} rounds)`;
}

async function main(): Promise<void> {
  // The tiny static backend.
  const backendPort = await freePort();
  // nginx's workers drop root: the file must be readable by them.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'www'), { recursive: true, mode: 0o755 });
  writeFileSync(join(dir, 'www', 'file.css'), `/* ${'x'.repeat(1000)} */\n`);
  start(OTHER_CPU, NGINX, ['-c', nginxConfig('backend', `  access_log off;\n  types { text/css css; }\n  server { listen 127.0.0.1:${backendPort}; root ${dir}/www; }`)]);

  // nginx as the reverse proxy peer: the same two sites as the edge (miss: no cache; hit: cached).
  const nginxPort = await freePort();
  const proxyHeaders = 'proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $host; proxy_set_header X-Forwarded-For $remote_addr; proxy_set_header X-Forwarded-Proto $scheme; proxy_set_header X-Forwarded-Host $host; proxy_set_header Via "1.1 nginx";';
  const nginxProxy = start(PROXY_CPU, NGINX, [
    '-c',
    nginxConfig(
      'proxy',
      `  access_log ${dir}/proxy/access.log;
  proxy_cache_path ${dir}/proxy/cache levels=1:2 keys_zone=edge:10m max_size=1g;
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 64; }
  server { listen 127.0.0.1:${nginxPort}; server_name miss.bench.example; location / { proxy_pass http://backend; ${proxyHeaders} } }
  server { listen 127.0.0.1:${nginxPort}; server_name hit.bench.example; location / { proxy_pass http://backend; ${proxyHeaders} proxy_cache edge; proxy_cache_valid 200 120m; add_header X-Cache $upstream_cache_status; } }`,
    ),
  ]);

  // The service: a store with the two bench domains and 10,000 more bound to node 1; an API; two edges.
  const dataDir = join(dir, 'api');
  const store = openStore({ dataDir });
  const user = await store.createUser({ name: 'bench', email: 'bench@example.org', limits: { max_domains: FILLER_DOMAINS + 10 } });
  const apiKey = generateApiKey();
  await store.addApiKey(user.id, hashApiKey(apiKey), 'bench');
  const node1 = await store.createNode({ name: 'e1', ipv4: '127.0.0.1', ipv6: null, location: 'DE', status: 'active' });
  const node2 = await store.createNode({ name: 'e2', ipv4: '127.0.0.2', ipv6: null, location: 'DE', status: 'active' });
  // The workers part's edges: nodes of their own, serving the two bench domains (bound to every node).
  const workerNodes = WORKERS_PART ? await Promise.all(WORKER_EDGES.map((e, i) => store.createNode({ name: `w${i}`, ipv4: `127.0.1.${i + 1}`, ipv6: null, location: 'DE', status: 'active' }))) : [];
  const zone = (domain: string, extra: Partial<typeof DOMAIN_DEFAULTS>) => (ctx: { now: string }) => ({
    domain: { ...DOMAIN_DEFAULTS, ...extra, backend: `127.0.0.1:${backendPort}`, domain, ownerId: user.id, ns_active: false, created: ctx.now, updated: ctx.now, revision: 0 },
    records: [],
  });
  await store.createZone(zone('miss.bench.example', { mask: '' }));
  await store.createZone(zone('hit.bench.example', { mask: '', cachelevel: 3 }));
  for (let i = 0; i < FILLER_DOMAINS; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, j) => store.createZone(zone(`d${i + j}.filler.example`, { bind_node: [node1.id], mask: 'www,shop' }))));
  }
  const allNodes = [node1, node2, ...workerNodes];
  const syncPorts = await Promise.all(allNodes.map(() => freePort()));
  const consumers = await Promise.all(
    allNodes.map(async (node, i) => {
      const token = `nt_${randomBytes(24).toString('base64url')}`;
      const secret = randomBytes(24).toString('base64url');
      await store.createConsumer({ name: `edge-${node.name}`, url: `http://127.0.0.1:${syncPorts[i]}/notify`, node: node.id, tokenHash: hashApiKey(token), secret });
      return { token, secret };
    }),
  );
  await store.close();

  const apiPort = await freePort();
  // The protections keep their defaults. wrk is a trusted proxy in front (its requests name 10,000
  // clients): the per-client rate limit and backend share then see clients at a client's pace.
  // One operator's bench: domains are served at once (no ownership proof to wait for).
  const common = { PALISADE_OWNERSHIP_PROOF: 'off', PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_LOG_LEVEL: process.env.BENCH_EDGE_LOG_LEVEL ?? 'info' };
  const edgeEnv = { PALISADE_EDGE_TRUSTED_PROXIES: '127.0.0.1' };
  start(OTHER_CPU, process.execPath, ['bin/palisade.js', 'api'], { ...common, PALISADE_DATA_DIR: dataDir, PALISADE_API_PORT: String(apiPort), PALISADE_API_RATE_PER_KEY: '0' });
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const edges = await Promise.all(
    [node1, node2].map(async (node, i) => {
      const httpPort = await freePort();
      const child = start(i === 0 ? PROXY_CPU : OTHER_CPU, process.execPath, ['bin/palisade.js', 'edge'], {
        ...common,
        ...edgeEnv,
        // Reports where its memory goes on SIGUSR2 (bench/edge/memory.ts).
        NODE_OPTIONS: `--import ${MEMORY_REPORT}${PROFILE_DIR ? ` --import ${PROFILER}` : ''}`,
        ...(PROFILE_DIR ? { BENCH_PROFILE_DIR: PROFILE_DIR } : {}),
        // One process, as the edge was before workers (the workers part below has the others).
        PALISADE_EDGE_WORKERS: '1',
        PALISADE_DATA_DIR: join(dir, `edge${i}`),
        PALISADE_EDGE_NODE: String(node.id),
        PALISADE_EDGE_HTTP_PORT: String(httpPort),
        PALISADE_EDGE_HTTPS_PORT: String(await freePort()),
        PALISADE_SYNC_URL: apiUrl,
        PALISADE_SYNC_TOKEN: consumers[i]!.token,
        PALISADE_SYNC_SECRET: consumers[i]!.secret,
        PALISADE_SYNC_PORT: String(syncPorts[i]),
      }, join(dir, `edge${i}-access.log`));
      return { child, url: `http://127.0.0.1:${httpPort}` };
    }),
  );
  const edge = edges[0]!;
  await waitFor(`${edge.url}/file.css`, 'miss.bench.example');
  await waitFor(`${edge.url}/file.css`, 'd9999.filler.example');
  await waitFor(`${edges[1]!.url}/file.css`, 'miss.bench.example');
  await waitFor(`http://127.0.0.1:${nginxPort}/file.css`, 'miss.bench.example');
  await sleep(1000);
  console.log(`edge memory: ${memoryText(edge.child.pid!)} with ${FILLER_DOMAINS + 2} domains; ${memoryText(edges[1]!.child.pid!)} with 2 (the other node's edge)`);
  console.log(`  with ${FILLER_DOMAINS + 2} domains, before any load: ${await memoryBreakdown(edge.child)}`);

  // API change → edge applies it: add a mask name, time until the edge routes it.
  const times: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const name = `d${i}.filler.example`;
    const started = performance.now();
    const res = await fetch(`${apiUrl}/domains/${name}`, { method: 'PATCH', headers: { 'x-auth-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ mask: `www,shop,n${i}` }) });
    if (res.status !== 200) throw new Error(`PATCH answered ${res.status}`);
    const acked = performance.now();
    while ((await get(`${edge.url}/file.css`, `n${i}.${name}`)) !== 200) await sleep(1);
    times.push(performance.now() - acked);
    void started;
  }
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!.toFixed(1);
  console.log(`API change (2xx) → edge applying it, ${CHANGES} changes: p50 ${pct(50)} ms, p99 ${pct(99)} ms (push + pull + apply)`);

  // The platform's ceiling on this machine: a bare Node http server answering the same 1 KB from memory.
  const barePort = await freePort();
  const bareBody = readFileSync(join(dir, 'www', 'file.css'));
  const bareNode = start(PROXY_CPU, process.execPath, [
    '-e',
    `const b=Buffer.from(${JSON.stringify(bareBody.toString('base64'))},'base64');require('node:http').createServer((q,r)=>{r.writeHead(200,{'content-type':'text/css','content-length':b.length});r.end(b)}).listen(${barePort},'127.0.0.1')`,
  ]);
  await waitFor(`http://127.0.0.1:${barePort}/`, 'bare');

  // Throughput: warm up, then ROUNDS interleaved rounds; medians and the spread of the ratios.
  console.log(`\nwrk -t1 -c${CONNECTIONS} -d${SECONDS}s × ${ROUNDS} rounds (interleaved), 10,000 clients (X-Forwarded-For), proxy on CPU ${PROXY_CPU}, wrk and backend on CPU ${OTHER_CPU}; 1 KB static file`);
  const targets = {
    'edge miss (proxied)': [`${edge.url}/file.css`, 'miss.bench.example'],
    'nginx miss (proxied)': [`http://127.0.0.1:${nginxPort}/file.css`, 'miss.bench.example'],
    'edge cache hit': [`${edge.url}/file.css`, 'hit.bench.example'],
    'nginx cache hit': [`http://127.0.0.1:${nginxPort}/file.css`, 'hit.bench.example'],
    'bare node fixed reply': [`http://127.0.0.1:${barePort}/`, 'bare'],
  } as const;
  /** Whose CPU time each target's requests cost. */
  const serverPid = (name: keyof typeof targets) => (name.startsWith('edge') ? edge.child.pid! : name.startsWith('nginx') ? nginxProxy.pid! : bareNode.pid!);
  type Target = keyof typeof targets;
  if (PROFILE_DIR) return profile(edge.child, { hit: targets['edge cache hit'], miss: targets['edge miss (proxied)'] });
  for (const [url, host] of Object.values(targets)) wrk(url, host, 2);
  const rounds = new Map<Target, WrkResult[]>(Object.keys(targets).map((name) => [name as Target, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, [url, host]] of Object.entries(targets) as Array<[Target, readonly [string, string]]>) {
      const r = measured(serverPid(name), url, host, SECONDS);
      console.log(roundLine(round + 1, name, r));
      rounds.get(name)!.push(r);
    }
  }
  console.log(`\nmedian of ${ROUNDS} rounds:`);
  for (const [name, results] of rounds) {
    const rps = results.map((r) => r.rps);
    const [lo, hi] = spread(rps);
    console.log(`  ${name.padEnd(22)} ${String(Math.round(median(rps))).padStart(7)} req/s (${Math.round(lo)}–${Math.round(hi)})   ${median(results.map((r) => r.cpuUs!)).toFixed(1)} CPU-µs/req   p99 ${median(results.map((r) => r.p99)).toFixed(2)} ms   non-2xx ${results.reduce((sum, r) => sum + r.non2xx, 0)}`);
  }
  const r = (name: Target) => rounds.get(name)!;
  console.log(ratioLine('miss path: edge/nginx', r('edge miss (proxied)'), r('nginx miss (proxied)'), '≥ 0.35'));
  console.log(ratioLine('cache hit: edge/nginx', r('edge cache hit'), r('nginx cache hit'), '≥ 0.7'));
  console.log(cpuRatioLine('CPU per request, miss: nginx/edge', r('nginx miss (proxied)'), r('edge miss (proxied)')));
  console.log(cpuRatioLine('CPU per request, hit: nginx/edge', r('nginx cache hit'), r('edge cache hit')));
  console.log(cpuRatioLine('CPU per request, ceiling: nginx hit/bare Node', r('nginx cache hit'), r('bare node fixed reply')));
  console.log(ratioLine('ceiling: bare Node http fixed reply/nginx cache hit', r('bare node fixed reply'), r('nginx cache hit'), 'none: no routing, no logs, no proxy'));
  console.log(`  edge after the runs: ${memoryText(edge.child.pid!)}; nginx proxy ${memoryText(nginxProxy.pid!)} (taskset's child)`);
  console.log(`  edge memory after the runs: ${await memoryBreakdown(edge.child)}`);
  // Both log every request to a file: the edge's lines (its standard output) beside nginx's.
  const logMb = (path: string) => (existsSync(path) ? statSync(path).size / 1048576 : 0);
  console.log(`  access logs written: edge ${logMb(join(dir, 'edge0-access.log')).toFixed(0)} MB, nginx ${logMb(join(dir, 'proxy', 'access.log')).toFixed(0)} MB`);

  // Latency at a fixed rate, open loop (bench/edge/open-loop.ts on the other core).
  console.log(`\nfixed ${FIXED_RATE} req/s for ${SECONDS} s, open loop (latency from each request's due time), ≤ 256 keep-alive connections, 10,000 clients, ${FILLER_DOMAINS + 2} domains loaded:`);
  for (const name of ['edge cache hit', 'nginx cache hit', 'edge miss (proxied)', 'nginx miss (proxied)'] as const) {
    const [url, host] = targets[name];
    const run = spawnSync('taskset', ['-c', OTHER_CPU, process.execPath, '--import', 'tsx', OPEN_LOOP, url, host, String(FIXED_RATE), String(SECONDS)], { encoding: 'utf8' });
    const line = run.stdout.trim().split('\n').at(-1) ?? '';
    if (run.status !== 0 || !line.startsWith('{')) throw new Error(`open-loop failed: ${run.stdout}${run.stderr}`);
    const f = JSON.parse(line) as { answered: number; non2xx: number; socketErrors: number; lost: number; p50: number; p99: number; p999: number; max: number };
    console.log(`  ${name.padEnd(22)} p50 ${f.p50.toFixed(2)} ms   p99 ${f.p99.toFixed(2)} ms   p99.9 ${f.p999.toFixed(2)} ms   max ${f.max.toFixed(2)} ms   answered ${f.answered}   lost ${f.lost}   non-2xx ${f.non2xx}   socket errors ${f.socketErrors}`);
  }
  console.log('  target: edge hit p99 ≤ 5 ms, 0 lost');

  if (WORKERS_PART) await workersPart({ backendPort, proxyHeaders, apiUrl, common, consumers: consumers.slice(2), syncPorts: syncPorts.slice(2), nodes: workerNodes.map((n) => n.id) });
}

/** CPU profiles of the edge's hit and miss paths under wrk (bench/edge/profiler.mjs), and their top frames. */
async function profile(edge: ChildProcess, paths: Record<'hit' | 'miss', readonly [string, string]>): Promise<void> {
  mkdirSync(PROFILE_DIR!, { recursive: true });
  for (const [name, [url, host]] of Object.entries(paths)) {
    wrk(url, host, 2);
    edge.kill('SIGTTIN');
    await sleep(200);
    const r = wrk(url, host, SECONDS);
    writeFileSync(join(PROFILE_DIR!, 'next'), name);
    edge.kill('SIGTTOU');
    while (!existsSync(join(PROFILE_DIR!, `${name}.done`))) await sleep(100);
    rmSync(join(PROFILE_DIR!, `${name}.done`));
    const top = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./profile-top.ts', import.meta.url)), join(PROFILE_DIR!, `${name}.cpuprofile`), '40'], { encoding: 'utf8' });
    const text = `edge ${name} path: wrk -t1 -c${CONNECTIONS} -d${SECONDS}s, ${Math.round(r.rps)} req/s, non-2xx ${r.non2xx}; CPU profile (200 µs sampling) of the edge process\n\n${top.stdout}`;
    writeFileSync(join(PROFILE_DIR!, `${name}.txt`), text);
    console.log(text);
  }
}

/** The edges of the workers part: workers, balance, and whether wrk's connections count as many clients. */
const WORKER_EDGES = [
  { name: 'edge 1 worker', workers: 1, balance: 'client', manyClients: false },
  // wrk sends everything from 127.0.0.1: made a trusted proxy, its connections go round the workers
  // as many clients' would (without it, one client: all of them to one worker — shown too).
  { name: 'edge 2 workers client', workers: 2, balance: 'client', manyClients: true },
  { name: 'edge 2 workers kernel', workers: 2, balance: 'kernel', manyClients: false },
  { name: 'edge 2 w. one client', workers: 2, balance: 'client', manyClients: false },
] as const;
const WORKERS_PART = process.env.BENCH_WORKERS !== '0';
const BOTH_CPUS = '0,1';

async function workersPart(o: { backendPort: number; proxyHeaders: string; apiUrl: string; common: Record<string, string>; consumers: Array<{ token: string; secret: string }>; syncPorts: number[]; nodes: number[] }): Promise<void> {
  const nginx: Array<{ name: string; url: string }> = [];
  for (const workers of [1, 2]) {
    const port = await freePort();
    start(BOTH_CPUS, NGINX, [
      '-c',
      nginxConfig(
        `proxy-w${workers}`,
        `  access_log ${dir}/proxy-w${workers}/access.log;
  proxy_cache_path ${dir}/proxy-w${workers}/cache levels=1:2 keys_zone=edge:10m max_size=1g;
  upstream backend { server 127.0.0.1:${o.backendPort}; keepalive 64; }
  server { listen 127.0.0.1:${port}; server_name miss.bench.example; location / { proxy_pass http://backend; ${o.proxyHeaders} } }
  server { listen 127.0.0.1:${port}; server_name hit.bench.example; location / { proxy_pass http://backend; ${o.proxyHeaders} proxy_cache edge; proxy_cache_valid 200 120m; add_header X-Cache $upstream_cache_status; } }`,
        workers,
      ),
    ]);
    nginx.push({ name: `nginx ${workers} worker${workers > 1 ? 's' : ''}`, url: `http://127.0.0.1:${port}` });
  }
  const edges: Array<{ name: string; url: string; pid: number }> = [];
  for (const [i, e] of WORKER_EDGES.entries()) {
    const httpPort = await freePort();
    const child = start(BOTH_CPUS, process.execPath, ['bin/palisade.js', 'edge'], {
      ...o.common,
      // This part compares how connections reach workers, one wrk client among them: the
      // per-client rate limit is off here (the single-core part above keeps every default).
      PALISADE_EDGE_CLIENT_RATE: '0',
      PALISADE_EDGE_BACKEND_SHARE_PER_CLIENT: String(CONNECTIONS * 4),
      PALISADE_DATA_DIR: join(dir, `edge-w${i}`),
      PALISADE_EDGE_NODE: String(o.nodes[i]),
      PALISADE_EDGE_HTTP_PORT: String(httpPort),
      PALISADE_EDGE_HTTPS_PORT: String(await freePort()),
      PALISADE_SYNC_URL: o.apiUrl,
      PALISADE_SYNC_TOKEN: o.consumers[i]!.token,
      PALISADE_SYNC_SECRET: o.consumers[i]!.secret,
      PALISADE_SYNC_PORT: String(o.syncPorts[i]),
      PALISADE_EDGE_WORKERS: String(e.workers),
      PALISADE_EDGE_WORKER_BALANCE: e.balance,
      ...(e.manyClients ? { PALISADE_EDGE_TRUSTED_PROXIES: '127.0.0.1' } : {}),
    }, join(dir, `edge-w${i}-access.log`));
    edges.push({ name: e.name, url: `http://127.0.0.1:${httpPort}`, pid: child.pid! });
  }
  for (const t of [...edges, ...nginx]) for (const host of ['miss.bench.example', 'hit.bench.example']) await waitFor(`${t.url}/file.css`, host);
  await sleep(1000);
  const pssBefore = edges.map((e) => pssTreeMb(e.pid).toFixed(0));

  const runs: Array<{ name: string; url: string; host: string; close: boolean }> = [];
  for (const [path, host] of [['miss', 'miss.bench.example'], ['hit', 'hit.bench.example']] as const) for (const t of [...edges, ...nginx]) runs.push({ name: `${t.name} ${path}`, url: `${t.url}/file.css`, host, close: false });
  for (const t of [edges[0]!, edges[1]!, edges[2]!, nginx[1]!]) runs.push({ name: `${t.name} hit, new conn.`, url: `${t.url}/file.css`, host: 'hit.bench.example', close: true });

  console.log(`\nworkers: wrk -t1 -c${CONNECTIONS} -d${SECONDS}s; the proxies, wrk and the backend all on CPUs ${BOTH_CPUS} (this machine has two); 1 KB static file`);
  for (const r of runs) wrk(r.url, r.host, 2, BOTH_CPUS, r.close, false);
  const best = new Map<string, WrkResult>();
  let refused = 0;
  for (let round = 0; round < 2; round++) {
    for (const r of runs) {
      const result = wrk(r.url, r.host, SECONDS, BOTH_CPUS, r.close, false);
      console.log(roundLine(round + 1, r.name, result, 38));
      refused += result.non2xx + result.errors;
      if (!best.has(r.name) || best.get(r.name)!.rps < result.rps) best.set(r.name, result);
    }
  }
  console.log('\nworkers, best of two rounds (req/s):');
  console.log(`  ${''.padEnd(30)} ${'miss'.padStart(8)} ${'hit'.padStart(8)} ${'hit, new conn.'.padStart(15)}`);
  const cell = (name: string, width: number) => (best.has(name) ? String(Math.round(best.get(name)!.rps)) : '—').padStart(width);
  for (const t of [...edges, ...nginx]) console.log(`  ${t.name.padEnd(30)} ${cell(`${t.name} miss`, 8)} ${cell(`${t.name} hit`, 8)} ${cell(`${t.name} hit, new conn.`, 15)}`);
  const ratio = (a: string, b: string) => (refused > 0 ? 'withheld (refusals above)' : (best.get(a)!.rps / best.get(b)!.rps).toFixed(2));
  console.log(`  2 workers/1 worker: edge miss ${ratio('edge 2 workers client miss', 'edge 1 worker miss')}, hit ${ratio('edge 2 workers client hit', 'edge 1 worker hit')}; nginx miss ${ratio('nginx 2 workers miss', 'nginx 1 worker miss')}, hit ${ratio('nginx 2 workers hit', 'nginx 1 worker hit')}`);
  console.log(`  PSS at start → after the runs (primary and workers, 2 domains): ${edges.map((e, i) => `${e.name} ${pssBefore[i]} → ${pssTreeMb(e.pid).toFixed(0)} MB`).join(', ')}`);
  console.log(`  balance client/kernel (2 workers): miss ${ratio('edge 2 workers client miss', 'edge 2 workers kernel miss')}, hit ${ratio('edge 2 workers client hit', 'edge 2 workers kernel hit')}, hit with a new connection per request ${ratio('edge 2 workers client hit, new conn.', 'edge 2 workers kernel hit, new conn.')}`);
}

runBench(main, children, dir);
