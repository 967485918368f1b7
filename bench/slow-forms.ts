// What slow form bodies cost the edge: many connections from one address, each sending most of a
// form body that baseprotection reads whole before it decides (1 MB of a 1 MiB body announced, the
// default `waf_body_limit`), then a byte every 5 s, for a bounded time. Prints the edge process's
// PSS (smaps_rollup) before the attack and at its peak, and what the connections were answered.
// The per-request rate limit is off: it is not what bounds this (an attacker paces its requests to
// pass it); the body buffer budget is.
//
//   npm run bench:slow-forms                        (this checkout's build)
//   npm run bench:slow-forms -- /other/bin/palisade.js   (another build, e.g. an older one)
//   SLOW_FORMS_CONNECTIONS=40 SLOW_FORMS_LIMIT_KIB=16384 npm run bench:slow-forms   (a domain inspecting 16 MiB)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../test/helpers/redis-server.ts';
import { partPid, runAdminCli } from '../test/helpers/spawn-palisade.ts';
import { runBench } from './harness.ts';

const CONNECTIONS = Number(process.env.SLOW_FORMS_CONNECTIONS ?? 600);
/** The domain's waf_body_limit (KiB); each body announces exactly this much, so it is read whole. */
const LIMIT_KIB = Number(process.env.SLOW_FORMS_LIMIT_KIB ?? 1024);
/** Sent at once: all of the body but its last few KiB (1 MB of 1 MiB by default). */
const SENT_AT_ONCE = LIMIT_KIB * 1024 - Math.max(1024, Math.round(LIMIT_KIB * 1024 * 0.046));
const ATTACK_MS = Number(process.env.SLOW_FORMS_SECONDS ?? 30) * 1000;
const TRICKLE_MS = 5000;
/** Attacks one after another (a second shows whether memory freed by the first is reused). */
const WAVES = Number(process.env.SLOW_FORMS_WAVES ?? 1);
const bin = resolve(process.argv[2] ?? 'bin/palisade.js');
const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-slow-forms-'));
const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Proportional set size in MiB (shared pages divided among their sharers). */
function pssMiB(pid: number): number {
  return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))![1]) / 1024;
}

/** One attack: every connection at once, trickling until ATTACK_MS is over, then all closed. */
async function attack(edgePort: number, edgePid: number, before: number): Promise<{ peak: number; atEnd: number; shown: string; open: number }> {
  const body = Buffer.alloc(SENT_AT_ONCE, 'b');
  body.write('a=', 0);
  const head = `POST /form HTTP/1.1\r\nHost: forms.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${LIMIT_KIB * 1024}\r\n\r\n`;
  const sockets: Socket[] = [];
  const answers = new Map<string, number>();
  for (let i = 0; i < CONNECTIONS; i++) {
    const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress: '127.0.0.1' }, () => {
      socket.write(head);
      socket.write(body);
    });
    let answered = false;
    socket.on('data', (d: Buffer) => {
      if (answered) return;
      answered = true;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(d.toString('latin1'))?.[1] ?? 'other';
      answers.set(status, (answers.get(status) ?? 0) + 1);
    });
    socket.on('error', () => undefined);
    sockets.push(socket);
  }
  const trickle = setInterval(() => {
    for (const socket of sockets) if (socket.writable) socket.write('b');
  }, TRICKLE_MS);
  let peak = before;
  const started = Date.now();
  while (Date.now() - started < ATTACK_MS) {
    await sleep(500);
    peak = Math.max(peak, pssMiB(edgePid));
  }
  clearInterval(trickle);
  const atEnd = pssMiB(edgePid);
  const open = sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
  for (const socket of sockets) socket.destroy();
  return { peak, atEnd, open, shown: [...answers].map(([status, count]) => `${status} ×${count}`).join(', ') || 'none' };
}

async function main(): Promise<void> {
  const backend = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const backendPort = (backend.address() as { port: number }).port;
  const apiPort = await freePort();
  const edgePort = await freePort();
  const env = {
    PALISADE_OWNERSHIP_PROOF: 'off',
    PALISADE_DATA_DIR: join(dir, 'data'),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_API_PORT: String(apiPort),
    PALISADE_DNS_PORT: '0',
    PALISADE_EDGE_HTTP_PORT: String(edgePort),
    PALISADE_EDGE_HTTPS_PORT: '0',
    PALISADE_EDGE_CLIENT_RATE: '0',
    PALISADE_API_RATE_PER_KEY: '0',
    PALISADE_LOG_LEVEL: 'info',
  };
  const key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org'])).stdout).key.api_key as string;
  const child = spawn(process.execPath, [bin, 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const api = `http://127.0.0.1:${apiPort}`;
  for (let i = 0; i < 600 && !/"parts":\{/.test(out); i++) await sleep(100);
  const created = await fetch(`${api}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain: 'forms.example', backend: `127.0.0.1:${backendPort}`, baseprotection: true, waf_body_limit: LIMIT_KIB }) });
  if (created.status !== 201) throw new Error(`domain: ${created.status} ${await created.text()}`);
  const edgePid = partPid({ output: () => out }, 'edge');
  // The domain at the edge, and a few ordinary forms through it, before the baseline.
  for (let i = 0; i < 100; i++) {
    const answer = await fetch(`http://127.0.0.1:${edgePort}/form`, { method: 'POST', headers: { host: 'forms.example', 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' }).catch(() => undefined);
    if (answer?.status === 200) break;
    await sleep(100);
  }
  for (let i = 0; i < 20; i++) await fetch(`http://127.0.0.1:${edgePort}/form`, { method: 'POST', headers: { host: 'forms.example', 'content-type': 'application/x-www-form-urlencoded' }, body: `a=${'b'.repeat(10_000)}` });
  await sleep(2000);
  const before = pssMiB(edgePid);

  console.log(`slow forms: ${CONNECTIONS} connections from 127.0.0.1, ${(SENT_AT_ONCE / 1e6).toFixed(2)} MB of a ${LIMIT_KIB} KiB form each, then a byte every ${TRICKLE_MS / 1000} s, for ${ATTACK_MS / 1000} s (${bin})`);
  console.log(`  edge PSS before ${before.toFixed(1)} MiB`);
  for (let wave = 1; wave <= WAVES; wave++) {
    const { peak, atEnd, shown, open } = await attack(edgePort, edgePid, before);
    console.log(`  ${WAVES > 1 ? `wave ${wave}: ` : ''}peak ${peak.toFixed(1)} MiB, at the end ${atEnd.toFixed(1)} MiB; answered during the attack: ${shown}; still open at the end: ${open}`);
    await sleep(3000);
  }
  backend.close();
}

runBench(main, children, dir);
