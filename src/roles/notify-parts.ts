// What the serve and api roles run beside the API for notifications: the webhook deliveries and
// the monitor, both acting only in the process holding the "notifications" lease.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { DeliveryWorker } from '../notify/delivery-worker.ts';
import { Monitor } from '../notify/monitor.ts';
import { Notifications } from '../notify/notifications.ts';
import { Ownership } from '../ownership/ownership.ts';
import type { Store } from '../store/types.ts';

export interface NotifyParts {
  notify: Notifications;
  start(): void;
  stop(): Promise<void>;
  metrics(): string;
}

export function notifyParts(store: Store, config: Config, log: Logger): NotifyParts {
  const notify = new Notifications(store, log);
  const { retryBaseMs, maxAttempts, timeoutMs, allowPrivate, sweepMs, resolver, expiringMs } = config.notify;
  const worker = new DeliveryWorker({ store, webhooks: notify.webhooks, log, retryBaseMs, maxAttempts, timeoutMs, allowPrivate });
  const ownership = new Ownership(store, config, log.child({ component: 'ownership' }), notify.events, { released: (domain, held) => (held ? notify.forgetDomain(domain.domain) : Promise.resolve()) });
  const monitor = new Monitor({ store, events: notify.events, tracker: notify.tracker, log, leader: () => worker.leader, sweepMs, resolver, nameservers: config.nameservers, expiringMs, ownership });
  return {
    notify,
    start() {
      worker.start();
      monitor.start();
    },
    async stop() {
      await monitor.stop();
      await worker.stop();
    },
    metrics: () => notify.metrics() + worker.metrics(),
  };
}
