// What one change costs when what it changes is big, with the roles as they ship: `palisade api`
// on the embedded store, two `palisade dns` name servers fed by its change feed (pushes on).
//   npm run bench:change-cost
//   BENCH_WRITES=1000 BENCH_BEHIND=5000 npm run bench:change-cost
// Prints, in one run:
//   - record POSTs/s into a 20,000-record zone vs a 20-record zone (and the ratio);
//   - single-IP PUTs/s into a 10,000-entry list vs an empty one (and the ratio);
//   - propagation from the API's 2xx to both name servers answering, writes into the big zone;
//   - bytes on the feed for one record change in the big zone;
//   - a name server 10,000 changes behind: catch-up time and its peak RSS;
//   - a new name server loading the store (zones of 20, 20,000 and 200,000 records) and answering
//     from the 200,000-record zone.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/redis-server.ts';
import { answerCounter } from './sync/answer-count.ts';
import { runAdminCli, startNameServer, startServe, stopProcess, type RunningNameServer } from '../test/helpers/spawn-palisade.ts';

const WRITES = Number(process.env.BENCH_WRITES ?? 2000);
const IP_WRITES = Number(process.env.BENCH_IP_WRITES ?? 1000);
const PROPAGATION_WRITES = Number(process.env.BENCH_PROPAGATION_WRITES ?? 500);
const BEHIND = Number(process.env.BENCH_BEHIND ?? 10_000);
// Clients write in parallel: durable commits are batched (each waits for its flush to disk).
const CONCURRENCY = 16;

