// A real NSD (Debian nsd) serving one zone file on loopback: the reference a zone's answers are
// compared against.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './knot-secondary.ts';
import { NSD } from './nsd-secondary.ts';
import { tempDir } from './temp.ts';

export interface NsdReference {
  port: number;
  output: () => string;
  stop(): Promise<void>;
}

export async function startNsdReference(zone: string, zoneFile: string): Promise<NsdReference> {
  if (!existsSync(NSD)) throw new Error(`${NSD} is not installed (Debian: apt-get install nsd)`);
  const dir = tempDir('palisade-nsd-reference-');
  const port = await freePort();
  writeFileSync(join(dir, 'zone'), zoneFile);
  const conf = [
    'server:',
    `  ip-address: 127.0.0.1@${port}`,
    `  zonesdir: "${dir}"`,
    `  pidfile: "${dir}/nsd.pid"`,
    `  xfrdfile: "${dir}/xfrd.state"`,
    `  zonelistfile: "${dir}/zone.list"`,
    '  database: ""',
    '  username: ""',
    '  chroot: ""',
    'remote-control:',
    '  control-enable: no',
    'zone:',
    `  name: ${zone}`,
    '  zonefile: zone',
    '',
  ].join('\n');
  const file = join(dir, 'nsd.conf');
  writeFileSync(file, conf);
  const child = spawn(NSD, ['-d', '-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit');
  await new Promise((r) => setTimeout(r, 300));
  if (child.exitCode !== null) throw new Error(`nsd exited:\n${out}`);
  return {
    port,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
