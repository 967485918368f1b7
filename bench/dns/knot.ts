// Knot DNS as a peer of the DNS benches: the workload's zones from files, `workers` UDP workers,
// and with `signed` every zone signed on line by its `onlinesign` module (as PowerDNS signs with
// its DNSSEC database): one ECDSA P-256 key per zone made by Knot itself, NSEC "black lies"
// (a nonexistent name answered NOERROR with an NSEC, RFC 8198's cousin), signatures made per answer.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../test/helpers/redis-server.ts';
import type { Zone } from '../../src/store/types.ts';
import { answering, writeZones } from './servers.ts';

export const KNOTD = '/usr/sbin/knotd';

/** Knot's configuration for the zones named, whose files are in `zonesDir` (`<name>.zone`); `signed`: the onlinesign module on each. */
export function knotConf(dir: string, port: number, zonesDir: string, names: readonly string[], workers: number, signed: boolean): string {
  mkdirSync(join(dir, 'db'), { recursive: true });
  const conf = [
    'server:',
    `  rundir: "${dir}"`,
    `  listen: 127.0.0.1@${port}`,
    `  udp-workers: ${workers}`,
    `  tcp-workers: ${workers}`,
    '  background-workers: 1',
    'log:',
    '  - target: stderr',
    '    any: warning',
    'database:',
    `  storage: "${join(dir, 'db')}"`,
    ...(signed
      ? ['policy:', '  - id: online', '    algorithm: ecdsap256sha256', '    single-type-signing: on', '    nsec3: off', 'mod-onlinesign:', '  - id: signer', '    policy: online']
      : []),
    'template:',
    '  - id: default',
    `    storage: "${zonesDir}"`,
    '    file: "%s.zone"',
    // Served as loaded: no journal of differences, no zone file written back, no checks beyond loading.
    '    zonefile-sync: -1',
    '    zonefile-load: whole',
    '    journal-content: none',
    '    semantic-checks: off',
    ...(signed ? ['    module: mod-onlinesign/signer'] : []),
    'zone:',
    ...names.map((name) => `  - domain: ${name}`),
  ];
  writeFileSync(join(dir, 'knot.conf'), `${conf.join('\n')}\n`);
  return join(dir, 'knot.conf');
}

export async function knot(dir: string, zones: readonly Zone[], workers: number, signed: boolean, cpus?: string): Promise<{ child: ChildProcess; port: number }> {
  if (!existsSync(KNOTD)) throw new Error(`${KNOTD} is not installed (Debian: apt-get install knot)`);
  const port = await freePort();
  const conf = knotConf(dir, port, writeZones(dir, zones), zones.map((z) => z.domain.domain), workers, signed);
  const command = [KNOTD, '-c', conf];
  const child = cpus ? spawn('taskset', ['-c', cpus, ...command], { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  await answering(child, port, 'knotd');
  return { child, port };
}
