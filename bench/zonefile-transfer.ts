// Zone files, bulk changes and zone transfers, with the roles as they ship (`palisade serve` on
// the embedded store) and real secondaries on loopback.
//   npm run bench:zonefile
// Prints:
//   - import of a 20,000-record zone file through the API (time), and in-process the longest
//     event-loop step of the same import;
//   - a bulk change of 1,000 records (time to the 200, and until serve's and two `palisade dns` name
//     servers answer the last);
//   - AXFR of the 20,000-record zone with TSIG (time, dig), and the same zone from NSD as primary;
//   - NOTIFY → a Knot secondary serving the change: p50/p99 over 100 changes.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/index.ts';
import { importZoneFile } from '../src/zonefile/import.ts';
import { answerCounter } from './sync/answer-count.ts';
import { freePort, startKnot } from '../test/helpers/knot-secondary.ts';
import { runAdminCli, startNameServer, startServe, stopProcess, type RunningNameServer } from '../test/helpers/spawn-palisade.ts';
import { decode, dns2Query } from '../test/helpers/dns2-packets.ts';
import { createSocket } from 'node:dgram';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const CHANGES = Number(process.env.BENCH_NOTIFY_CHANGES ?? 100);
const dirs: string[] = [];
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
const ms = (n: number) => `${n.toFixed(0)} ms`;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function zoneFile(records: number): string {
  const lines = ['$TTL 300'];
  for (let i = 0; i < records; i++) {
    const kind = i % 4;
    if (kind === 0) lines.push(`h${i} A 192.0.${(i >> 8) & 255}.${i & 255}`);
    else if (kind === 1) lines.push(`h${i} AAAA 2001:db8::${i.toString(16)}`);
    else if (kind === 2) lines.push(`t${i} TXT "token-${i}" "second"`);
    else lines.push(`m${i} MX ${i % 100} h${i - 3}`);
  }
  return `${lines.join('\n')}\n`;
}

function run(command: string, args: string[]): Promise<{ ms: number; out: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) =>
    execFile(command, args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => (error ? reject(new Error(`${command}: ${stderr || error.message}`)) : resolve({ ms: performance.now() - started, out: stdout }))),
  );
}

async function inProcessStall(text: string): Promise<void> {
  const store = openStore({ dataDir: temp('palisade-bench-zf-'), changeRetention: 1000 });
  const user = await store.createUser({ name: 'b', email: 'b@example.org', limits: { max_records_per_domain: RECORDS + 10 } });
  await store.createZone(() => ({ domain: { domain: 'big.example', ownerId: user.id, backend: '198.51.100.1', enabled: true, ns_active: true } as never, records: [] }));
  let last = performance.now();
  let worst = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 2);
  const started = performance.now();
  await importZoneFile(store, 'big.example', user.id, text, { dryRun: false, maxRecords: RECORDS + 10 });
  clearInterval(ticker);
  console.log(`import in-process (${RECORDS} records): ${ms(performance.now() - started)}, longest event-loop step ${ms(worst)}`);
  await store.close();
}

const text = zoneFile(RECORDS);
await inProcessStall(text);

