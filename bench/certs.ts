// Certificate issuance as it ships: `palisade serve` (API, name server, edge and the certificate
// worker in one process) against pebble, Let's Encrypt's test CA, on loopback.
//   1. `ssl: true` → the edge serving the certificate over TLS (SNI), once per challenge type:
//      HTTP-01 (pebble fetching the token from our edge; names resolving through
//      pebble-challtestsrv) and DNS-01 (pebble asking our own name server for the TXT).
//   2. 100 domains turned on at once, per challenge type: all issued? how many ACME orders, how long.
// pebble validates without its random sleeps (PEBBLE_VA_NOSLEEP); a real CA adds its own latency.
// Run: npm run bench:certs   (needs pebble: apt-get install pebble)
import { createServer } from 'node:http';
import { servedFingerprint, type TaskJson } from '../test/helpers/cert-tasks.ts';
import { startChallSrv, startPebble, type TestPebble } from '../test/helpers/pebble.ts';
import { freePort } from '../test/helpers/redis-server.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../test/helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../test/helpers/temp.ts';

const MANY = Number(process.env.BENCH_CERT_DOMAINS ?? 100);
const DEADLINE_MS = 300_000;
const CONCURRENCY_NOTE = "one account's, at most 4 at once";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const served = (server: RunningServer, name: string, ca: string) => servedFingerprint(server.edgeHttpsUrl!, name, ca);

async function run(kind: 'http-01' | 'dns-01'): Promise<void> {
  const backend = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const backendAddress = `127.0.0.1:${(backend.address() as { port: number }).port}`;
  const challsrv = kind === 'http-01' ? await startChallSrv() : undefined;
  const dnsPort = await freePort();
  const edgePort = await freePort();
  const pebble: TestPebble = await startPebble({ dnsServer: challsrv ? challsrv.dns : `127.0.0.1:${dnsPort}`, httpPort: edgePort });
  const env: Record<string, string> = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_DNS_PORT: String(dnsPort),
    PALISADE_EDGE_HTTP_PORT: String(edgePort),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_LOG_LEVEL: 'warn',
    PALISADE_ACME_DIRECTORY: pebble.directory,
    PALISADE_ACME_CA_FILE: pebble.caFile,
    PALISADE_ACME_POLL_MS: '50',
    PALISADE_CERT_RETRY_SECONDS: '2',
    // An operator setting: one account turning on more domains than an hour's orders allow.
    PALISADE_CERT_ORDERS_PER_USER_HOUR: String(MANY * 2),
    ...(challsrv && { PALISADE_ACME_RESOLVER: challsrv.dns }),
  };
  const user = await runAdminCli(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org', '--max-domains', String(MANY + 10)]);
  const key = (JSON.parse(user.stdout) as { key: { api_key: string } }).key.api_key;
  await runAdminCli(env, ['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  const server = await startServe({ ...env, PALISADE_LOG_LEVEL: 'info' });
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const create = async (domain: string) => {
    if (kind === 'dns-01') {
      // On our name servers first (DNS-01), then ssl on: the clock starts at ssl on.
      await call('POST', '/domains', { domain, backend: backendAddress, mask: 'www', ssl: false });
      await call('GET', `/domains/${domain}/activatens`);
      return;
    }
    await call('POST', '/domains', { domain, backend: backendAddress, mask: 'www', ssl: false });
  };
  const tasks = async () => (await (await call('GET', '/tasks/?state=all&limit=1000')).json()) as TaskJson[];
  try {
    const root = await pebble.root();
    // 1. One domain: ssl on → the edge serves its certificate.
    await create('one.example');
    const started = Date.now();
    await call('PATCH', '/domains/one.example', { ssl: true });
    let fingerprint = '';
    for (;;) {
      const task = (await tasks()).find((t) => t.domain === 'one.example');
      if (task?.certificate) fingerprint = task.certificate.fingerprint;
      if (fingerprint && (await served(server, 'www.one.example', root)) === fingerprint) break;
      if (task?.state === 'failed' || Date.now() - started > 60_000) throw new Error(`one.example: ${JSON.stringify(task)}`);
      await sleep(5);
    }
    console.log(`${kind}: ssl: true → the edge serving the certificate: ${Date.now() - started} ms`);

    // 2. Many domains at once.
    const names = Array.from({ length: MANY }, (_, i) => `many${i}.example`);
    for (const name of names) await create(name);
    const t0 = Date.now();
    await Promise.all(names.map((name) => call('PATCH', `/domains/${name}`, { ssl: true })));
    let last: TaskJson[] = [];
    for (;;) {
      last = (await tasks()).filter((t) => t.domain.startsWith('many'));
      const finished = last.filter((t) => t.state === 'done' || t.state === 'failed');
      if (finished.length === MANY || Date.now() - t0 > DEADLINE_MS) break;
      await sleep(100);
    }
    const ms = Date.now() - t0;
    const done = last.filter((t) => t.state === 'done');
    const orders = last.reduce((n, t) => n + t.orders, 0);
    const attempts = last.reduce((n, t) => n + t.attempts, 0);
    let serving = 0;
    for (const t of done) if ((await served(server, `www.${t.domain}`, root)) === t.certificate!.fingerprint) serving++;
    console.log(`${kind}: ${MANY} domains at once: ${done.length} issued in ${ms} ms (${((done.length / ms) * 1000).toFixed(1)}/s), ${orders} ACME orders over ${attempts} attempts, ${serving} served by the edge at the end`);
    for (const t of last.filter((x) => x.state !== 'done').slice(0, 3)) console.log(`  not issued: ${t.domain} ${t.state} ${t.error}`);
    // From the worker's own log lines: how long each issuance took, and why attempts failed.
    const lines = server.output().split('\n').filter((l) => l.includes('"certificates: ')).map((l) => JSON.parse(l) as { msg: string; ms?: number; error?: string });
    const each = lines.filter((l) => l.msg === 'certificates: issued' && l.ms !== undefined).map((l) => l.ms!).sort((a, b) => a - b);
    if (each.length > 0) console.log(`  one issuance (order to stored certificate, ${CONCURRENCY_NOTE}): p50 ${each[Math.floor(each.length / 2)]} ms, p95 ${each[Math.floor(each.length * 0.95)]} ms`);
    const failures = new Map<string, number>();
    for (const l of lines.filter((x) => x.msg === 'certificates: issuance failed')) failures.set(l.error!.slice(0, 160), (failures.get(l.error!.slice(0, 160)) ?? 0) + 1);
    for (const [error, n] of failures) console.log(`  failed attempt ×${n}: ${error}`);
  } finally {
    await stopProcess(server);
    await pebble.stop();
    await challsrv?.stop();
    backend.close();
  }
}

try {
  await run('http-01');
  await run('dns-01');
} finally {
  removeTempDirs();
}
