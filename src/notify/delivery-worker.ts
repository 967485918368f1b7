// Delivers queued events to webhooks, in exactly one API process at a time (the lease
// "notifications", which the monitor shares). Deliveries run side by side, at most
// PER_WEBHOOK to one webhook, so a slow or dead receiver delays only its own account's events.
// A failed attempt (no answer, not 2xx) is tried again after retryBaseMs × 2^(n-1) (±20 %),
// up to maxAttempts; each attempt is recorded on the delivery, which the customer can read.
import { retryDelay as sharedRetryDelay } from '../common/retry-delay.ts';
import { coalesced } from '../common/coalesce.ts';
import { DEFAULT_LEASE_TIMING, LeaseHolder } from '../store/lease-holder.ts';
import type { Logger } from 'pino';
import type { Store } from '../store/types.ts';
import type { DeliveryState, WebhookState } from './webhook-model.ts';
import type { WebhookBook } from './webhook-book.ts';
import { sendEvent } from './webhook-sender.ts';
import { byLabel, family, single, type MetricsSnapshot } from '../common/metrics/family.ts';

const WEBHOOK_ATTEMPTS = family({ name: 'palisade_webhook_attempts_total', type: 'counter', help: 'Webhook delivery attempts by outcome (retried: failed, tried again later).', labels: ['outcome'] });
const NOTIFY_LEADER = family({ name: 'palisade_notify_leader', type: 'gauge', help: "Whether this process holds the notification work's lease (1) or not (0)." });

const TICK_MS = 250;
const CONCURRENCY = 32;
const PER_WEBHOOK = 2;

export interface DeliveryOptions {
  store: Store;
  webhooks: WebhookBook;
  log: Logger;
  retryBaseMs: number;
  maxAttempts: number;
  timeoutMs: number;
  allowPrivate: boolean;
}

/** The shared backoff (../common/retry-delay.ts), in whole ms as the delivery log shows it. */
export const retryDelay = (baseMs: number, attempt: number, random = Math.random()): number => Math.round(sharedRetryDelay(baseMs, attempt, random));

export class DeliveryWorker {
  /** Asked for every second while another process holds it (that process may be gone). */
  private readonly lease: LeaseHolder;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<string>();
  private readonly perHook = new Map<string, number>();
  /** Where the next look starts in the list of webhooks with deliveries waiting. */
  private resume: string | undefined;
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  readonly counts = { delivered: 0, retried: 0, failed: 0 };

  constructor(private readonly options: DeliveryOptions) {
    this.lease = new LeaseHolder(options.store, 'notifications', { ...DEFAULT_LEASE_TIMING, askMs: 1000 });
  }

  /** Whether this process does the notification work (deliveries and the monitor). */
  get leader(): boolean {
    return this.lease.held;
  }

  start(): void {
    this.options.webhooks.onDue = () => this.kick();
    this.timer = setInterval(() => this.kick(), TICK_MS);
    this.timer.unref();
    this.kick();
  }

  /** Looks for due deliveries now (one look at a time; a kick during a look asks for another). */
  kick(): void {
    if (!this.stopped) void this.looks();
  }

  private readonly looks = coalesced(() => this.look().catch((error: unknown) => this.options.log.warn({ err: (error as Error).message }, 'notify: looking for due deliveries failed')));

  private async look(): Promise<void> {
    const { webhooks } = this.options;
    if (!(await this.lease.hold())) return;
    // Each webhook with deliveries waiting in turn, at most PER_WEBHOOK of its own at once: one
    // receiver's backlog never stands in front of another's. When all slots are taken, the next
    // look starts where this one stopped (round robin over the webhooks).
    const start = this.resume;
    let cursor = start;
    let wrapped = start === undefined;
    for (;;) {
      const page = await webhooks.pendingHooks({ limit: 200, cursor });
      for (const { id: hook } of page.items) {
        if (this.inFlight.size >= CONCURRENCY) {
          this.resume = cursor;
          return;
        }
        if ((this.perHook.get(hook) ?? 0) >= PER_WEBHOOK) continue;
        for (const item of await webhooks.due(hook, Date.now(), PER_WEBHOOK * 2)) {
          if ((this.perHook.get(hook) ?? 0) >= PER_WEBHOOK || this.inFlight.size >= CONCURRENCY) break;
          if (!this.inFlight.has(item.deliveryKey)) this.run(hook, item);
        }
      }
      cursor = page.next;
      if (cursor === undefined) {
        if (wrapped) break;
        wrapped = true;
      }
    }
    this.resume = undefined;
  }

