// A real NSD serving one zone of its own on loopback, as the reference for how an authoritative
// server answers transfer requests it refuses and messages whose TSIG fails (NSD 4).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './knot-secondary.ts';
import { NSD } from './nsd-secondary.ts';
import { tempDir } from './temp.ts';

export interface NsdPrimary {
  port: number;
  output: () => string;
  stop(): Promise<void>;
}

/** NSD serving `zone` (an SOA, an NS and its address), transfers allowed only to `xfrFrom` signed with `key`. */
export async function startNsdPrimary(options: { zone: string; key: { name: string; secret: string }; xfrFrom: string }): Promise<NsdPrimary> {
  if (!existsSync(NSD)) throw new Error(`${NSD} is not installed (Debian: apt-get install nsd)`);
  const dir = tempDir('palisade-nsd-primary-');
  const port = await freePort();
  writeFileSync(join(dir, 'zone'), [`$ORIGIN ${options.zone}.`, '$TTL 300', '@ SOA ns1 hostmaster 1 3600 600 86400 300', '@ NS ns1', 'ns1 A 192.0.2.1', ''].join('\n'));
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
    'key:',
    `  name: ${options.key.name}`,
    '  algorithm: hmac-sha256',
    `  secret: "${options.key.secret}"`,
    'zone:',
    `  name: ${options.zone}`,
    '  zonefile: zone',
    `  provide-xfr: ${options.xfrFrom} ${options.key.name}`,
    '',
  ].join('\n');
  const file = join(dir, 'nsd.conf');
  writeFileSync(file, conf);
  const child = spawn(NSD, ['-d', '-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit');
  const started = Date.now();
  while (!/zone .* read with success|serial 1 is updated|nsd started/.test(out)) {
    if (child.exitCode !== null) throw new Error(`nsd exited:\n${out}`);
    if (Date.now() - started > 20_000) throw new Error(`nsd did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
