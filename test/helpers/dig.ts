// A small wrapper around the real `dig` (BIND 9): runs one query and parses what it printed.
import { execFile, execFileSync } from 'node:child_process';

export interface DigRecord {
  name: string;
  ttl: number;
  type: string;
  data: string;
}

export interface DigResult {
  status: string;
  flags: string[];
  opcode: string;
  question: string;
  answer: DigRecord[];
  authority: DigRecord[];
  additional: DigRecord[];
  /** Present when the response carried an OPT record. */
  edns?: { version: number; flags: string[]; udp: number; options: string[] };
  raw: string;
}

let checked = false;
function requireDig(): void {
  if (checked) return;
  try {
    execFileSync('dig', ['-v'], { stdio: 'pipe' });
    checked = true;
  } catch {
    throw new Error('the `dig` command is required for these tests (Debian: apt-get install bind9-dnsutils)');
  }
}

function parseRecord(line: string): DigRecord {
  const [name, ttl, , type, ...data] = line.split(/\s+/);
  return { name: name!, ttl: Number(ttl), type: type!, data: data.join(' ') };
}

export function parseDig(raw: string): DigResult {
  const result: DigResult = { status: '', flags: [], opcode: '', question: '', answer: [], authority: [], additional: [], raw };
  let section = '';
  for (const line of raw.split('\n')) {
    const header = /opcode: (\w+), status: (\w+)/.exec(line);
    if (header) {
      result.opcode = header[1]!;
      result.status = header[2]!;
      continue;
    }
    const flags = /^;; flags: ([^;]*);/.exec(line);
    if (flags) {
      result.flags = flags[1]!.trim().split(/\s+/).filter(Boolean);
      continue;
    }
    const edns = /^; EDNS: version: (\d+), flags:([^;]*); udp: (\d+)/.exec(line);
    if (edns) {
      result.edns = { version: Number(edns[1]), flags: edns[2]!.trim().split(/\s+/).filter(Boolean), udp: Number(edns[3]), options: [] };
      continue;
    }
    const section_ = /^;; (QUESTION|ANSWER|AUTHORITY|ADDITIONAL) SECTION:/.exec(line);
    if (section_) {
      section = section_[1]!;
      continue;
    }
    if (result.edns && /^; [A-Z][A-Z-]*: /.test(line) && !line.startsWith('; EDNS')) {
      result.edns.options.push(line.slice(2));
      continue;
    }
    if (line.trim() === '' || line.startsWith(';;')) {
      if (line.trim() === '') section = section === 'QUESTION' ? '' : section;
      continue;
    }
    if (section === 'QUESTION' && line.startsWith(';')) result.question = line.slice(1).trim();
    else if (section === 'ANSWER') result.answer.push(parseRecord(line));
    else if (section === 'AUTHORITY') result.authority.push(parseRecord(line));
    else if (section === 'ADDITIONAL') result.additional.push(parseRecord(line));
  }
  return result;
}

/** `dig @127.0.0.1 -p PORT NAME TYPE [options]` with no retries and a short timeout. */
export function dig(port: number, name: string, type = 'A', options: string[] = [], server = '127.0.0.1'): Promise<DigResult> {
  requireDig();
  const args = [`@${server}`, '-p', String(port), '+norec', '+tries=1', '+time=2', '+nocookie', ...options, name, type];
  return new Promise((resolve, reject) => {
    execFile('dig', args, { timeout: 10_000 }, (error, stdout) => {
      if (error && !stdout) return reject(new Error(`dig ${args.join(' ')} failed: ${error.message}`));
      if (/connection timed out|communications error/.test(stdout)) return reject(new Error(`dig ${args.join(' ')}: no answer\n${stdout}`));
      resolve(parseDig(stdout));
    });
  });
}
