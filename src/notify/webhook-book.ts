// Webhooks and their deliveries in the store (internal documents):
//   webhook      OWNER|ID            the webhook (with its secret)
//   delivery     WEBHOOK|KEY         one event's delivery to one webhook, with its attempts (KEY: newest first)
//   deliverydue  WEBHOOK|DUE_MS|KEY  each webhook's deliveries waiting for an attempt, earliest first
//   hookpending  WEBHOOK             the webhooks with deliveries waiting
// Queues are per webhook, and the worker takes from each in turn: a customer whose receiver is
// slow or dead, with thousands of deliveries waiting, delays no other webhook's.
// A webhook keeps its newest KEEP_DELIVERIES deliveries (older ones are dropped as new ones come).
import { randomBytes } from 'node:crypto';
import { ApiError } from '../errors.ts';
import type { Page, PageRequest, Store } from '../store/types.ts';
import { newestFirstKey, type EventJson } from '../model/event.ts';
import { MAX_WEBHOOKS_PER_USER, type DeliveryState, type WebhookCreate, type WebhookState } from './webhook-model.ts';

export const KEEP_DELIVERIES = 100;

/** The due entry of a delivery (its key starts with its webhook's id). */
const dueId = (at: number, deliveryKey: string) => {
  const bar = deliveryKey.indexOf('|');
  return `${deliveryKey.slice(0, bar)}|${String(at).padStart(13, '0')}|${deliveryKey.slice(bar + 1)}`;
};
const deliveryKeyOf = (dueKey: string) => {
  const [hook, , key] = dueKey.split('|');
  return `${hook}|${key}`;
};

export class WebhookBook {
  /** Called when a delivery became due (the worker need not wait for its next look). */
  onDue: (() => void) | undefined;
  private finished = 0;

  constructor(private readonly store: Store) {}

  async create(owner: number, input: WebhookCreate): Promise<WebhookState> {
    const existing = await this.list(owner);
    if (existing.length >= MAX_WEBHOOKS_PER_USER) throw new ApiError('LIMIT_EXCEEDED', `an account has at most ${MAX_WEBHOOKS_PER_USER} webhooks; delete one first`);
    const hook: WebhookState = {
      id: `wh_${randomBytes(8).toString('hex')}`,
      owner,
      url: input.url,
      events: input.events ?? [],
      description: input.description ?? '',
      created: new Date().toISOString(),
      secret: randomBytes(32).toString('hex'),
    };
    await this.store.putDoc('webhook', `${owner}|${hook.id}`, hook);
    return hook;
  }

  async list(owner: number): Promise<WebhookState[]> {
    const page = await this.store.listDocs<WebhookState>('webhook', { limit: MAX_WEBHOOKS_PER_USER * 2 }, `${owner}|`);
    return page.items.map((i) => i.value);
  }

  get(owner: number, id: string): Promise<WebhookState | undefined> {
    return this.store.getDoc<WebhookState>('webhook', `${owner}|${id}`);
  }

  /** Removes the webhook; its deliveries are dropped as the worker meets them. */
  async delete(owner: number, id: string): Promise<boolean> {
    return this.store.deleteDoc('webhook', `${owner}|${id}`);
  }

  /** Queues the event for each of the owner's webhooks that takes its type (or only `only`). */
  async enqueue(owner: number, event: EventJson, only?: WebhookState): Promise<DeliveryState[]> {
    const hooks = only ? [only] : (await this.list(owner)).filter((h) => h.events.length === 0 || h.events.includes(event.type));
    const now = Date.now();
    const out: DeliveryState[] = [];
    for (const hook of hooks) {
      const key = newestFirstKey(now, randomBytes(4).toString('hex'));
      const delivery: DeliveryState = { id: `dlv_${key}`, webhook: hook.id, owner, event, state: 'pending', attempts: [], next_attempt: new Date(now).toISOString() };
      await this.store.putDoc('delivery', `${hook.id}|${key}`, delivery);
      await this.store.putDoc('deliverydue', dueId(now, `${hook.id}|${key}`), 0);
      await this.store.putDoc('hookpending', hook.id, 0);
      out.push(delivery);
    }
    if (out.length > 0) this.onDue?.();
    return out;
  }

  deliveries(hookId: string, page: PageRequest): Promise<Page<{ id: string; value: DeliveryState }>> {
    return this.store.listDocs<DeliveryState>('delivery', page, `${hookId}|`);
  }

  /** The webhooks with deliveries waiting (at most `limit`, from after `cursor`). */
  pendingHooks(page: PageRequest): Promise<Page<{ id: string; value: number }>> {
    return this.store.listDocs<number>('hookpending', page);
  }

  /**
   * A webhook's deliveries due by `now`, earliest first (at most `limit`). A webhook with none
   * waiting at all leaves the pending list (looked at twice: an enqueue may come in between).
   */
  async due(hookId: string, now: number, limit: number): Promise<Array<{ dueKey: string; deliveryKey: string }>> {
    let page = await this.store.listDocs<number>('deliverydue', { limit }, `${hookId}|`);
    if (page.items.length === 0) {
      await this.store.deleteDoc('hookpending', hookId);
      page = await this.store.listDocs<number>('deliverydue', { limit }, `${hookId}|`);
      if (page.items.length > 0) await this.store.putDoc('hookpending', hookId, 0);
    }
    return page.items.flatMap(({ id }) => (Number(id.split('|')[1]) <= now ? [{ dueKey: id, deliveryKey: deliveryKeyOf(id) }] : []));
  }

  getDelivery(deliveryKey: string): Promise<DeliveryState | undefined> {
    return this.store.getDoc<DeliveryState>('delivery', deliveryKey);
  }

  /** Records an attempt's outcome; `retryAt` set: due again then. */
  async recordAttempt(dueKey: string, deliveryKey: string, delivery: DeliveryState, retryAt: number | undefined): Promise<void> {
    await this.store.putDoc('delivery', deliveryKey, delivery);
    if (retryAt !== undefined) await this.store.putDoc('deliverydue', dueId(retryAt, deliveryKey), 0);
    await this.store.deleteDoc('deliverydue', dueKey);
    if (delivery.state !== 'pending') await this.prune(delivery.webhook);
  }

  async forget(dueKey: string, deliveryKey: string): Promise<void> {
    await this.store.deleteDoc('deliverydue', dueKey);
    await this.store.deleteDoc('delivery', deliveryKey);
  }

  /** Drops a webhook's deliveries beyond the newest KEEP_DELIVERIES (pages of them: bounded work). */
  private async prune(hookId: string): Promise<void> {
    if (this.finished++ % 10 !== 0) return;
    const first = await this.store.listDocs<DeliveryState>('delivery', { limit: KEEP_DELIVERIES }, `${hookId}|`);
    if (!first.next) return;
    const rest = await this.store.listDocs<DeliveryState>('delivery', { limit: 50, cursor: first.next }, `${hookId}|`);
    for (const { id, value } of rest.items) if (value.state !== 'pending') await this.store.deleteDoc('delivery', id);
  }
}
