// What each protection costs on the cache-hit path: requests/s through `palisade serve`'s edge
// (one core; wrk and the static backend on the other) for a domain with no protection and for one
// with each: an IP list of 100,000 entries (the client not on it), a country rule, the WAF rules
// on a small GET, the JS challenge passed (a valid clearance cookie), and a bandwidth limit too
// high to bind. Same run, interleaved; target ≤ 15% each. Also the browser's time to pass the
// challenge at the default difficulty (headless Chromium, median of 10).
//
//   npm run bench:protections      (needs wrk, nginx, taskset and /usr/bin/chromium)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { clientPrefix } from '../src/edge/protect/challenge.ts';
import { freePort } from '../test/helpers/redis-server.ts';
import { runBench } from './harness.ts';
import { runAdminCli } from '../test/helpers/spawn-palisade.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SECRET = 'b2'.repeat(32);
const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-prot-'));
chmodSync(dir, 0o755);
const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function start(cpu: string, command: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn('taskset', ['-c', cpu, command, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.resume();
  child.stderr!.resume();
  children.push(child);
  return child;
}

function get(port: number, host: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; cache?: string }> {
  return new Promise((resolve) => {
    const r = request({ host: '127.0.0.1', port, path, agent: false, headers: { host, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, cache: res.headers['x-cache'] as string | undefined }));
    });
    r.on('error', () => resolve({ status: 0 }));
    r.end();
  });
}

function wrk(port: number, host: string, headers: string[]): number {
  const args = ['-c', '1', 'wrk', '-t1', '-c32', `-d${SECONDS}s`, '-H', `Host: ${host}`, ...headers.flatMap((h) => ['-H', h]), `http://127.0.0.1:${port}/file.css`];
  const out = spawnSync('taskset', args, { encoding: 'utf8' }).stdout;
  if (/Non-2xx/.test(out)) throw new Error(`${host}: non-2xx answers\n${out}`);
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
}

