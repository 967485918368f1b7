// A real NSD secondary (Debian nsd) on loopback: transfers the zones named from our name server
// with a TSIG key (IXFR first, as NSD does; our full answer in AXFR form is what it gets) and
// takes NOTIFY from it. NSD has no catalog zones: its zones are listed here.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './knot-secondary.ts';
import { tempDir } from './temp.ts';

export const NSD = '/usr/sbin/nsd';

export interface NsdSecondary {
  port: number;
  output: () => string;
  stop(): Promise<void>;
}

export async function startNsd(options: { primaryPort: number; key: { name: string; secret: string }; zones: string[]; port?: number }): Promise<NsdSecondary> {
  if (!existsSync(NSD)) throw new Error(`${NSD} is not installed (Debian: apt-get install nsd)`);
  const dir = tempDir('palisade-nsd-');
  const port = options.port ?? (await freePort());
  const conf = [
    ...nsdServerLines(dir, port),
    ...nsdKeyLines(options.key),
    ...options.zones.flatMap((zone) => ['zone:', `  name: ${zone}`, `  request-xfr: 127.0.0.1@${options.primaryPort} ${options.key.name}`, `  allow-notify: 127.0.0.1 ${options.key.name}`]),
  ];
  const nsd = spawnNsd(dir, conf);
  await new Promise((r) => setTimeout(r, 300));
  if (nsd.child.exitCode !== null) throw new Error(`nsd exited:\n${nsd.output()}`);
  return { port, output: nsd.output, stop: nsd.stop };
}

/** The `server:` and `remote-control:` parts every NSD of the tests has: loopback, files in `dir`, no chroot. */
export function nsdServerLines(dir: string, port: number): string[] {
  return [
    'server:',
    `  ip-address: 127.0.0.1@${port}`,
    `  zonesdir: "${dir}"`,
    `  pidfile: "${dir}/nsd.pid"`,
    `  xfrdfile: "${dir}/xfrd.state"`,
    `  zonelistfile: "${dir}/zone.list"`,
    '  database: ""',
    '  username: ""',
    '  chroot: ""',
    '  verbosity: 2',
    'remote-control:',
    '  control-enable: no',
  ];
}

export function nsdKeyLines(key: { name: string; secret: string }): string[] {
  return ['key:', `  name: ${key.name}`, '  algorithm: hmac-sha256', `  secret: "${key.secret}"`];
}

/** NSD in the foreground on `conf` (written to `dir/nsd.conf`), its output kept. */
export function spawnNsd(dir: string, conf: string[]): { child: ChildProcess; output: () => string; stop(): Promise<void> } {
  const file = join(dir, 'nsd.conf');
  writeFileSync(file, [...conf, ''].join('\n'));
  const child = spawn(NSD, ['-d', '-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit');
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