  private run(hook: string, item: { dueKey: string; deliveryKey: string }): void {
    this.inFlight.add(item.deliveryKey);
    this.perHook.set(hook, (this.perHook.get(hook) ?? 0) + 1);
    const run = this.attempt(item.dueKey, item.deliveryKey)
      .catch((error: unknown) => this.options.log.warn({ err: (error as Error).message, delivery: item.deliveryKey }, 'notify: an attempt could not be recorded; it will be made again'))
      .finally(() => {
        this.inFlight.delete(item.deliveryKey);
        this.perHook.set(hook, (this.perHook.get(hook) ?? 1) - 1);
        this.running.delete(run);
        this.kick();
      });
    this.running.add(run);
  }

  private async attempt(dueKey: string, deliveryKey: string): Promise<void> {
    const { webhooks, log } = this.options;
    const delivery = await webhooks.getDelivery(deliveryKey);
    if (!delivery) {
      await webhooks.forget(dueKey, deliveryKey);
      return;
    }
    if (delivery.state !== 'pending') {
      await this.options.store.deleteDoc('deliverydue', dueKey);
      return;
    }
    const hook = await webhooks.get(delivery.owner, delivery.webhook);
    if (!hook) {
      // The webhook was deleted: its queued deliveries go with it.
      await webhooks.forget(dueKey, deliveryKey);
      return;
    }
    const result = await this.send(hook, delivery);
    const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
    const attempts = [...delivery.attempts, { at: new Date().toISOString(), ...result }];
    let retryAt: number | undefined;
    let state: DeliveryState['state'] = 'delivered';
    if (!ok) {
      if (attempts.length >= this.options.maxAttempts) state = 'failed';
      else {
        state = 'pending';
        retryAt = Date.now() + retryDelay(this.options.retryBaseMs, attempts.length);
      }
    }
    const next: DeliveryState = { ...delivery, state, attempts, next_attempt: retryAt === undefined ? null : new Date(retryAt).toISOString() };
    await webhooks.recordAttempt(dueKey, deliveryKey, next, retryAt);
    // Looked at again when due (not at the next tick after it).
    if (retryAt !== undefined) setTimeout(() => this.kick(), Math.max(0, retryAt - Date.now())).unref();
    if (state === 'delivered') this.counts.delivered++;
    else if (state === 'failed') this.counts.failed++;
    else this.counts.retried++;
    if (!ok) log.info({ webhook: hook.id, owner: hook.owner, delivery: delivery.id, attempt: attempts.length, status: result.status, err: result.error, retry: next.next_attempt }, 'notify: webhook delivery failed');
  }

  private send(hook: WebhookState, delivery: DeliveryState) {
    const body = JSON.stringify(delivery.event);
    return sendEvent(hook.url, hook.secret, body, { 'x-palisade-event': delivery.event.type, 'x-palisade-delivery': delivery.id }, { timeoutMs: this.options.timeoutMs, allowPrivate: this.options.allowPrivate });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.looks.settled();
    await Promise.all([...this.running]);
    await this.lease.release();
  }

  metrics(): MetricsSnapshot {
    const c = this.counts;
    return [
      byLabel(WEBHOOK_ATTEMPTS, [
        ['delivered', c.delivered],
        ['retried', c.retried],
        ['failed', c.failed],
      ]),
      single(NOTIFY_LEADER, this.leader ? 1 : 0),
    ];
  }
}
