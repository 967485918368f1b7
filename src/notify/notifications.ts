// What the API and the notification work share in one process: events, webhooks, the domains'
// health and the intake of edge reports. The workers (deliveries, monitor) are started by the
// roles beside the API (see ../roles/notify-parts.ts).
import type { Logger } from 'pino';
import type { Store } from '../store/types.ts';
import { HealthTracker } from '../uptime/health-tracker.ts';
import { UptimeIntake } from '../uptime/intake.ts';
import type { MetricsSnapshot } from '../common/metrics/family.ts';
import { EventBook } from './event-book.ts';
import { WebhookBook } from './webhook-book.ts';

export class Notifications {
  readonly webhooks: WebhookBook;
  readonly events: EventBook;
  readonly tracker: HealthTracker;
  readonly intake: UptimeIntake;

  constructor(
    private readonly store: Store,
    log: Logger,
  ) {
    this.webhooks = new WebhookBook(store);
    this.events = new EventBook(store, this.webhooks, log);
    this.tracker = new HealthTracker(store, this.events, log);
    this.intake = new UptimeIntake(store, this.tracker, log);
  }

  /** A removed domain's measures, health and open conditions go with it (a later owner of the name starts afresh). */
  async forgetDomain(domain: string): Promise<void> {
    await this.store.deleteUptime(domain);
    await this.tracker.forget(domain);
    for (const kind of ['unserved', 'delegation', 'expiring']) await this.store.deleteDoc('notice', `cond|${kind}|${domain}`);
  }

  metrics(): MetricsSnapshot {
    return [...this.intake.metrics(), ...this.tracker.metrics(), ...this.events.metrics()];
  }
}
