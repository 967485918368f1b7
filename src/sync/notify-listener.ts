// The name server's small HTTP listener: POST /notify (signed pushes from the API), GET /healthz
// and GET /metrics.
//
// A push only says "pull now". Each carries a random id inside the signed body, so two genuine
// pushes never look alike; a push is accepted once (its id), within the timestamp window, with a
// good signature. Acceptance is also bound to what the name server has applied: a push for a
// revision it already holds (a replay from before a restart, a repeated revision) is answered
// "up to date" and triggers nothing, so even a replay the in-memory id list no longer knows is
// harmless.
import type { MetricsSnapshot } from '../common/metrics/family.ts';
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from '../common/metrics/prometheus-text.ts';
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Logger } from 'pino';
import { signNotification } from './notifier.ts';

/** Bodies are tiny JSON ({"revision","id"}); anything bigger is refused before it is read. */
export const MAX_NOTIFY_BODY = 4096;

export interface NotifyListenerOptions {
  secret: string;
  /** Accepted clock difference between API and name server. */
  maxSkewSeconds?: number;
  /** The revision this name server has applied: pushes at or below it change nothing. */
  applied: () => number;
  onNotify: () => void;
  health: () => { ok: boolean; [key: string]: unknown };
  /** May be asynchronous (a name server with DNS workers asks each of them). */
  /** The process's figures (rendered here, the role's one writer of its /metrics text). */
  metrics: () => MetricsSnapshot | Promise<MetricsSnapshot>;
  log: Logger;
}

type Reply = [number, string, string];

function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Stop storing; the answer (413) closes the connection.
        req.removeAllListeners('data');
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString()));
    req.on('error', () => resolve(undefined));
  });
}

export class NotifyListener {
  private readonly server: Server;
  /** Push ids (or, for pushes without one, signatures) seen within the accepted window. */
  private readonly seen = new Map<string, number>();
  rejected = 0;
  accepted = 0;
  upToDate = 0;

  constructor(private readonly options: NotifyListenerOptions) {
    this.server = createServer((req, res) => {
      void this.route(req).then(([status, type, body]) => {
        const tooLarge = status === 413;
        res.writeHead(status, { 'content-type': type, ...(tooLarge && { connection: 'close' }) });
        res.end(body, () => {
          if (tooLarge) req.destroy();
        });
      });
    });
  }

  private async route(req: IncomingMessage): Promise<Reply> {
    const json = 'application/json';
    if (req.method === 'GET' && req.url === '/healthz') {
      const health = this.options.health();
      return [health.ok ? 200 : 503, json, JSON.stringify(health)];
    }
    if (req.method === 'GET' && req.url === '/metrics') return [200, PROMETHEUS_CONTENT_TYPE, prometheusText(await this.options.metrics())];
    if (req.method !== 'POST' || req.url !== '/notify') return [404, json, '{"error":"not found"}'];
    const body = await readBody(req, MAX_NOTIFY_BODY);
    if (body === undefined) return this.refuse(req, 413, `body larger than ${MAX_NOTIFY_BODY} bytes`);
    const verdict = this.verify(req, body);
    if (verdict) return this.refuse(req, 401, verdict);
    this.accepted++;
    const revision = (JSON.parse(body) as { revision?: unknown }).revision;
    if (typeof revision === 'number' && revision <= this.options.applied()) {
      this.upToDate++;
      return [200, json, JSON.stringify({ status: 'up to date', revision: this.options.applied() })];
    }
    this.options.onNotify();
    return [202, json, '{"status":"pulling"}'];
  }

  private refuse(req: IncomingMessage, status: number, reason: string): Reply {
    this.rejected++;
    this.options.log.warn({ reason, from: req.socket.remoteAddress }, 'sync: notification refused');
    return [status, 'application/json', JSON.stringify({ error: reason })];
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
    let parsed: { id?: unknown };
    try {
      parsed = JSON.parse(body) as { id?: unknown };
    } catch {
      return 'body is not JSON';
    }
    const id = typeof parsed.id === 'string' ? `id:${parsed.id}` : `sig:${signature}`;
    for (const [key, expires] of this.seen) if (expires < now) this.seen.delete(key);
    if (this.seen.has(id)) return 'replayed notification';
    this.seen.set(id, now + 2 * skew);
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
