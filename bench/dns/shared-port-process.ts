// N DNS server processes on one port, shared either with SO_REUSEPORT (a socket per process, the
// kernel spreads clients by their address and port: what `palisade dns` does) or by the cluster
// module (the primary binds, every worker reads the same UDP socket; TCP is accepted by the
// primary and handed round-robin). Each process loads the generated workload itself. Prints
// "ready PORT" once all answer.
//   BENCH_SHARING=reuseport|cluster BENCH_WORKERS=2 BENCH_ZONES=1000 node --import tsx bench/dns/shared-port-process.ts
import cluster from 'node:cluster';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { DnsServer } from '../../src/dns/dns-server.ts';
import { DEFAULT_TCP_LIMITS } from '../../src/dns/server/tcp-limits.ts';
import { HOSTMASTER, NS, workloadZones } from './workload.ts';

const sharing = process.env.BENCH_SHARING === 'cluster' ? 'cluster' : 'reuseport';
const workers = Number(process.env.BENCH_WORKERS ?? 2);

async function worker(): Promise<void> {
  const server = new DnsServer({
    host: '127.0.0.1',
    port: Number(process.env.BENCH_PORT),
    nameservers: NS,
    hostmaster: HOSTMASTER,
    tcp: DEFAULT_TCP_LIMITS,
    handler: { cache: true },
    cookieSecret: Buffer.from(process.env.BENCH_COOKIE_SECRET!, 'hex'),
    reusePort: sharing === 'reuseport' ? (process.env.BENCH_FIRST === '1' ? 'claim' : 'join') : undefined,
    log: pino({ level: 'warn' }),
  });
  server.index.replaceAll(workloadZones(Number(process.env.BENCH_ZONES ?? 1000)), [], 0);
  const port = await server.listen();
  process.send!({ ready: port });
  process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
}

async function primary(): Promise<void> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const env = { ...process.env, BENCH_ROLE: 'worker', BENCH_PORT: String(port), BENCH_COOKIE_SECRET: randomBytes(16).toString('hex') };
  const children: Array<ChildProcess | { kill: (signal: NodeJS.Signals) => void }> = [];
  const ready = (child: { once: (event: 'message', listener: (m: unknown) => void) => unknown }) => new Promise<void>((resolve) => child.once('message', () => resolve()));
  if (sharing === 'cluster') {
    cluster.setupPrimary({ exec: fileURLToPath(import.meta.url), execArgv: process.execArgv });
    for (let i = 0; i < workers; i++) {
      const w = cluster.fork(env);
      children.push({ kill: (signal: NodeJS.Signals) => w.process.kill(signal) });
      await ready(w);
    }
  } else {
    for (let i = 0; i < workers; i++) {
      const child = fork(fileURLToPath(import.meta.url), [], { env: { ...env, BENCH_FIRST: i === 0 ? '1' : '0' }, execArgv: process.execArgv });
      children.push(child);
      await ready(child);
    }
  }
  console.log(`ready ${port}`);
  process.on('SIGTERM', () => {
    for (const child of children) child.kill('SIGTERM');
    setTimeout(() => process.exit(0), 500);
  });
}

if (process.env.BENCH_ROLE === 'worker') await worker();
else await primary();
