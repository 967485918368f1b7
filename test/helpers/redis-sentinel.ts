// A real Redis deployment with Sentinel on loopback: one primary, its replicas and three
// redis-sentinel processes that watch it (quorum 2, a primary is down after 1.5 s without an
// answer), for the failover tests and bench. The primary can be killed (SIGKILL) and brought
// back on its port, where the Sentinels make it a replica of the new primary.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './redis-server.ts';
import { tempDir } from './temp.ts';
import { tiedToWorker } from './tied-spawn.ts';

export const MASTER_NAME = 'palisade';

export interface SentinelDeployment {
  /** PALISADE_REDIS_SENTINELS for this deployment. */
  sentinels: string;
  masterName: string;
  /** The data servers' ports, the first the primary at the start. */
  ports: number[];
  /** The port of the primary the Sentinels name now. */
  primaryPort(): Promise<number>;
  /** Kills the data server on `port` with SIGKILL (no goodbye to anyone). */
  kill(port: number): Promise<void>;
  /** Starts the data server on `port` again, empty, as a replica of `of` (what a Sentinel would make it). */
  restart(port: number, of: number): Promise<void>;
  /** Waits until the Sentinels name a primary other than `port` and it answers. */
  failedOver(from: number, timeoutMs: number): Promise<number>;
  /** How many failovers the Sentinels made (their +switch-master), as the first one logged them. */
  switches(): number;
  /** Waits until the Sentinels see every replica up and linked to the primary (ready for the next failover). */
  settled(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

function requireTool(tool: string, pkg: string): void {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) throw new Error(`${tool} is required for these tests (Debian: apt-get install ${pkg})`);
}

function launch(command: string, args: string[], ready: string): Promise<ChildProcess> {
  const child = spawn(...tiedToWorker(command, args), { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${out}`)), 10_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes(ready)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}):\n${out}`)));
  });
}

function dataServer(port: number, replicaOf?: number): Promise<ChildProcess> {
  // Its own empty directory: a replica writes the RDB it receives to disk, and a server started
  // where one lies loads it (a "fresh" primary holding an earlier run's data).
  const dir = tempDir('palisade-redis-');
  return launch(
    'redis-server',
    [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no',
      // Replicas get the data through the socket at once, and answer reads while syncing.
      '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0', '--repl-ping-replica-period', '1',
      ...(replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(replicaOf)]),
    ],
    'Ready to accept connections',
  );
}

/** One more data server on a free port, a replica of `of` (for tests of WAIT without Sentinels). */
export async function startReplica(of: number): Promise<{ port: number; stop(): Promise<void> }> {
  requireTool('redis-server', 'redis-server');
  const port = await freePort();
  const child = await dataServer(port, of);
  return { port, stop: () => halt(child) };
}

async function halt(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.removeAllListeners('exit');
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Starts a primary, `replicas` replicas of it and three Sentinels, and waits until all see each other. */
export async function startSentinelDeployment(replicas = 2): Promise<SentinelDeployment> {
  const replicaCount = replicas;
  requireTool('redis-server', 'redis-server');
  requireTool('redis-sentinel', 'redis-sentinel');
  const dir = tempDir('palisade-sentinel-');
  const ports = [await freePort()];
  const servers = new Map<number, ChildProcess>();
  servers.set(ports[0]!, await dataServer(ports[0]!));
  for (let i = 0; i < replicas; i++) {
    const port = await freePort();
    ports.push(port);
    servers.set(port, await dataServer(port, ports[0]));
  }
  const sentinelPorts: number[] = [];
  let sentinelLog = '';
  const sentinels: ChildProcess[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    sentinelPorts.push(port);
    // A Sentinel rewrites its configuration file as it learns: each its own, writable.
    const file = join(dir, `sentinel-${i}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${ports[0]} 2`,
        `sentinel down-after-milliseconds ${MASTER_NAME} 1500`,
        `sentinel failover-timeout ${MASTER_NAME} 5000`,
        `sentinel parallel-syncs ${MASTER_NAME} 2`,
        '',
      ].join('\n'),
    );
    const sentinel = await launch('redis-sentinel', [file], 'Sentinel ID is');
    if (i === 0) sentinel.stdout!.on('data', (d: Buffer) => (sentinelLog += d.toString()));
    sentinels.push(sentinel);
  }
  const ask = new Redis({ port: sentinelPorts[0], host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: true, maxRetriesPerRequest: 3 });
  await ask.connect();
  const primaryPort = async () => Number(((await ask.call('SENTINEL', 'get-master-addr-by-name', MASTER_NAME)) as [string, string])[1]);
  // Every Sentinel knows the replicas and the other Sentinels before a test relies on a failover.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const [known, peers] = await Promise.all([ask.call('SENTINEL', 'replicas', MASTER_NAME) as Promise<unknown[]>, ask.call('SENTINEL', 'sentinels', MASTER_NAME) as Promise<unknown[]>]);
    if (known.length === replicas && peers.length === 2) break;
    if (Date.now() > deadline) throw new Error(`Sentinels did not discover the deployment (replicas ${known.length}, peers ${peers.length})`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    masterName: MASTER_NAME,
    ports,
    primaryPort,
    switches: () => sentinelLog.split('+switch-master').length - 1,
    kill: async (port) => {
      await halt(servers.get(port));
    },
    restart: async (port, of) => {
      servers.set(port, await dataServer(port, of));
    },
    failedOver: async (from, timeoutMs) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const now = await primaryPort().catch(() => from);
        if (now !== from) {
          const probe = new Redis({ port: now, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
          const role = await probe
            .connect()
            .then(() => probe.call('ROLE') as Promise<unknown[]>)
            .catch(() => [])
            .finally(() => probe.disconnect());
          if (role[0] === 'master') return now;
        }
        if (Date.now() > until) throw new Error(`no failover from port ${from} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    settled: async (timeoutMs) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const replicas = ((await ask.call('SENTINEL', 'replicas', MASTER_NAME).catch(() => [])) as string[][]).map((fields) => {
          const at = (name: string) => fields[fields.indexOf(name) + 1];
          return { flags: at('flags'), link: at('master-link-status') };
        });
        if (replicas.length === replicaCount && replicas.every((r) => r.flags === 'slave' && r.link === 'ok')) return;
        if (Date.now() > until) throw new Error(`the replicas did not come back: ${JSON.stringify(replicas)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    stop: async () => {
      ask.disconnect();
      await Promise.all([...sentinels, ...servers.values()].map((c) => halt(c)));
    },
  };
}
