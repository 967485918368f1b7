// A real NSD (Debian nsd) on loopback serving zone files of its own, as the reference our answers
// are compared with: the same zone file loaded here and imported into the service must give the
// same answers to `dig`; and how an authoritative server answers transfer requests it refuses and
// messages whose TSIG fails (NSD 4), when given a key and the one address it transfers to.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './knot-secondary.ts';
import { NSD, nsdKeyLines, nsdServerLines, spawnNsd } from './nsd-secondary.ts';
import { tempDir } from './temp.ts';

export interface NsdPrimary {
  port: number;
  output: () => string;
  stop(): Promise<void>;
}

export interface NsdPrimaryOptions {
  /** Zone name → zone file text. */
  zones: Record<string, string>;
  /** Transfers allowed only to `xfrFrom`, signed with `key`; absent: none allowed. */
  key?: { name: string; secret: string };
  xfrFrom?: string;
}

/** A zone file of one SOA, one NS and its address, for a zone NSD only has to hold. */
export function minimalZone(zone: string): string {
  return [`$ORIGIN ${zone}.`, '$TTL 300', '@ SOA ns1 hostmaster 1 3600 600 86400 300', '@ NS ns1', 'ns1 A 192.0.2.1', ''].join('\n');
}

export async function startNsdPrimary(options: NsdPrimaryOptions): Promise<NsdPrimary> {
  if (!existsSync(NSD)) throw new Error(`${NSD} is not installed (Debian: apt-get install nsd)`);
  const dir = tempDir('palisade-nsd-primary-');
  const port = await freePort();
  const { key, xfrFrom } = options;
  const conf = [
    ...nsdServerLines(dir, port),
    ...(key ? nsdKeyLines(key) : []),
    ...Object.keys(options.zones).flatMap((zone) => ['zone:', `  name: ${zone}`, `  zonefile: "${zone}.zone"`, ...(key && xfrFrom ? [`  provide-xfr: ${xfrFrom} ${key.name}`] : [])]),
  ];
  for (const [zone, text] of Object.entries(options.zones)) writeFileSync(join(dir, `${zone}.zone`), text);
  const nsd = spawnNsd(dir, conf);
  // Serving once every zone is read (NSD 4 says so per zone at verbosity 2).
  const zones = Object.keys(options.zones);
  const started = Date.now();
  while (!zones.every((zone) => nsd.output().includes(`zone ${zone} read with success`)) && !/nsd started/.test(nsd.output())) {
    if (nsd.child.exitCode !== null) throw new Error(`nsd exited:\n${nsd.output()}`);
    if (Date.now() - started > 20_000) throw new Error(`nsd did not start:\n${nsd.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, output: nsd.output, stop: nsd.stop };
}
