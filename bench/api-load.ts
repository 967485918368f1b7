// API load benchmark: GET of a 100-record zone's records and POST of a record, with autocannon
// against `palisade api` in its own process on loopback, on the embedded store and on Redis (a
// redis-server of its own, when one is installed). Prints req/s and latency percentiles.
//
//   npm run bench:api                 (10 s per phase)
//   BENCH_SECONDS=20 npm run bench:api
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMAIN_DEFAULTS } from '../src/model/domain.ts';
import { generateApiKey, hashApiKey } from '../src/model/user.ts';
import { openStore } from '../src/store/index.ts';
import { startRedis } from '../test/helpers/redis-server.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ZONES = 200;
const RECORDS = 100;

async function seed(dataDir: string, redisUrl?: string): Promise<string> {
  const store = openStore({ dataDir, redisUrl });
  const user = await store.createUser({ name: 'bench', email: 'bench@example.org', limits: { max_domains: ZONES, max_records_per_domain: 100_000 } });
  const key = generateApiKey();
  await store.addApiKey(user.id, hashApiKey(key), 'bench');
  await Promise.all(
    Array.from({ length: ZONES }, (_, z) =>
      store.createZone((ctx) => ({
        domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain: `z${z}.example`, ownerId: user.id, ns_active: true, created: ctx.now, updated: ctx.now, revision: 0 },
        records: Array.from({ length: RECORDS }, (_, i) => ({
          id: ctx.nextRecordId(),
          name: `host${i}`,
          type: 1 as const,
          value: `192.0.2.${i % 250}`,
          ttl: 300,
          priority: null,
          target: [],
        })),
      })),
    ),
  );
  await store.close();
  return key;
}

async function startServer(dataDir: string, redisUrl?: string): Promise<{ url: string; stop: () => Promise<void>; pid: number }> {
  const child = spawn(process.execPath, ['bin/palisade.js', 'api'], {
    // One key sends everything here, far past a customer's rate limit: the limit is off so the
    // figures measure the request path and the store.
    env: {
      ...process.env,
      PALISADE_DATA_DIR: dataDir,
      PALISADE_API_PORT: '0',
      PALISADE_LOG_LEVEL: 'warn',
      PALISADE_API_RATE_PER_KEY: '0',
      ...(redisUrl && { REDIS_URL: redisUrl }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // With logs at warn, the start line is not printed; find the port through /proc instead of logs.
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const started = Date.now();
    const poll = async () => {
      const inodes = new Set<string>();
      try {
        for (const fd of readdirSync(`/proc/${child.pid}/fd`)) {
          const m = /socket:\[(\d+)\]/.exec(readlinkSync(`/proc/${child.pid}/fd/${fd}`));
          if (m) inodes.add(m[1]!);
        }
        for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
          const cols = line.trim().split(/\s+/);
          if (cols[3] === '0A' && inodes.has(cols[9]!)) return resolve(parseInt(cols[1]!.split(':')[1]!, 16));
        }
      } catch {
        // the process may not have opened its socket yet
      }
      if (Date.now() - started > 20_000) return reject(new Error(`server did not start: ${out}`));
      setTimeout(() => void poll(), 100);
    };
    void poll();
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

function report(name: string, r: autocannon.Result): void {
  const ok = r['2xx'];
  console.log(
    `${name.padEnd(28)} ${String(Math.round(r.requests.average)).padStart(7)} req/s   p50 ${r.latency.p50} ms   p99 ${r.latency.p99} ms   ` +
      `2xx ${ok}   non-2xx ${r.non2xx}   errors ${r.errors}   timeouts ${r.timeouts}`,
  );
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

async function run(label: string, redisUrl?: string): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'palisade-bench-'));
  try {
    const key = await seed(dataDir, redisUrl);
    const server = await startServer(dataDir, redisUrl);
    console.log(`\n${label}: ${ZONES} zones × ${RECORDS} records, ${CONNECTIONS} connections, ${SECONDS} s per phase`);
    const headers = { 'x-auth-key': key, 'content-type': 'application/json' };

    await autocannon({ url: `${server.url}/domains/z0.example/dnsrecords`, headers, connections: CONNECTIONS, duration: 2 }); // warm-up
    const reads = await autocannon({ url: `${server.url}/domains/z1.example/dnsrecords`, headers, connections: CONNECTIONS, duration: SECONDS });
    report('GET 100-record zone', reads);

    let n = 0;
    const writes = await autocannon({
      url: server.url,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [
        {
          method: 'POST',
          setupRequest: (req) => {
            n += 1;
            return {
              ...req,
              path: `/domains/z${n % ZONES}.example/dnsrecords`,
              headers,
              body: JSON.stringify({ name: `w${n}`, type: 1, value: '198.51.100.9' }),
            };
          },
        },
      ],
    });
    report('POST record', writes);
    console.log(`server RSS after the run: ${rssMb(server.pid).toFixed(0)} MB`);
    await server.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await run('embedded store (LMDB)');
if (spawnSync('sh', ['-c', 'command -v redis-server']).status === 0) {
  const redis = await startRedis();
  try {
    await run('Redis store (redis-server on loopback, no persistence)', redis.url);
  } finally {
    await redis.stop();
  }
} else {
  console.log('\nredis-server not installed: Redis run skipped');
}
