// Runs the real `palisade` command in a child process, the way an operator would.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { NO_RATE_LIMITS, OWNERSHIP_OFF, TEST_SECRET_KEY } from './config.ts';
import { tiedToWorker } from './tied-spawn.ts';

export const BIN = fileURLToPath(new URL('../../bin/palisade.js', import.meta.url));

/**
 * How long a role may take to say it serves before it counts as hung (one that fails exits, and
 * is told at once, so a longer deadline costs nothing but in a hang). A start costs about 1 s of
 * CPU (loading the modules through tsx): 2 s on an idle 2-core machine, 3–17 s measured at a load
 * of 10–12, and more than 20 s (the deadline until then, hit by durability.test.ts) at 17–20.
 */
export const START_TIMEOUT_MS = 60_000;

/** Every process started here (roles, admin CLI runs) and not yet exited (see stopStarted). */
const running = new Set<{ child: ChildProcess; exited: Promise<unknown> }>();

export interface RunningServer {
  child: ChildProcess;
  url: string;
  /** The DNS port (UDP and TCP). */
  dnsPort: number;
  /** The edge's HTTP and HTTPS addresses (serve role). */
  edgeUrl?: string;
  edgeHttpsUrl?: string;
  output: () => string;
  /** Resolves with the exit code or signal. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** Spawns `palisade ROLE` and waits until its output matches `ready` (its "serving" log line). */
async function spawnRole(role: string, env: Record<string, string>, ready: RegExp, timeoutMs: number, prefix: readonly string[] = []) {
  // A prefix runs the role through another command (`ip netns exec NAME`), which execs it in place.
  const [command, args] = prefix.length > 0 ? [prefix[0]!, [...prefix.slice(1), process.execPath, BIN, role]] : [process.execPath, [BIN, role]];
  const child = spawn(...tiedToWorker(command, args), { env: { ...process.env, PALISADE_LOG_LEVEL: 'info', ...NO_RATE_LIMITS, ...OWNERSHIP_OFF, ...TEST_SECRET_KEY, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const entry = { child, exited };
  running.add(entry);
  void exited.finally(() => running.delete(entry));
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const match = ready.exec(out);
    if (match) return { child, match, output: () => out, exited };
    if (child.exitCode !== null || child.signalCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // Gone before the caller hears of it: its clean-up (removing the data directory, unmounting
  // it) must not race a process still holding files there.
  await stopProcess(entry, 'SIGKILL');
  throw new Error(`palisade ${role} did not start within ${timeoutMs} ms:\n${out}`);
}

/**
 * Stops every process started in this file that is still running, and waits for their exits (for
 * afterEach/afterAll: a test or set-up that failed half-way does not leave its servers behind,
 * holding files a clean-up would remove).
 */
export async function stopStarted(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  await Promise.all([...running].map((p) => stopProcess(p, signal)));
}

/** Starts `palisade serve` (or `api`) on random loopback ports and waits until it says where it listens. */
export async function startServe(env: Record<string, string>, timeoutMs = START_TIMEOUT_MS, role: 'serve' | 'api' = 'serve', prefix: readonly string[] = []): Promise<RunningServer> {
  const { match, ...rest } = await spawnRole(
    role,
    { PALISADE_API_PORT: '0', PALISADE_DNS_PORT: '0', PALISADE_EDGE_HTTP_PORT: '0', PALISADE_EDGE_HTTPS_PORT: '0', ...env },
    /"api":"(https?:\/\/[^"]+)"(?:,"dns":"[^"]*:(\d+)")?(?:,"edge":\{"http":"(http:\/\/[^"]+)","https":"(https:\/\/[^"]+)"\})?/,
    timeoutMs,
    prefix,
  );
  return { ...rest, url: match[1]!, dnsPort: Number(match[2]), edgeUrl: match[3], edgeHttpsUrl: match[4] };
}

/** Runs `palisade admin …` to completion. */
export async function runAdminCli(env: Record<string, string>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(...tiedToWorker(process.execPath, [BIN, 'admin', ...args]), { env: { ...process.env, ...OWNERSHIP_OFF, ...TEST_SECRET_KEY, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const entry = { child, exited };
  running.add(entry);
  const [code] = await exited.finally(() => running.delete(entry));
  return { code, stdout, stderr };
}

export interface RunningNameServer {
  child: ChildProcess;
  dnsPort: number;
  notifyUrl: string;
  output: () => string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** Starts `palisade dns` and waits for its "serving" line. */
export async function startNameServer(env: Record<string, string>, timeoutMs = START_TIMEOUT_MS): Promise<RunningNameServer> {
  const { match, ...rest } = await spawnRole('dns', { PALISADE_DNS_PORT: '0', PALISADE_SYNC_PORT: '0', ...env }, /"dns":"[^"]*:(\d+)","notify":"([^"]+)"/, timeoutMs);
  return { ...rest, dnsPort: Number(match[1]), notifyUrl: match[2]! };
}

export interface RunningEdge {
  child: ChildProcess;
  httpUrl: string;
  httpsUrl: string;
  notifyUrl: string;
  output: () => string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** Starts `palisade edge` on random loopback ports and waits for its "serving" line. */
export async function startEdge(env: Record<string, string>, timeoutMs = START_TIMEOUT_MS): Promise<RunningEdge> {
  const { match, ...rest } = await spawnRole(
    'edge',
    { PALISADE_EDGE_HTTP_PORT: '0', PALISADE_EDGE_HTTPS_PORT: '0', PALISADE_SYNC_PORT: '0', ...env },
    /"http":"(http:\/\/[^"]+)","https":"(https:\/\/[^"]+)","notify":"([^"]+)"/,
    timeoutMs,
  );
  return { ...rest, httpUrl: match[1]!, httpsUrl: match[2]!, notifyUrl: match[3]! };
}

export async function stopProcess(p: { child: ChildProcess; exited: Promise<unknown> }, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill(signal);
  await p.exited;
}

/**
 * The pid of one of serve's parts (each a process under the supervisor `server.child`): from its
 * "palisade serving" line, or the part's latest "serving again" line after a restart. What a test
 * measures of the edge or the name server (memory, descriptors) is that process's.
 */
export function partPid(server: { output: () => string }, part: 'api' | 'dns' | 'edge'): number {
  const out = server.output();
  const serving = [...out.matchAll(/"parts":(\{[^}]*\})/g)].at(-1);
  if (!serving) throw new Error(`no "palisade serving" line naming the parts:\n${out.slice(-2000)}`);
  let pid = (JSON.parse(serving[1]!) as Record<string, number>)[part];
  for (const m of out.matchAll(/"part":"(\w+)","pid":(\d+),"restarts":\d+,"msg":"supervisor: part serving again"/g)) if (m[1] === part) pid = Number(m[2]);
  if (pid === undefined) throw new Error(`serve has no ${part} part`);
  return pid;
}
