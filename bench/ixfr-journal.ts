// What the IXFR journal costs the DNS part under the attack of issue 37: a secondary listed, one
// customer with 3 zones of 1,000 TXT records of ~3.9 KB, rewritten again and again through the
// API's bulk endpoint (200 records a request, under the 1 MiB body limit). Each process of the
// DNS part (the primary and its workers) keeps the differences, for IXFR.
//   npm run bench:ixfr-journal
//   BENCH_SECONDARY=off npm run bench:ixfr-journal     (no secondary listed: no journal kept)
//   BENCH_BIN=<another checkout>/bin/palisade.js npm run bench:ixfr-journal   (another build, same attack)
//   BENCH_REQUESTS=768 BENCH_SECONDS=100 npm run bench:ixfr-journal
//   BENCH_PER_REQUEST=20 npm run bench:ixfr-journal   (smaller changes: each kept, up to the bounds)
// Prints the PSS (smaps_rollup; its anonymous part too) of each DNS process and their sum, once
// the zones are loaded and again once every change is served, and the journal's metrics.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NO_RATE_LIMITS, OWNERSHIP_OFF, TEST_SECRET_KEY } from '../test/helpers/config.ts';
import { runBench } from './harness.ts';

const BIN = process.env.BENCH_BIN ?? fileURLToPath(new URL('../bin/palisade.js', import.meta.url));
const SECONDARY = process.env.BENCH_SECONDARY !== 'off';
const ZONES = 3;
const RECORDS = 1000;
const PER_REQUEST = Number(process.env.BENCH_PER_REQUEST ?? 200);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 384);
/** The attack stops at this many seconds even if requests are left (the bench stays within 2 minutes). */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const CONCURRENCY = 4;

const dir = mkdtempSync(join(tmpdir(), 'palisade-ixfr-'));
const children: ChildProcess[] = [];
const env = { ...process.env, ...NO_RATE_LIMITS, ...OWNERSHIP_OFF, ...TEST_SECRET_KEY, PALISADE_DATA_DIR: dir, PALISADE_LOG_LEVEL: 'info', PALISADE_API_PORT: '0', PALISADE_DNS_PORT: '0', PALISADE_EDGE_HTTP_PORT: '0', PALISADE_EDGE_HTTPS_PORT: '0' };

/** A ~3.9 KB TXT value, different for each seed. */
const bigTxt = (seed: string) => `${seed}-`.repeat(4000).slice(0, 3900);
const zoneName = (z: number) => `attack${z}.example`;

