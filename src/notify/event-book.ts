// The events of each customer (internal documents `event` OWNER|KEY, newest first) and their
// hand-over to webhooks. An account keeps its newest KEEP_EVENTS events.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Page, PageRequest, Store } from '../store/types.ts';
import { newestFirstKey, type EventJson, type EventType } from '../model/event.ts';
import type { WebhookBook } from './webhook-book.ts';
import { byLabel, family, type MetricsSnapshot } from '../common/metrics/family.ts';

const EVENTS = family({ name: 'palisade_events_total', type: 'counter', help: 'Events raised for customers, by type.', labels: ['type'] });

export const KEEP_EVENTS = 1000;

export class EventBook {
  readonly counts = new Map<string, number>();
  private emitted = 0;

  constructor(
    private readonly store: Store,
    readonly webhooks: WebhookBook,
    private readonly log: Logger,
  ) {}

  async emit(owner: number, type: EventType, domain: string | null, data: Record<string, unknown>): Promise<EventJson> {
    const now = Date.now();
    const key = newestFirstKey(now, randomBytes(4).toString('hex'));
    const event: EventJson = { id: `evt_${key}`, type, domain, created: new Date(now).toISOString(), data };
    await this.store.putDoc('event', `${owner}|${key}`, event);
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    this.log.info({ owner, type, domain, event: event.id }, 'event');
    if (type !== 'webhook.test') await this.webhooks.enqueue(owner, event);
    await this.prune(owner);
    return event;
  }

  list(owner: number, page: PageRequest): Promise<Page<{ id: string; value: EventJson }>> {
    return this.store.listDocs<EventJson>('event', page, `${owner}|`);
  }

  private async prune(owner: number): Promise<void> {
    // Every 20th event of this process looks (an account may exceed the bound by that much for a while).
    if (this.emitted++ % 20 !== 0) return;
    const kept = await this.store.listDocs<EventJson>('event', { limit: KEEP_EVENTS }, `${owner}|`);
    if (!kept.next) return;
    const rest = await this.store.listDocs<EventJson>('event', { limit: 50, cursor: kept.next }, `${owner}|`);
    for (const { id } of rest.items) await this.store.deleteDoc('event', id);
  }

  metrics(): MetricsSnapshot {
    return [byLabel(EVENTS, this.counts)];
  }
}
