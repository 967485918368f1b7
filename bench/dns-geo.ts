// Geo benchmark: what geo-targeted answers cost. dnsperf on names with geo variants vs plain
// names, without and with EDNS Client Subnet, against the same server (pinned to CPU 1, dnsperf
// to CPU 0); plus GeoIP lookups per second as the server makes them.
//   npm run bench:dns-geo
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLED_GEOIP_DB } from '../src/geo/default-db.ts';
import { GeoLocator } from '../src/geo/locator.ts';
import { writeMmdb } from '../src/geo/mmdb-writer.ts';
import { zoneName } from './dns/workload.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ZONES = 1000;

function dnsperf(port: number, file: string, extra: string[]): number {
  const run = spawnSync('taskset', ['-c', '0', 'dnsperf', '-s', '127.0.0.1', '-p', String(port), '-d', file, '-c', '20', '-q', '200', '-T', '1', '-l', String(SECONDS), ...extra], { encoding: 'utf8' });
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(run.stdout)?.[1] ?? NaN);
  if (!Number.isFinite(qps)) throw new Error(`dnsperf failed:\n${run.stdout}${run.stderr}`);
  return qps;
}

function queries(names: string[]): string {
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
  return `${Array.from({ length: 50_000 }, () => `${names[rnd(names.length)]}.${zoneName(rnd(ZONES))} A`).join('\n')}\n`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-geo-bench-'));
  let server: ChildProcess | undefined;
  try {
    // Loopback (where dnsperf queries from) and the ECS subnet are in Germany.
    const db = join(dir, 'bench.mmdb');
    writeFileSync(
      db,
      writeMmdb(
        [
          { network: '127.0.0.0/8', data: { country_code: 'DE' } },
          { network: '192.0.2.0/24', data: { country_code: 'DE' } },
        ],
        { databaseType: 'bench' },
      ),
    );
    const geoFile = join(dir, 'geo.txt');
    const plainFile = join(dir, 'plain.txt');
    writeFileSync(geoFile, queries(['www', 'api']));
    writeFileSync(plainFile, queries(['mail', 'h1', 'h2', 'sip']));

    server = spawn('taskset', ['-c', '1', process.execPath, '--import', 'tsx', 'bench/dns/server-process.ts'], {
      env: { ...process.env, BENCH_ZONES: String(ZONES), BENCH_GEOIP_DB: db },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      server!.stdout!.on('data', (d: Buffer) => {
        const m = /ready (\d+)/.exec(d.toString());
        if (m) resolve(Number(m[1]));
      });
      server!.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    // ECS option 8: family 1, source /24, scope 0, 192.0.2.
    const ecs = ['-E', '8:00011800c00002'];
    console.log(`geo benchmark: ${ZONES} zones, ${SECONDS} s per run, server on CPU 1, dnsperf on CPU 0`);
    const plain = dnsperf(port, plainFile, []);
    const geo = dnsperf(port, geoFile, []);
    console.log(`no ECS:   plain ${Math.round(plain)} qps   geo ${Math.round(geo)} qps   geo costs ${((1 - geo / plain) * 100).toFixed(1)}%`);
    const plainEcs = dnsperf(port, plainFile, ecs);
    const geoEcs = dnsperf(port, geoFile, ecs);
    console.log(`with ECS: plain ${Math.round(plainEcs)} qps   geo ${Math.round(geoEcs)} qps   geo costs ${((1 - geoEcs / plainEcs) * 100).toFixed(1)}%`);

    // Lookups through the bundled database (1.2 M networks) at addresses spread over IPv4.
    const locator = GeoLocator.open(BUNDLED_GEOIP_DB);
    const n = 1_000_000;
    const addresses = Array.from({ length: n }, (_, i) => {
      const v = Math.imul(i + 1, 2654435761) >>> 0;
      return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
    });
    let started = performance.now();
    for (const address of addresses) locator.locate(address);
    const fresh = n / ((performance.now() - started) / 1000);
    started = performance.now();
    for (let i = 0; i < n; i++) locator.locate(i & 1 ? '193.0.0.1' : '202.12.29.1');
    const repeat = n / ((performance.now() - started) / 1000);
    console.log(
      `GeoIP locate on one core (bundled DB): ${Math.round(fresh)}/s for addresses never seen (MMDB lookup), ${Math.round(repeat)}/s for repeats (remembered)`,
    );
  } finally {
    server?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
