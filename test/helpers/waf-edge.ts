// A real `palisade serve` whose edge carries a few domains with baseprotection, in front of one
// backend that counts what reaches it: the set-up the WAF's real-edge tests share. Each request
// comes from its own client (named to the edge by a trusted proxy's X-Forwarded-For), so bans and
// rate limits never mix cases up; a refused request must be a 403 the backend never saw.
import { createServer, request, type Server } from 'node:http';
import { expect } from 'vitest';
import { runAdminCli, startServe, stopProcess, type RunningServer } from './spawn-palisade.ts';
import { removeTempDirs, tempDir } from './temp.ts';
import { multipart } from './waf-corpus.ts';

export interface Sent {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export const query = (name: string, value: string): Sent => ({ path: `/q?${encodeURIComponent(name)}=${encodeURIComponent(value)}` });
export const form = (fields: Record<string, string>): Sent => ({ path: '/form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
export const json = (value: unknown, path = '/api'): Sent => ({ path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
export const part = (name: string, value: string): Sent => {
  const m = multipart({ [name]: value });
  return { path: '/upload', headers: { 'content-type': m.contentType }, body: m.body };
};

export class WafEdge {
  /** Requests the backend has received. */
  reached = 0;
  private clients = 0;

  private constructor(
    readonly server: RunningServer,
    private readonly backend: Server,
    readonly apiKey: string,
  ) {}

  /** Starts the backend and serve, and creates each domain (baseprotection on, plus `settings`), waiting until its edge answers. */
  static async start(domains: Array<{ domain: string; settings?: Record<string, unknown> }>): Promise<WafEdge> {
    const made: { edge?: WafEdge } = {};
    const backend = createServer((req, res) => {
      if (made.edge) made.edge.reached++;
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const port = (backend.address() as { port: number }).port;
    const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_EDGE_TRUSTED_PROXIES: '127.0.0.9', PALISADE_LOG_LEVEL: 'warn' };
    const apiKey = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'w', '--email', 'w@example.org'])).stdout).key.api_key as string;
    const server = await startServe({ ...env, PALISADE_LOG_LEVEL: 'info', PALISADE_EDGE_CLIENT_RATE: '0' });
    const edge = new WafEdge(server, backend, apiKey);
    made.edge = edge;
    for (const { domain, settings } of domains) {
      const res = await edge.api('POST', '/domains', { domain, backend: `127.0.0.1:${port}`, baseprotection: true, ...settings });
      expect(res.status).toBe(201);
      for (let i = 0; i < 100 && (await edge.send({ path: '/' }, domain)) !== 200; i++) await new Promise((r) => setTimeout(r, 50));
    }
    return edge;
  }

  api(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${this.server.url}${path}`, { method, headers: { 'x-auth-key': this.apiKey, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  }

  /** One request to the edge for `host`, from a client of its own; its status. */
  send(req: Sent, host: string): Promise<number> {
    const url = new URL(this.server.edgeUrl!);
    const n = ++this.clients;
    const client = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    const body = req.body === undefined ? undefined : Buffer.from(req.body);
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { host, 'x-forwarded-for': client, ...req.headers };
      if (body) headers['content-length'] = String(body.length);
      const r = request({ host: url.hostname, port: url.port, path: req.path, method: req.method ?? (body ? 'POST' : 'GET'), localAddress: '127.0.0.9', agent: false, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      r.on('error', reject);
      r.end(body);
    });
  }

  /** Each case refused (403) and never seen by the backend. */
  async expectRefused(cases: Array<[string, Sent]>, host: string): Promise<void> {
    const passed: string[] = [];
    for (const [name, req] of cases) {
      const before = this.reached;
      const status = await this.send(req, host);
      if (status !== 403) passed.push(`${name}: ${status}`);
      expect(this.reached, `${name} reached the backend`).toBe(before + (status === 403 ? 0 : 1));
    }
    expect(passed).toEqual([]);
  }

  /** Each case answered 200 by the backend. */
  async expectPassed(cases: Array<[string, Sent]>, host: string): Promise<void> {
    const refused: string[] = [];
    for (const [name, req] of cases) {
      const status = await this.send(req, host);
      if (status !== 200) refused.push(`${name}: ${status}`);
    }
    expect(refused).toEqual([]);
  }

  async stop(): Promise<void> {
    await stopProcess(this.server);
    this.backend.close();
    removeTempDirs();
  }
}