function admin(args: string[]): string {
  const run = spawnSync(process.execPath, [BIN, 'admin', ...args], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`admin ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

/** Starts `palisade serve`; its API address, DNS port and the DNS part's process id. */
async function serve(): Promise<{ url: string; dnsPort: number; dnsPid: number }> {
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-100_000)));
  child.stderr.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-100_000)));
  for (let i = 0; i < 1200; i++) {
    const line = out.split('\n').find((l) => l.includes('"palisade serving"'));
    if (line) {
      const said = JSON.parse(line) as { api: string; dns: string; parts: { dns: number } };
      return { url: said.api, dnsPort: Number(said.dns.split(':').at(-1)), dnsPid: said.parts.dns };
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`palisade serve did not start:\n${out.slice(-3000)}`);
}

/** The DNS part and its workers (its child processes). */
function dnsProcesses(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return [pid, ...children];
}

function pss(pid: number): { pss: number; anon: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const mib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0) / 1024;
  return { pss: mib('Pss'), anon: mib('Pss_Anon') };
}

function report(label: string, pids: number[]): number {
  const each = pids.map((pid) => ({ pid, ...pss(pid) }));
  const total = each.reduce((sum, p) => sum + p.pss, 0);
  const anon = each.reduce((sum, p) => sum + p.anon, 0);
  const parts = each.map((p, i) => `${i === 0 ? 'primary' : `worker ${i}`} ${p.pss.toFixed(0)} (anon ${p.anon.toFixed(0)})`).join(', ');
  console.log(`${label.padEnd(22)} PSS ${total.toFixed(0).padStart(5)} MiB, anonymous ${anon.toFixed(0).padStart(5)} MiB   [${parts}]`);
  return total;
}

function soaSerial(port: number, zone: string): number {
  const out = spawnSync('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=2', '+short', zone, 'SOA'], { encoding: 'utf8' }).stdout;
  return Number(out.trim().split(/\s+/)[2] ?? NaN);
}

async function main(): Promise<void> {
  const key = (JSON.parse(admin(['user', 'create', '--name', 'attacker', '--email', 'attacker@example.org'])) as { key: { api_key: string } }).key.api_key;
  if (SECONDARY) admin(['secondary', 'add', '--name', 'knot', '--address', '127.0.0.1', '--tsig-key', `hmac-sha256:xfr:${randomBytes(32).toString('base64')}`, '--port', '53535', '--no-catalog']);
  const { url, dnsPort, dnsPid } = await serve();
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const ids: number[][] = [];
  for (let z = 0; z < ZONES; z++) {
    await api('POST', '/domains', { domain: zoneName(z), backend: '198.51.100.1' });
    const zoneIds: number[] = [];
    for (let from = 0; from < RECORDS; from += PER_REQUEST) {
      const create = Array.from({ length: PER_REQUEST }, (_, i) => ({ name: `t${from + i}`, type: 6, value: bigTxt(`v0-${from + i}`) }));
      const made = (await api('POST', `/domains/${zoneName(z)}/dnsrecords/bulk`, { create })) as { created: Array<{ id: number }> };
      zoneIds.push(...made.created.map((r) => r.id));
    }
    await api('POST', `/domains/${zoneName(z)}/activatens`);
    ids.push(zoneIds);
  }
  const wanted = Array.from({ length: ZONES }, () => 0);
  const served = async () => {
    for (let i = 0; i < 600; i++) {
      if (wanted.every((w, z) => soaSerial(dnsPort, zoneName(z)) >= w)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('the name server did not serve the changes within 2 minutes');
  };
  await served();
  await new Promise((r) => setTimeout(r, 2000));
  const pids = dnsProcesses(dnsPid);
  console.log(`${SECONDARY ? 'a secondary listed' : 'no secondary'}; ${ZONES} zones x ${RECORDS} TXT records of ~3.9 KB; DNS part: ${pids.length} processes; ${BIN}`);
  const before = report('zones loaded', pids);
  let next = 0;
  let peak = before;
  const started = performance.now();
  const sampler = setInterval(() => (peak = Math.max(peak, dnsProcesses(dnsPid).reduce((sum, pid) => sum + pss(pid).pss, 0))), 500);
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS && performance.now() - started < SECONDS * 1000) {
        const n = next++;
        const z = n % ZONES;
        const round = Math.floor(n / ZONES);
        const from = (round * PER_REQUEST) % RECORDS;
        const update = ids[z]!.slice(from, from + PER_REQUEST).map((id, i) => ({ id, value: bigTxt(`r${n}-${i}`) }));
        const done = (await api('POST', `/domains/${zoneName(z)}/dnsrecords/bulk`, { update })) as { revision: number };
        wanted[z] = Math.max(wanted[z]!, done.revision);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await served();
  clearInterval(sampler);
  console.log(`${next} bulk requests of ${PER_REQUEST} records in ${seconds.toFixed(1)} s, all served`);
  const after = report('after the changes', pids);
  console.log(`${'peak (sampled)'.padEnd(22)} PSS ${peak.toFixed(0).padStart(5)} MiB`);
  console.log(`grew by ${(after - before).toFixed(0)} MiB`);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const lines = metrics.split('\n').filter((l) => /^palisade_dns_(ixfr_journal_\w+|zones_served) /.test(l));
  console.log(lines.length > 1 ? lines.join('\n') : '(no journal metrics in this build)');
}

runBench(main, children, dir);
