// Reference name servers and the measuring tools for bench/dns-workers.ts: NSD and PowerDNS
// (bind backend) on the workload's zone files, dnsperf as the client, and the CPU time of a
// server's whole process tree read from /proc.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Zone } from '../../src/store/types.ts';
import { freePort } from '../../test/helpers/redis-server.ts';
import { zoneFile, zoneName } from './workload.ts';

const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

export interface PerfResult {
  qps: number;
  completed: number;
  avgMs: number;
  lostPct: number;
}

/** dnsperf at full speed for `seconds`: `clients` source ports (so SO_REUSEPORT spreads them). */
export function dnsperf(port: number, file: string, seconds: number, clients: number, threads: number): PerfResult {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-c', String(clients), '-q', '500', '-T', String(threads), '-l', String(seconds)];
  const run = spawnSync('dnsperf', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const out = run.stdout;
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const completed = Number(/Queries completed:\s+(\d+)/.exec(out)?.[1] ?? NaN);
  const avg = Number(/Average Latency \(s\):\s+([\d.]+)/.exec(out)?.[1] ?? NaN) * 1000;
  const sent = Number(/Queries sent:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(out)?.[1] ?? 0);
  if (!Number.isFinite(qps)) throw new Error(`dnsperf failed:\n${out}\n${run.stderr}`);
  return { qps, completed, avgMs: avg, lostPct: sent ? (lost / sent) * 100 : 0 };
}

/** `pid` and all its descendants, now. */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = parents.get(ppid) ?? [];
      list.push(Number(entry));
      parents.set(ppid, list);
    } catch {
      // Gone meanwhile.
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(parents.get(out[i]!) ?? []));
  return out;
}

/** CPU seconds (user + system, all threads) the processes have used so far. */
export function cpuSeconds(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime: fields 14 and 15 of the line, 12 and 13 after the command.
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone: its time is lost to the measurement (none should go during a run).
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** Resident memory (MiB) of the processes. */
export function rssMiB(pids: readonly number[]): number {
  let kib = 0;
  for (const pid of pids) kib += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kib / 1024;
}

/**
 * A process's memory (MiB): resident, its anonymous part (heap: what it costs on its own), and
 * its proportional share (PSS: pages shared with others, such as the mapped LMDB file and the
 * node binary, divided among them), which adds up across processes.
 */
export function memoryMiB(pid: number): { rss: number; anon: number; pss: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { rss: kib(status, 'VmRSS') / 1024, anon: kib(status, 'RssAnon') / 1024, pss: kib(rollup, 'Pss') / 1024 };
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Waits until the server answers the workload's first zone. */
export async function answering(child: ChildProcess, port: number, what: string): Promise<void> {
  let errors = '';
  child.stderr?.on('data', (d: Buffer) => (errors = (errors + d.toString()).slice(-2000)));
  for (let i = 0; i < 300; i++) {
    const probe = spawnSync('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=1', '+short', `www.${zoneName(0)}`], { encoding: 'utf8' });
    if (/^\d+\.\d+\.\d+\.\d+$/m.test(probe.stdout)) return;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop(child);
  throw new Error(`${what} did not start (exit ${child.exitCode ?? child.signalCode}):\n${errors}`);
}


export function writeZones(dir: string, zones: readonly Zone[]): string {
  const zonesDir = join(dir, 'zones');
  mkdirSync(zonesDir, { recursive: true });
  for (const zone of zones) writeFileSync(join(zonesDir, `${zone.domain.domain}.zone`), zoneFile(zone));
  return zonesDir;
}

/** NSD's configuration for the zones named, whose files are in `zonesDir` (`<name>.zone`): `servers` server processes, RRL off. */
export function nsdConf(dir: string, port: number, zonesDir: string, names: readonly string[], servers: number): string {
  const conf = [
    'server:',
    '  ip-address: 127.0.0.1',
    `  port: ${port}`,
    `  server-count: ${servers}`,
    // One socket per server process, spread by the kernel (as our workers share theirs).
    '  reuseport: yes',
    '  username: ""',
    '  chroot: ""',
    `  zonesdir: "${zonesDir}"`,
    `  pidfile: "${join(dir, 'nsd.pid')}"`,
    `  xfrdfile: "${join(dir, 'xfrd.state')}"`,
    `  zonelistfile: "${join(dir, 'zone.list')}"`,
    '  database: ""',
    '  verbosity: 1',
    '  rrl-ratelimit: 0',
    '  rrl-whitelist-ratelimit: 0',
    'remote-control:',
    '  control-enable: no',
  ];
  for (const name of names) conf.push('zone:', `  name: "${name}"`, `  zonefile: "${name}.zone"`);
  writeFileSync(join(dir, 'nsd.conf'), `${conf.join('\n')}\n`);
  return join(dir, 'nsd.conf');
}

/** NSD with `servers` server processes (server-count), response-rate limiting off; `cpus`: pinned there (taskset). */
export async function nsd(dir: string, zones: readonly Zone[], servers: number, cpus?: string): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const conf = nsdConf(dir, port, writeZones(dir, zones), zones.map((z) => z.domain.domain), servers);
  // NSD logs a line per zone: only the end of its errors is kept.
  const command = ['nsd', '-d', '-c', conf];
  const child = cpus ? spawn('taskset', ['-c', cpus, ...command], { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  await answering(child, port, 'nsd');
  return { child, port };
}

/**
 * PowerDNS Authoritative, bind backend, `receivers` receiver threads each on its own socket
 * (reuseport). `signed`: every zone signed on line (its DNSSEC database, `pdnsutil
 * secure-all-zones`: PowerDNS's default, one ECDSA P-256 key per zone, NSEC).
 */
export async function pdns(dir: string, zones: readonly Zone[], receivers: number, signed = false): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const zonesDir = writeZones(dir, zones);
  writeFileSync(join(dir, 'named.conf'), zones.map((z) => `zone "${z.domain.domain}" { type master; file "${join(zonesDir, `${z.domain.domain}.zone`)}"; };\n`).join(''));
  const backend = ['launch=bind', `bind-config=${join(dir, 'named.conf')}`, ...(signed ? [`bind-dnssec-db=${join(dir, 'dnssec.sqlite3')}`] : [])];
  const args = [
    `--config-dir=${dir}`,
    '--daemon=no',
    '--guardian=no',
    '--disable-syslog=yes',
    '--loglevel=3',
    '--local-address=127.0.0.1',
    `--local-port=${port}`,
    `--receiver-threads=${receivers}`,
    '--reuseport=yes',
    `--socket-dir=${dir}`,
    '--webserver=no',
    '--api=no',
  ];
  // The backend in pdns.conf: pdnsutil reads it from there too.
  writeFileSync(join(dir, 'pdns.conf'), `${backend.join('\n')}\n`);
  if (signed) {
    for (const command of [['create-bind-db', join(dir, 'dnssec.sqlite3')], ['secure-all-zones']]) {
      const made = spawnSync('pdnsutil', [`--config-dir=${dir}`, ...command], { encoding: 'utf8' });
      if (made.status !== 0) throw new Error(`pdnsutil ${command[0]}: ${made.stderr.slice(-500)}`);
    }
  }
  const child = spawn('pdns_server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  await answering(child, port, 'pdns_server');
  return { child, port };
}
