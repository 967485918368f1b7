// Unbound as a validating resolver in front of our name server: stub zones pointing at it on
// loopback, the test zones' DNSKEYs as trust anchors, Client Subnet passed through (subnetcache)
// so geo answers can be asked for by subnet. Validation failures are logged (val-log-level 2).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dig, type DigResult } from './dig.ts';
import { freePort } from './free-port.ts';
import { tempDir } from './temp.ts';
import { tiedToWorker } from './tied-spawn.ts';
import { until } from './until.ts';

const UNBOUND = ['/usr/sbin/unbound', '/usr/bin/unbound'].find((path) => existsSync(path));

export function requireUnbound(): string {
  if (!UNBOUND) throw new Error('unbound is not installed: install the Debian package "unbound" (scripts/setup-test-deps.sh)');
  return UNBOUND;
}

export interface Unbound {
  port: number;
  ask(name: string, type: string, options?: string[]): Promise<DigResult>;
  log(): string;
  stop(): Promise<void>;
}

export async function startUnbound(opts: {
  authorityPort: number;
  zones: string[];
  anchors: string[];
  /** Zones served elsewhere: name → port on 127.0.0.1 (a parent zone's own server). */
  stubs?: Record<string, number>;
  /** More `server:` lines (cache bounds). */
  extra?: string[];
  /** The port to listen on (chosen here when absent). */
  port?: number;
}): Promise<Unbound> {
  const binary = requireUnbound();
  const dir = tempDir('palisade-unbound-');
  const port = opts.port ?? (await freePort());
  const logFile = join(dir, 'unbound.log');
  const conf = [
    'server:',
    '  interface: 127.0.0.1',
    `  port: ${port}`,
    '  do-daemonize: no',
    '  use-syslog: no',
    `  logfile: "${logFile}"`,
    '  username: ""',
    '  chroot: ""',
    `  directory: "${dir}"`,
    `  pidfile: "${join(dir, 'unbound.pid')}"`,
    '  num-threads: 1',
    '  so-reuseport: no',
    '  do-not-query-localhost: no',
    '  access-control: 127.0.0.0/8 allow',
    '  verbosity: 1',
    '  val-log-level: 2',
    '  qname-minimisation: no',
    '  minimal-responses: no',
    '  module-config: "subnetcache validator iterator"',
    '  send-client-subnet: 127.0.0.1',
    '  client-subnet-always-forward: yes',
    '  max-client-subnet-ipv4: 24',
    '  max-client-subnet-ipv6: 56',
    '  edns-buffer-size: 1232',
    ...(opts.extra ?? []).map((line) => `  ${line}`),
    ...opts.anchors.map((a) => `  trust-anchor: "${a}"`),
    ...opts.zones.flatMap((zone) => ['stub-zone:', `  name: "${zone}"`, `  stub-addr: 127.0.0.1@${opts.authorityPort}`]),
    ...Object.entries(opts.stubs ?? {}).flatMap(([zone, at]) => ['stub-zone:', `  name: "${zone}"`, `  stub-addr: 127.0.0.1@${at}`]),
  ].join('\n');
  const confFile = join(dir, 'unbound.conf');
  writeFileSync(confFile, `${conf}\n`);
  const check = spawnSync('/usr/sbin/unbound-checkconf', [confFile], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`unbound-checkconf: ${check.stdout}${check.stderr}`);
  const [command, args] = tiedToWorker(binary, ['-d', '-c', confFile]);
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const log = () => output + (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  // Asked with recursion desired: the resolver's answer, validated.
  const ask = (name: string, type: string, options: string[] = []) => dig(port, name, type, ['+rec', '+dnssec', '+time=5', ...options]);
  await until('unbound answers', async () => (await ask('version.server', 'TXT', ['-c', 'CH']).catch(() => undefined)) !== undefined || child.exitCode !== null, 10_000, 100);
  if (child.exitCode !== null) throw new Error(`unbound exited: ${log()}`);
  return {
    port,
    ask,
    log,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
