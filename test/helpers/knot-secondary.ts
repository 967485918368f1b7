// A real Knot DNS secondary (Debian knot: knotd) on loopback, configured to transfer from our name
// server with a TSIG key, take NOTIFY from it, and (optionally) learn zones from our catalog zone.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp.ts';
import { freePort } from './free-port.ts';

/** Kept here too: many tests import it from this helper. */
export { freePort };

export const KNOTD = '/usr/sbin/knotd';

/** A port free for both UDP and TCP on 127.0.0.1 now. */

export interface KnotSecondary {
  port: number;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

export interface KnotOptions {
  primaryPort: number;
  key: { name: string; secret: string };
  /** Zones configured by name (transferred from the primary). */
  zones?: string[];
  /** A catalog zone to interpret (member zones configured by it). */
  catalog?: string;
  /** The port to listen on (default: a free one). */
  port?: number;
  /** The primary's address: where transfers are asked, and the only address NOTIFY is taken from (default 127.0.0.1). */
  primaryAddress?: string;
  /** Sends NOTIFY (signed) back to the primary for every zone it holds, the catalog included, after each change. */
  notifyPrimary?: boolean;
}

export async function startKnot(options: KnotOptions): Promise<KnotSecondary> {
  if (!existsSync(KNOTD)) throw new Error(`${KNOTD} is not installed (Debian: apt-get install knot)`);
  const dir = tempDir('palisade-knot-');
  mkdirSync(join(dir, 'zones'));
  const port = options.port ?? (await freePort());
  const primary = options.primaryAddress ?? '127.0.0.1';
  const zone = (name: string, extra = '') => `  - domain: ${name}\n    master: primary\n    acl: notify_from_primary\n    template: secondary\n${extra}`;
  const conf = [
    'server:',
    `  rundir: "${dir}"`,
    `  listen: 127.0.0.1@${port}`,
    'log:',
    '  - target: stderr',
    '    any: info',
    'database:',
    `  storage: "${dir}"`,
    'key:',
    `  - id: ${options.key.name}`,
    '    algorithm: hmac-sha256',
    `    secret: ${options.key.secret}`,
    'remote:',
    '  - id: primary',
    `    address: ${primary}@${options.primaryPort}`,
    `    key: ${options.key.name}`,
    'acl:',
    '  - id: notify_from_primary',
    `    address: ${primary}`,
    `    key: ${options.key.name}`,
    '    action: notify',
    'template:',
    '  - id: default',
    `    storage: "${join(dir, 'zones')}"`,
    '  - id: secondary',
    `    storage: "${join(dir, 'zones')}"`,
    '    master: primary',
    '    acl: notify_from_primary',
    '    zonefile-sync: -1',
    '    zonefile-load: none',
    '    journal-content: none',
    ...(options.notifyPrimary ? ['    notify: primary'] : []),
    'zone:',
    ...(options.zones ?? []).map((z) => zone(z)),
    ...(options.catalog ? [zone(options.catalog, '    catalog-role: interpret\n    catalog-template: secondary\n')] : []),
    '',
  ].join('\n');
  const confFile = join(dir, 'knot.conf');
  writeFileSync(confFile, conf);
  const child = spawn(KNOTD, ['-c', confFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit');
  const started = Date.now();
  while (!/server started|loaded, serial|zone will be|refresh/.test(out)) {
    if (child.exitCode !== null) throw new Error(`knotd exited:\n${out}`);
    if (Date.now() - started > 20_000) throw new Error(`knotd did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
