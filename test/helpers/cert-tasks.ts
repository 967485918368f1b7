// What the certificate tests read back: a task as GET /tasks/ shows it, and the certificate an
// edge presents for a name (verified against the CA's root of this run).
import { connect as tlsConnect } from 'node:tls';

export interface TaskJson {
  id: string;
  domain: string;
  names: string[];
  state: string;
  reason: string;
  challenge: string | null;
  attempts: number;
  orders: number;
  error: string | null;
  next_attempt: string | null;
  updated: string;
  problems: Array<{ name: string; type: string; detail: string }>;
  certificate: { fingerprint: string; not_before: string; not_after: string } | null;
}

/** The SHA-256 fingerprint (lower-case hex) of what the edge at `httpsUrl` presents for `servername`, or the handshake's error. */
export function servedFingerprint(httpsUrl: string, servername: string, ca: string): Promise<string> {
  const url = new URL(httpsUrl);
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), servername, ca, rejectUnauthorized: true }, () => {
      resolve(socket.getPeerCertificate().fingerprint256.replaceAll(':', '').toLowerCase());
      socket.end();
    });
    socket.on('error', (e) => resolve(e.message));
  });
}

/** Waits until the edge presents `fingerprint` for `servername` (a new certificate is used from the next handshake). */
export async function edgeServes(httpsUrl: string, servername: string, fingerprint: string, ca: string, timeoutMs = 5000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const served = await servedFingerprint(httpsUrl, servername, ca);
    if (served === fingerprint) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`the edge serves ${served} for ${servername}, not ${fingerprint}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Polls `GET /tasks/?state=all` at `apiUrl` with `key` until the domain's task satisfies `done`:
 * the task, how long it took, and every distinct state seen on the way. On timeout the error
 * carries the last task and the tail of `output()` (the server's log).
 */
export async function pollTask(
  apiUrl: string,
  key: string,
  domain: string,
  done: (t: TaskJson) => boolean,
  options: { timeoutMs?: number; output?: () => string } = {},
): Promise<{ task: TaskJson; ms: number; seen: TaskJson[] }> {
  const { timeoutMs = 30_000, output = () => '' } = options;
  const seen: TaskJson[] = [];
  const started = Date.now();
  for (;;) {
    const tasks = (await (await fetch(`${apiUrl}/tasks/?state=all`, { headers: { 'x-auth-key': key } })).json()) as TaskJson[];
    const task = tasks.find((t) => t.domain === domain);
    if (task && seen[seen.length - 1]?.updated !== task.updated) seen.push(task);
    if (task && done(task)) return { task, ms: Date.now() - started, seen };
    if (Date.now() - started > timeoutMs) throw new Error(`the task for ${domain} not there within ${timeoutMs} ms: ${JSON.stringify(task)}\n${output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