async function main(): Promise<void> {
  const backendPort = await freePort();
  mkdirSync(join(dir, 'www'), { mode: 0o755 });
  writeFileSync(join(dir, 'www', 'file.css'), `/* ${'x'.repeat(1000)} */\n`);
  writeFileSync(
    join(dir, 'backend.conf'),
    `worker_processes 1; daemon off; pid ${dir}/b.pid; error_log ${dir}/b.err warn; events { worker_connections 1024; }
http { access_log off; client_body_temp_path ${dir}/t1; proxy_temp_path ${dir}/t2; fastcgi_temp_path ${dir}/t3; uwsgi_temp_path ${dir}/t4; scgi_temp_path ${dir}/t5;
types { text/css css; }
server { listen 127.0.0.1:${backendPort}; root ${dir}/www; } }
`,
  );
  start('1', 'nginx', ['-c', join(dir, 'backend.conf')]);

  const apiPort = await freePort();
  const edgePort = await freePort();
  const env = {
    PALISADE_OWNERSHIP_PROOF: 'off',
    PALISADE_DATA_DIR: join(dir, 'data'),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_API_PORT: String(apiPort),
    PALISADE_DNS_PORT: '0',
    PALISADE_EDGE_HTTP_PORT: String(edgePort),
    PALISADE_EDGE_HTTPS_PORT: '0',
    PALISADE_EDGE_CHALLENGE_SECRET: SECRET,
    // One wrk client sends everything: the per-client rate limit would measure itself.
    PALISADE_EDGE_CLIENT_RATE: '0',
    PALISADE_API_RATE_PER_KEY: '0',
    PALISADE_API_BODY_LIMIT: String(8 * 1_048_576),
    PALISADE_LOG_LEVEL: 'info',
  };
  const user = async (name: string, extra: string[] = []) => JSON.parse((await runAdminCli(env, ['user', 'create', '--name', name, '--email', `${name}@example.org`, ...extra])).stdout).key.api_key as string;
  const plain = await user('plain');
  const listed = await user('listed', ['--max-ips', '100000']);
  start('0', process.execPath, ['bin/palisade.js', 'serve'], env);
  const api = `http://127.0.0.1:${apiPort}`;
  for (let i = 0; i < 200; i++) {
    if ((await fetch(`${api}/healthz`).catch(() => undefined))?.ok) break;
    await sleep(100);
  }
  const call = async (key: string, path: string, body: unknown) => {
    const res = await fetch(`${api}${path}`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  };
  const base = { backend: `127.0.0.1:${backendPort}`, cachelevel: 3, baseprotection: false };
  await call(plain, '/domains', { domain: 'none.example', ...base });
  await call(listed, '/domains', { domain: 'iplist.example', ...base });
  await call(listed, '/security/iplist', { name: 'big', ips: Array.from({ length: 100_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`) });
  await call(plain, '/domains', { domain: 'geo.example', ...base, geomode: 2, geolist: ['JP'] });
  await call(plain, '/domains', { domain: 'waf.example', ...base, baseprotection: true });
  await call(plain, '/domains', { domain: 'challenge.example', ...base, sjschallenge: true });
  await call(plain, '/domains', { domain: 'bwlimit.example', ...base, bwlimit: 100_000_000 });

  const payload = Buffer.from(JSON.stringify({ k: 'clearance', d: 'challenge.example', p: clientPrefix('127.0.0.1'), e: Date.now() + 3_600_000 })).toString('base64url');
  const cookie = `Cookie: __palisade_clearance=${payload}.${createHmac('sha256', Buffer.from(SECRET, 'hex')).update(payload).digest('base64url')}`;
  const targets: Array<[string, string, string[]]> = [
    ['none', 'none.example', []],
    ['IP list (100,000)', 'iplist.example', []],
    ['country rule', 'geo.example', []],
    ['WAF (small GET)', 'waf.example', []],
    ['JS challenge passed', 'challenge.example', [cookie]],
    ['bwlimit (not binding)', 'bwlimit.example', []],
  ];
  for (const [, host, headers] of targets) {
    const cookieHeader: Record<string, string> = headers.length ? { cookie: headers[0]!.slice(8) } : {};
    let answer = await get(edgePort, host, '/file.css', cookieHeader);
    for (let i = 0; i < 100 && answer.cache !== 'HIT'; i++) {
      await sleep(50);
      answer = await get(edgePort, host, '/file.css', cookieHeader);
    }
    if (answer.cache !== 'HIT') throw new Error(`${host}: no cache hit (${answer.status} ${answer.cache})`);
  }

  console.log(`wrk -t1 -c32 -d${SECONDS}s, edge (palisade serve) on CPU 0, wrk and backend on CPU 1; cache hits of a 1 KB file`);
  console.log('each protection is measured right after a run without one, and compared with it (runs here drift by ±15%);');
  console.log('the median of three such pairs is reported');
  for (const [, host, headers] of targets) wrk(edgePort, host, headers);
  const [noneTarget, ...others] = targets;
  const costs = new Map<string, number[]>();
  const rates = new Map<string, number[]>();
  for (let round = 0; round < 3; round++) {
    for (const [name, host, headers] of others) {
      const base = wrk(edgePort, noneTarget![1], noneTarget![2]);
      const rps = wrk(edgePort, host, headers);
      costs.set(name, [...(costs.get(name) ?? []), 1 - rps / base]);
      rates.set(name, [...(rates.get(name) ?? []), rps]);
      rates.set('none', [...(rates.get('none') ?? []), base]);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`  ${'none'.padEnd(24)} ${String(Math.round(median(rates.get('none')!))).padStart(7)} req/s`);
  for (const [name] of others) {
    console.log(`  ${name.padEnd(24)} ${String(Math.round(median(rates.get(name)!))).padStart(7)} req/s   cost ${(100 * median(costs.get(name)!)).toFixed(1)}% (pairs: ${costs.get(name)!.map((c) => (100 * c).toFixed(0)).join(', ')}%; target ≤ 15%)`);
  }

  // The browser's time to pass the challenge, at the default difficulty.
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--host-resolver-rules=MAP challenge.example 127.0.0.1'],
  });
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`http://challenge.example:${edgePort}/page-${i}`);
    await page.waitForFunction(() => !document.title.startsWith('Checking'), null, { timeout: 60_000 });
    await page.waitForLoadState('load');
    times.push(performance.now() - started);
    await context.close();
  }
  await browser.close();
  times.sort((a, b) => a - b);
  console.log(`headless Chromium through the challenge (difficulty 4), 10 fresh browsers: median ${((times[4]! + times[5]!) / 2).toFixed(0)} ms, min ${times[0]!.toFixed(0)}, max ${times[9]!.toFixed(0)} ms`);
}

runBench(main, children, dir);