const { answers, close: closeUdp } = answerCounter();

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const status = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function waitFor(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Runs `count` requests, CONCURRENCY at a time; returns requests per second. */
async function rate(count: number, request: (i: number) => Promise<Response>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const res = await request(i);
        if (res.status >= 300) throw new Error(`request ${i}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

const dir = mkdtempSync(join(tmpdir(), 'palisade-cost-'));
const nsDirs: string[] = [];
// The per-key rate limit is an operator setting: off here, so that the store and the feed are measured.
const env = { PALISADE_DATA_DIR: dir, PALISADE_API_PORT: String(await freePort()), PALISADE_API_RATE_PER_KEY: '0', PALISADE_API_RATE_PER_ADDRESS: '0' };
const servers: RunningNameServer[] = [];
let api: Awaited<ReturnType<typeof startServe>> | undefined;
try {
  const created = JSON.parse(
    (await runAdminCli(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org', '--max-records', '1000000', '--max-domains', '100', '--max-ips', '100000'])).stdout,
  );
  const key = created.key.api_key as string;
  let seedMs = performance.now();
  const seed = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./change-cost/seed.ts', import.meta.url)), dir, String(created.user.id)], { stdio: 'inherit' });
  if (seed.status !== 0) throw new Error(`seeding failed (${seed.status ?? seed.signal})`);
  seedMs = performance.now() - seedMs;
  const nsEnvs: Array<Record<string, string>> = [];
  for (const name of ['ns1', 'ns2']) {
    const port = await freePort();
    const c = JSON.parse((await runAdminCli(env, ['consumer', 'add', '--name', name, '--url', `http://127.0.0.1:${port}/notify`])).stdout);
    const nsDir = mkdtempSync(join(tmpdir(), 'palisade-cost-ns-'));
    nsDirs.push(nsDir);
    nsEnvs.push({ PALISADE_DATA_DIR: nsDir, PALISADE_SYNC_TOKEN: c.token, PALISADE_SYNC_SECRET: c.secret, PALISADE_SYNC_PORT: String(port), PALISADE_LOG_LEVEL: 'info', PALISADE_DNS_RRL_RATE: '0' });
  }
  api = await startServe(env, 60_000, 'api');
  const url = api.url;
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, { method, headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

  // A new name server loads everything, the 200,000-record zone included, and answers from it.
  for (const e of nsEnvs) {
    const started = performance.now();
    const ns = await startNameServer({ ...e, PALISADE_SYNC_URL: url }, 120_000);
    servers.push(ns);
    await waitFor('snapshot loaded', 120_000, async () => ns.output().includes('snapshot loaded'));
    await waitFor('the 200,000-record zone answers', 10_000, async () => (await answers(ns.dnsPort, 'h199999.huge.example')) === 1);
    const loadMs = Number(/"ms":(\d+),"msg":"sync: snapshot loaded"/.exec(ns.output())?.[1] ?? NaN);
    console.log(
      `new name server: snapshot of 220,020 records (zones of 20, 20,000, 200,000; seeded in ${(seedMs / 1000).toFixed(1)} s) loaded in ${loadMs} ms, answering ${(performance.now() - started).toFixed(0)} ms after start; RSS ${status(ns.child.pid!, 'VmRSS').toFixed(0)} MB`,
    );
  }

  // Write rates, both name servers applying every change as it comes. A warm-up first, then
  // each zone twice, alternately (the mean is printed), so that neither gets the cold start.
  await rate(500, (i) => call('POST', '/domains/small.example/dnsrecords', { name: `warm${i}`, type: 1, value: '192.0.2.1' }));
  const rates = { small: 0, big: 0 };
  for (const round of [0, 1]) {
    for (const zone of ['small', 'big'] as const) {
      rates[zone] += (await rate(WRITES, (i) => call('POST', `/domains/${zone}.example/dnsrecords`, { name: `w${round}x${i}`, type: 1, value: '192.0.2.1' }))) / 2;
    }
  }
  console.log(`record POSTs (${WRITES} × 2 each, ${CONCURRENCY} in flight): 20-record zone ${rates.small.toFixed(0)}/s, 20,000-record zone ${rates.big.toFixed(0)}/s = ${(rates.big / rates.small).toFixed(2)}×`);

  const lists = (await (await call('GET', '/security/iplist')).json()) as Array<{ id: number; name: string }>;
  const listId = (name: string) => lists.find((l) => l.name === name)!.id;
  const ip = (i: number) => encodeURIComponent(`198.${18 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`);
  let ipBase = 0;
  // Each PUT answers the whole list by default (the API's definition): that part grows with the
  // list. With `Prefer: return=minimal` the answer is 204 and only the change is left.
  for (const [label, headers] of [['answering the whole list', {}], ['Prefer: return=minimal', { prefer: 'return=minimal' }]] as const) {
    const put = (list: string, i: number) => fetch(`${url}/security/iplist/${listId(list)}/${ip(i)}`, { method: 'PUT', headers: { 'x-auth-key': key, ...headers } });
    let empty = 0;
    let full = 0;
    for (const round of [0, 1]) {
      empty += (await rate(IP_WRITES, (i) => put('empty', ipBase + round * IP_WRITES + i))) / 2;
      full += (await rate(IP_WRITES, (i) => put('full', ipBase + round * IP_WRITES + i))) / 2;
    }
    ipBase += 2 * IP_WRITES;
    console.log(`single-IP PUTs (${IP_WRITES} × 2 each, ${CONCURRENCY} in flight; ${label}): empty list ${empty.toFixed(0)}/s, 10,000-entry list ${full.toFixed(0)}/s = ${(full / empty).toFixed(2)}×`);
  }

  // Propagation: from the API's 2xx until both name servers answer the new record.
  const delays: number[] = [];
  for (let i = 0; i < PROPAGATION_WRITES; i++) {
    const res = await call('POST', '/domains/big.example/dnsrecords', { name: `p${i}`, type: 1, value: '192.0.2.2' });
    if (res.status !== 201) throw new Error(`write failed: ${res.status}`);
    const acknowledged = performance.now();
    for (const s of servers) await waitFor('propagation', 10_000, async () => (await answers(s.dnsPort, `p${i}.big.example`)) === 1);
    delays.push(performance.now() - acknowledged);
  }
  delays.sort((a, b) => a - b);
  console.log(`propagation into the 20,000-record zone, ${PROPAGATION_WRITES} writes: p50 ${pct(delays, 0.5).toFixed(1)} ms   p99 ${pct(delays, 0.99).toFixed(1)} ms   max ${delays[delays.length - 1]!.toFixed(1)} ms`);

  // Bytes on the feed for one record change in the big zone.
  const one = (await (await call('POST', '/domains/big.example/dnsrecords', { name: 'bytes', type: 1, value: '192.0.2.3' })).json()) as { id: number };
  const revision = Number((await (await call('GET', '/domains/big.example')).json() as { revision: number }).revision);
  const page = await fetch(`${url}/sync/changes?since=${revision - 1}`, { headers: { authorization: `Bearer ${nsEnvs[0]!.PALISADE_SYNC_TOKEN}` } });
  const pageBytes = (await page.arrayBuffer()).byteLength;
  console.log(`feed: one record change (record ${one.id}) in the 20,000-record zone is a ${pageBytes}-byte page`);

  // A name server stopped, 10,000 changes made, then started again: time to catch up, peak RSS.
  const behind = servers.pop()!;
  await stopProcess(behind);
  await rate(BEHIND, (i) => call('POST', `/domains/${i % 2 === 0 ? 'big' : 'huge'}.example/dnsrecords`, { name: `c${i}`, type: 1, value: '192.0.2.4' }));
  const restarted = performance.now();
  const ns = await startNameServer({ ...nsEnvs[1]!, PALISADE_SYNC_URL: url }, 120_000);
  servers.push(ns);
  await waitFor('catch-up', 120_000, async () => (await answers(ns.dnsPort, `c${BEHIND - 1}.huge.example`)) === 1 && (await answers(ns.dnsPort, `c${BEHIND - 2}.big.example`)) === 1);
  const catchUp = performance.now() - restarted;
  console.log(
    `catch-up: a name server ${BEHIND} changes behind answers all of them ${(catchUp / 1000).toFixed(2)} s after its start; peak RSS ${status(ns.child.pid!, 'VmHWM').toFixed(0)} MB (now ${status(ns.child.pid!, 'VmRSS').toFixed(0)} MB)`,
  );
} finally {
  closeUdp();
  for (const s of servers) await stopProcess(s);
  if (api) await stopProcess(api);
  rmSync(dir, { recursive: true, force: true });
  for (const d of nsDirs) rmSync(d, { recursive: true, force: true });
}
