// Push half of the change feed: after commits, POST {"revision": R} to every consumer with a URL,
// signed so a consumer can tell it came from us and is fresh:
//   X-Palisade-Timestamp: unix seconds
//   X-Palisade-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>
// A notification only says "pull now"; a lost one costs the consumer its poll interval.
import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { ConsumerState, Store } from '../store/types.ts';

export function signNotification(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export class PushNotifier {
  private consumers: ConsumerState[] = [];
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
  }

  private async reload(): Promise<void> {
    try {
      this.consumers = (await this.store.listConsumers()).filter((c) => c.url !== null);
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
      void this.notifyAll();
    });
  }

  private async notifyAll(): Promise<void> {
    if (this.consumers.length === 0) return;
    const revision = await this.store.currentRevision().catch(() => undefined);
    if (revision === undefined) return;
    const body = JSON.stringify({ revision });
    await Promise.all(this.consumers.map((c) => this.notify(c, body)));
  }

  private async notify(consumer: ConsumerState, body: string): Promise<void> {
    const timestamp = Math.floor(Date.now() / 1000);
    try {
      const res = await fetch(consumer.url!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-palisade-timestamp': String(timestamp), 'x-palisade-signature': signNotification(consumer.secret, timestamp, body) },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!res.ok) this.log.warn({ consumer: consumer.name, url: consumer.url, status: res.status }, 'sync: consumer refused a notification; check its secret and clock (it will catch up by polling)');
    } catch (error) {
      this.log.warn(
        { consumer: consumer.name, url: consumer.url, err: (error as Error).message },
        'sync: notification not delivered; check that the consumer listens at this URL and the API can reach it (it will catch up by polling)',
      );
    }
  }
}
