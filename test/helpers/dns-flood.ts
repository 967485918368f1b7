// A random-name flood with DO=1 (dnsperf on a file of names that do not exist, each needing a fresh
// NSEC signature) and a victim asking another zone's signed names at a steady pace meanwhile, from
// another client network: what share of the victim's questions got an answer, and how late.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import { buildRecord, type RecordCreate } from '../../src/model/record.ts';
import { EmbeddedStore } from '../../src/store/lmdb/index.ts';
import { makeSigningKey } from './dnssec-keys.ts';
import { tempDir } from './temp.ts';

export const FLOODED = 'flooded.example';
export const VICTIM = 'victim.example';
export const VICTIM_RECORDS: RecordCreate[] = ['www', 'mail', 'api', 'shop'].map((name, i) => ({ name, type: 1, value: `192.0.2.${10 + i}` }));

/** A store with the two signed zones: the one flooded, and the victim. */
export async function seedFloodZones(dataDir: string): Promise<void> {
  const store = new EmbeddedStore({ path: dataDir });
  try {
    const owner = await store.createUser({ name: 'flood', email: 'flood@example.org' });
    for (const [domain, records] of [
      [FLOODED, [{ name: 'www', type: 1, value: '192.0.2.1' }]],
      [VICTIM, VICTIM_RECORDS],
    ] as const) {
      await store.createZone((c) => ({
        domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain, ownerId: owner.id, ns_active: true, created: c.now, updated: c.now, revision: 0, enabled: false, dnssec: true, signing: { keys: [makeSigningKey(13)] } },
        records: [],
      }));
      await store.changeRecords(domain, owner.id, (_zone, ctx) => ({ put: records.map((r) => buildRecord(r, ctx.nextRecordId(), domain, [])), del: [] }));
    }
  } finally {
    await store.close();
  }
}

/** The victim's questions: its existing names and, every fifth, a name of its own that does not exist. */
export const victimNames = (count = 400): string[] =>
  Array.from({ length: count }, (_, i) => (i % 5 === 4 ? `${randomBytes(5).toString('hex')}.${VICTIM}` : `${VICTIM_RECORDS[i % 4]!.name}.${VICTIM}`));

/** A query with EDNS (payload 1232) and, when asked, the DO bit. */
export function dnsQuery(id: number, name: string, qtype: number, dnssecOk = true): Buffer {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'ascii')]));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(1, 10);
  const question = Buffer.concat([...labels, Buffer.from([0, qtype >> 8, qtype & 255, 0, 1])]);
  const opt = Buffer.from([0, 0, 41, 0x04, 0xd0, 0, 0, dnssecOk ? 0x80 : 0, 0, 0, 0]);
  return Buffer.concat([header, question, opt]);
}

export interface VictimResult {
  sent: number;
  answered: number;
  /** Answers with RCODE SERVFAIL (counted in `answered`). */
  servfail: number;
  p50: number;
  p99: number;
  /** The longest time with questions outstanding and no answer arriving (ms). */
  longestSilence: number;
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? Infinity : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!);

/** Asks `names` in turn, one every `intervalMs`, for `durationMs`; an answer later than `timeoutMs` is not counted. */
export async function victim(opts: { port: number; from: string; names: string[]; intervalMs: number; durationMs: number; timeoutMs: number }): Promise<VictimResult> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, opts.from, resolve));
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  let servfail = 0;
  let lastAnswer = performance.now();
  let longestSilence = 0;
  socket.on('message', (msg) => {
    const id = msg.readUInt16BE(0);
    const at = sentAt.get(id);
    if (at === undefined) return;
    sentAt.delete(id);
    const now = performance.now();
    if (now - at > opts.timeoutMs) return;
    longestSilence = Math.max(longestSilence, now - lastAnswer);
    lastAnswer = now;
    latencies.push(now - at);
    if ((msg[3]! & 0xf) === 2) servfail++;
  });
  let sent = 0;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (performance.now() - started >= opts.durationMs) {
        clearInterval(timer);
        resolve();
        return;
      }
      const id = (sent + 1) & 0xffff;
      // Nothing outstanding before this question: silence counts from now.
      if (sentAt.size === 0) lastAnswer = performance.now();
      sentAt.set(id, performance.now());
      socket.send(dnsQuery(id, opts.names[sent % opts.names.length]!, 1), opts.port, '127.0.0.1');
      sent++;
    }, opts.intervalMs);
  });
  await new Promise((resolve) => setTimeout(resolve, opts.timeoutMs));
  socket.close();
  const sorted = latencies.sort((a, b) => a - b);
  return { sent, answered: latencies.length, servfail, p50: percentile(sorted, 50), p99: percentile(sorted, 99), longestSilence };
}

/** A dnsperf data file of `count` names that do not exist under `zone` (A questions). */
export function randomNamesFile(zone: string, count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`${randomBytes(6).toString('hex')}.${zone} A`);
  const file = join(tempDir(), 'flood-names.txt');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

export interface FloodRun {
  done: Promise<{ sent: number; completed: number; output: string }>;
}

/** dnsperf with DO=1 from `from` at `qps` for `seconds` (bounded: -l), names from `file`. */
export function flood(opts: { port: number; from: string; file: string; qps: number; seconds: number }): FloodRun {
  const child = spawn('dnsperf', ['-s', '127.0.0.1', '-p', String(opts.port), '-a', opts.from, '-d', opts.file, '-D', '-Q', String(opts.qps), '-l', String(opts.seconds), '-c', '4', '-q', '20000', '-t', '1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const done = new Promise<{ sent: number; completed: number; output: string }>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`dnsperf: ${error.message} (install the Debian package "dnsperf")`)));
    child.once('exit', () => {
      const sent = Number(/Queries sent:\s+(\d+)/.exec(output)?.[1] ?? NaN);
      const completed = Number(/Queries completed:\s+(\d+)/.exec(output)?.[1] ?? NaN);
      resolve({ sent, completed, output });
    });
  });
  return { done };
}
