// The zone-file checkers of BIND (named-checkzone, Debian bind9-utils) and Knot (knotc
// zone-check, Debian knot: the checks kzonecheck runs, which Debian's knot 3.2 does not ship as
// a command of its own). Each resolves to the checker's output, or rejects with it.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp.ts';

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') reject(new Error(`${command} is not installed (Debian: apt-get install bind9-utils knot)`));
      else if (error) reject(new Error(`${command} refused the zone:\n${output}`));
      else resolve(output);
    });
  });
}

export function namedCheckzone(zone: string, text: string): Promise<string> {
  const file = join(tempDir('palisade-zone-'), `${zone}.zone`);
  writeFileSync(file, text);
  return run('named-checkzone', ['-k', 'fail', '-n', 'fail', '-i', 'full', zone, file]);
}

export function knotZoneCheck(zone: string, text: string): Promise<string> {
  const dir = tempDir('palisade-knot-');
  const file = join(dir, `${zone}.zone`);
  writeFileSync(file, text);
  const conf = join(dir, 'knot.conf');
  writeFileSync(conf, `server:\n  rundir: "${dir}"\ndatabase:\n  storage: "${dir}"\nzone:\n  - domain: ${zone}\n    file: "${file}"\n    semantic-checks: on\n`);
  return run('/usr/sbin/knotc', ['-c', conf, 'zone-check', zone]);
}
