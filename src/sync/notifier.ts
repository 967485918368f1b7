// Push half of the change feed: after commits, POST {"revision": R, "id": random} to every
// consumer with a URL, signed so a consumer can tell it came from us and is fresh (the id makes
// every push unique, so two in the same second are never taken for a replay):
//   X-Palisade-Timestamp: unix seconds
//   X-Palisade-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>
// A notification only says "pull now"; a lost one costs the consumer its poll interval.
// A consumer that stops taking pushes is logged once when it goes and once when it is back (with
// how many pushes it missed), not once per commit; /metrics counts every outcome.
import { createHmac, randomBytes } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import type { ConsumerState, Store } from '../store/types.ts';
import { coalesced } from '../common/coalesce.ts';
import { byLabel, family, labelled, type MetricsSnapshot } from '../common/metrics/family.ts';

const PUSHES = family({ name: 'palisade_sync_pushes_total', type: 'counter', help: 'Change notifications sent to consumers, by outcome.', labels: ['consumer', 'outcome'] });
const CONSUMER_UP = family({ name: 'palisade_sync_consumer_up', type: 'gauge', help: 'Whether the consumer took its last notification (1) or not (0).', labels: ['consumer'] });

export function signNotification(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

interface ConsumerHealth {
  /** Since when pushes fail (ms), 0 while they arrive. */
  failingSince: number;
  missed: number;
  delivered: number;
  failed: number;
}

export class PushNotifier {
  private consumers: ConsumerState[] = [];
  private readonly health = new Map<number, ConsumerHealth>();
  private pending = false;
  private refresh: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly timeoutMs = 1000,
  ) {}

  async start(): Promise<void> {
    await this.reload();
    // Consumers are added by the operator CLI, possibly from another process.
    this.refresh = setInterval(() => void this.reload(), 5000);
    this.refresh.unref();
    this.unsubscribe = this.store.onCommit(() => this.schedule());
  }

  stop(): void {
    this.unsubscribe?.();
    if (this.refresh) clearInterval(this.refresh);
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async reload(): Promise<void> {
    try {
      this.consumers = (await this.store.listConsumers()).filter((c) => c.url !== null);
      // A removed consumer's push loop goes with it.
      for (const id of this.pushes.keys()) if (!this.consumers.some((c) => c.id === id)) this.pushes.delete(id);
    } catch (error) {
      this.log.warn({ err: error }, 'sync: could not read the consumer list; keeping the previous one');
    }
  }

  /** Commits in one burst become one notification per consumer. */
  private schedule(): void {
    if (this.pending) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      this.notifyAll();
    });
  }

  /**
   * One push in flight per consumer: commits while it is out become one more push (at the
   * revision then current), so a burst of writes makes a few pulls, not one per write, and a
   * slow consumer delays only its own pushes.
   */
  private readonly pushes = new Map<number, () => Promise<void>>();

  private notifyAll(): void {
    for (const consumer of this.consumers) {
      let push = this.pushes.get(consumer.id);
      if (!push) {
        push = coalesced(async () => {
          const current = this.consumers.find((c) => c.id === consumer.id);
          if (!current) return;
          const revision = await this.store.currentRevision().catch(() => undefined);
          if (revision !== undefined) await this.notify(current, JSON.stringify({ revision, id: randomBytes(12).toString('hex') }));
        });
        this.pushes.set(consumer.id, push);
      }
      void push();
    }
  }

  private healthOf(consumer: ConsumerState): ConsumerHealth {
    let health = this.health.get(consumer.id);
    if (!health) this.health.set(consumer.id, (health = { failingSince: 0, missed: 0, delivered: 0, failed: 0 }));
    return health;
  }

  private failed(consumer: ConsumerState, detail: Record<string, unknown>, message: string): void {
    const health = this.healthOf(consumer);
    health.failed++;
    health.missed++;
    if (health.failingSince !== 0) return;
    health.failingSince = Date.now();
    this.log.warn({ consumer: consumer.name, url: consumer.url, ...detail }, `${message} (logged once until it recovers; it catches up by polling)`);
  }

  private delivered(consumer: ConsumerState): void {
    const health = this.healthOf(consumer);
    health.delivered++;
    if (health.failingSince !== 0) {
      this.log.info({ consumer: consumer.name, url: consumer.url, missed: health.missed, downForMs: Date.now() - health.failingSince }, 'sync: consumer takes notifications again');
    }
    health.failingSince = 0;
    health.missed = 0;
  }

  /** Pushes by consumer and outcome, and whether each consumer takes them now. */
  metrics(): MetricsSnapshot {
    const pushes: Array<[string[], number]> = [];
    const up: Array<[string, number]> = [];
    for (const consumer of this.consumers) {
      const health = this.healthOf(consumer);
      pushes.push([[consumer.name, 'delivered'], health.delivered], [[consumer.name, 'failed'], health.failed]);
      up.push([consumer.name, health.failingSince === 0 ? 1 : 0]);
    }
    return [labelled(PUSHES, pushes), byLabel(CONSUMER_UP, up)];
  }

  private async notify(consumer: ConsumerState, body: string): Promise<void> {
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const headers = {
        'content-type': 'application/json',
        'x-palisade-timestamp': String(timestamp),
        'x-palisade-signature': signNotification(consumer.secret, timestamp, body),
      };
      // A kept-alive connection the consumer closed meanwhile fails at once: once more, anew.
      const status = await this.post(consumer.url!, body, headers).catch((error: NodeJS.ErrnoException) =>
        error.code === 'ECONNRESET' || error.code === 'EPIPE' ? this.post(consumer.url!, body, headers) : Promise.reject(error),
      );
      if (status >= 200 && status < 300) this.delivered(consumer);
      else this.failed(consumer, { status }, 'sync: consumer refuses notifications; check its secret and clock');
    } catch (error) {
      this.failed(consumer, { err: (error as Error).message }, 'sync: notifications do not reach the consumer; check that it listens at this URL and the API can reach it');
    }
  }

  // Pushes go out with node:http over kept-alive connections: a push per burst of commits is
  // frequent, and fetch() with an abort signal cost several times the CPU of the push itself.
  private readonly agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 4 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 4 }) };

  /** POSTs `body`; resolves to the status, rejects on a network error or after timeoutMs. */
  private post(url: string, body: string, headers: Record<string, string>): Promise<number> {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(
        target,
        { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent: secure ? this.agents.https : this.agents.http, timeout: this.timeoutMs },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}
