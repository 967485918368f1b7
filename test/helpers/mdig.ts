// BIND's `mdig`: sends one message as asked and prints the whole response, header and OPT included,
// whatever the type (dig prints only "Transfer failed." for a refused AXFR or IXFR).
import { execFile } from 'node:child_process';
import { parseDig, type DigResult } from './dig.ts';

/** `mdig @127.0.0.1 -p PORT [options] -t TYPE NAME` with a short timeout; options like `+tcp`, `+edns=0`. */
export function mdig(port: number, name: string, type: string, options: string[] = [], server = '127.0.0.1'): Promise<DigResult> {
  const args = [`@${server}`, '-p', String(port), '+norec', '+tries=1', '+timeout=2', ...options, '-t', type, name];
  return new Promise((resolve, reject) => {
    execFile('mdig', args, { timeout: 10_000 }, (error, stdout, stderr) => {
      if (!/->>HEADER<<-/.test(stdout)) return reject(new Error(`mdig ${args.join(' ')}: no answer\n${stdout}${stderr}${error ? `\n${error.message}` : ''}`));
      resolve(parseDig(stdout));
    });
  });
}