const env = { PALISADE_DATA_DIR: temp('palisade-bench-serve-') };
const created = await runAdminCli(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org', '--max-records', String(RECORDS + 2000)]);
const key = JSON.parse(created.stdout).key.api_key as string;
const secret = randomBytes(32).toString('base64');
const knotPort = await freePort();
await runAdminCli(env, ['secondary', 'add', '--name', 'knot', '--address', '127.0.0.1', '--tsig-key', `hmac-sha256:bench:${secret}`, '--port', String(knotPort), '--no-catalog']);
const server = await startServe(env);
const api = (method: string, path: string, body?: string, type = 'application/json') =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': type }) }, body });
const { answers, close: closeCounter } = answerCounter();
const nameServers: RunningNameServer[] = [];
try {
  await api('POST', '/domains', JSON.stringify({ domain: 'big.example', backend: '198.51.100.1' }));
  let started = performance.now();
  const imported = await api('POST', '/domains/big.example/zonefile', text, 'text/dns');
  console.log(`import through the API (${RECORDS} records): ${ms(performance.now() - started)} (HTTP ${imported.status})`);
  await api('POST', '/domains/big.example/activatens');

  // Two name servers of their own (`palisade dns`), fed by the change feed, beside serve's.
  for (const name of ['ns1', 'ns2']) {
    const port = await freePort();
    const consumer = JSON.parse((await runAdminCli(env, ['consumer', 'add', '--name', name, '--url', `http://127.0.0.1:${port}/notify`])).stdout);
    nameServers.push(await startNameServer({ PALISADE_DATA_DIR: temp('palisade-bench-ns-'), PALISADE_SYNC_URL: server.url, PALISADE_SYNC_TOKEN: consumer.token, PALISADE_SYNC_SECRET: consumer.secret, PALISADE_SYNC_PORT: String(port), PALISADE_DNS_RRL_RATE: '0' }, 120_000));
  }
  await api('POST', '/domains', JSON.stringify({ domain: 'bulk.example', backend: '198.51.100.1' }));
  await api('POST', '/domains/bulk.example/activatens');
  const create = Array.from({ length: 1000 }, (_, i) => ({ name: `b${i}`, type: 1, value: `192.0.2.${(i % 250) + 1}` }));
  started = performance.now();
  const bulk = await api('POST', '/domains/bulk.example/dnsrecords/bulk', JSON.stringify({ create }));
  const answered = performance.now() - started;
  const reached = await Promise.all(
    [server.dnsPort, ...nameServers.map((n) => n.dnsPort)].map(async (port) => {
      while ((await answers(port, 'b999.bulk.example')) === 0) await new Promise((r) => setTimeout(r, 2));
      return performance.now() - started;
    }),
  );
  console.log(`bulk change of 1,000 records: ${ms(answered)} to the ${bulk.status}; the last record answered by serve's name server after ${ms(reached[0]!)}, ns1 ${ms(reached[1]!)}, ns2 ${ms(reached[2]!)}`);

  // AXFR: ours (TSIG) against NSD serving the exported zone as a primary.
  await new Promise((r) => setTimeout(r, 500));
  const axfr = await run('dig', ['@127.0.0.1', '-p', String(server.dnsPort), '-y', `hmac-sha256:bench:${secret}`, '+nocookie', 'big.example', 'AXFR']);
  const ours = /XFR size: (\d+) records/.exec(axfr.out)?.[1];
  const exported = await (await api('GET', '/domains/big.example/zonefile')).text();
  const nsdDir = temp('palisade-bench-nsd-');
  writeFileSync(join(nsdDir, 'big.example.zone'), exported);
  const nsdPort = await freePort();
  writeFileSync(
    join(nsdDir, 'nsd.conf'),
    `server:\n  ip-address: 127.0.0.1@${nsdPort}\n  zonesdir: "${nsdDir}"\n  pidfile: "${nsdDir}/nsd.pid"\n  xfrdfile: "${nsdDir}/xfrd.state"\n  zonelistfile: "${nsdDir}/zone.list"\n  database: ""\n  username: ""\n  chroot: ""\n  verbosity: 0\nremote-control:\n  control-enable: no\nkey:\n  name: bench\n  algorithm: hmac-sha256\n  secret: "${secret}"\nzone:\n  name: big.example\n  zonefile: big.example.zone\n  provide-xfr: 127.0.0.1 bench\n`,
  );
  const nsd = execFile('/usr/sbin/nsd', ['-d', '-c', join(nsdDir, 'nsd.conf')]);
  await new Promise((r) => setTimeout(r, 1500));
  const nsdAxfr = await run('dig', ['@127.0.0.1', '-p', String(nsdPort), '-y', `hmac-sha256:bench:${secret}`, '+nocookie', 'big.example', 'AXFR']);
  nsd.kill('SIGTERM');
  console.log(`AXFR of big.example with TSIG: ours ${ms(axfr.ms)} (${ours ?? '?'} records: ${ours ? 'ok' : axfr.out.slice(-300)}), NSD ${ms(nsdAxfr.ms)} (${/XFR size: (\d+) records/.exec(nsdAxfr.out)?.[1] ?? '?'} records) — each including dig's own start`);

  // NOTIFY → Knot serving the change.
  await api('POST', '/domains', JSON.stringify({ domain: 'notify.example', backend: '198.51.100.1' }));
  const first = await (await api('POST', '/domains/notify.example/dnsrecords', JSON.stringify({ name: 'v', type: 1, value: '192.0.2.1' }))).json();
  await api('POST', '/domains/notify.example/activatens');
  const knot = await startKnot({ primaryPort: server.dnsPort, key: { name: 'bench', secret }, zones: ['notify.example'], port: knotPort });
  const udp = createSocket('udp4');
  const waiting = new Map<number, (m: Buffer) => void>();
  udp.on('message', (m) => waiting.get(m.readUInt16BE(0))?.(m));
  let id = 1;
  const ask = (name: string) =>
    new Promise<string | undefined>((resolve) => {
      const mine = id++ & 0xffff;
      const timer = setTimeout(() => resolve(undefined), 300);
      waiting.set(mine, (m) => {
        clearTimeout(timer);
        resolve(decode(m).answers[0]?.address);
      });
      udp.send(dns2Query(name, 1, { id: mine }), knot.port, '127.0.0.1');
    });
  while ((await ask('v.notify.example')) !== '192.0.2.1') await new Promise((r) => setTimeout(r, 20));
  const times: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const value = `192.0.2.${(i % 200) + 2}`;
    const t0 = performance.now();
    await api('PATCH', `/domains/notify.example/dnsrecords/${first.id}`, JSON.stringify({ value }));
    while ((await ask('v.notify.example')) !== value) await new Promise((r) => setTimeout(r, 2));
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(`change → Knot serving it (NOTIFY, then its transfer), ${CHANGES} changes: p50 ${ms(pct(times, 50))}, p99 ${ms(pct(times, 99))}, max ${ms(times.at(-1)!)}`);
  udp.close();
  await knot.stop();
} finally {
  closeCounter();
  for (const ns of nameServers) await stopProcess(ns);
  await stopProcess(server);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
