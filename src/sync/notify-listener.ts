// The name server's small HTTP listener: POST /notify (signed pushes from the API: verify the
// signature, refuse stale timestamps and replays, then pull), GET /healthz and GET /metrics.
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Logger } from 'pino';
import { signNotification } from './notifier.ts';

export interface NotifyListenerOptions {
  secret: string;
  /** Accepted clock difference between API and name server. */
  maxSkewSeconds?: number;
  onNotify: () => void;
  health: () => { ok: boolean; [key: string]: unknown };
  metrics: () => string;
  log: Logger;
}

function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
      if (body.length > limit) {
        resolve(undefined);
        req.destroy();
      }
    });
    req.on('end', () => resolve(body));
    req.on('error', () => resolve(undefined));
  });
}

export class NotifyListener {
  private readonly server: Server;
  /** Signatures seen within the accepted window: a replay is refused. */
  private readonly seen = new Map<string, number>();
  rejected = 0;
  accepted = 0;

  constructor(private readonly options: NotifyListenerOptions) {
    this.server = createServer((req, res) => {
      void this.route(req).then(([status, type, body]) => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      });
    });
  }

  private async route(req: IncomingMessage): Promise<[number, string, string]> {
    const json = 'application/json';
    if (req.method === 'GET' && req.url === '/healthz') {
      const health = this.options.health();
      return [health.ok ? 200 : 503, json, JSON.stringify(health)];
    }
    if (req.method === 'GET' && req.url === '/metrics') return [200, 'text/plain; version=0.0.4', this.options.metrics()];
    if (req.method !== 'POST' || req.url !== '/notify') return [404, json, '{"error":"not found"}'];
    const body = await readBody(req, 4096);
    const verdict = body === undefined ? 'body too large' : this.verify(req, body);
    if (verdict) {
      this.rejected++;
      this.options.log.warn({ reason: verdict, from: req.socket.remoteAddress }, 'sync: notification refused');
      return [401, json, JSON.stringify({ error: verdict })];
    }
    this.accepted++;
    this.options.onNotify();
    return [202, json, '{"status":"pulling"}'];
  }

  /** Why a notification is refused, or undefined when it is good. */
  private verify(req: IncomingMessage, body: string): string | undefined {
    const timestamp = Number(req.headers['x-palisade-timestamp']);
    const signature = String(req.headers['x-palisade-signature'] ?? '');
    const skew = this.options.maxSkewSeconds ?? 60;
    const now = Date.now() / 1000;
    if (!Number.isInteger(timestamp)) return 'missing timestamp';
    if (Math.abs(now - timestamp) > skew) return 'stale timestamp (check both clocks)';
    const expected = Buffer.from(signNotification(this.options.secret, timestamp, body));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad signature (check PALISADE_SYNC_SECRET)';
    for (const [sig, expires] of this.seen) if (expires < now) this.seen.delete(sig);
    if (this.seen.has(signature)) return 'replayed notification';
    this.seen.set(signature, now + 2 * skew);
    return undefined;
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve((this.server.address() as { port: number }).port));
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
