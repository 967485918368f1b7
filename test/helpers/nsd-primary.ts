// A real NSD (Debian nsd) on loopback serving zone files of its own, as the reference our answers
// are compared with: the same zone file loaded here and imported into the service must give the
// same answers to `dig`.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './knot-secondary.ts';
import { NSD, type NsdSecondary } from './nsd-secondary.ts';
import { tempDir } from './temp.ts';

export async function startNsdPrimary(zones: Record<string, string>): Promise<NsdSecondary> {
  if (!existsSync(NSD)) throw new Error(`${NSD} is not installed (Debian: apt-get install nsd)`);
  const dir = tempDir('palisade-nsd-primary-');
  const port = await freePort();
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
    '  verbosity: 2',
    'remote-control:',
    '  control-enable: no',
    ...Object.keys(zones).flatMap((zone) => ['zone:', `  name: ${zone}`, `  zonefile: "${zone}.zone"`]),
    '',
  ].join('\n');
  for (const [zone, text] of Object.entries(zones)) writeFileSync(join(dir, `${zone}.zone`), text);
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
