// What the serve and api roles run beside the API for notifications: the webhook deliveries and
// the monitor, both acting only in the process holding the "notifications" lease.
import type { Logger } from 'pino';
import type { MetricsSnapshot } from '../common/metrics/family.ts';
import type { Config } from '../config.ts';
import { DeliveryWorker } from '../notify/delivery-worker.ts';
import { Monitor } from '../notify/monitor.ts';
import { Notifications } from '../notify/notifications.ts';
import { DnssecParent } from '../ownership/dnssec-parent.ts';
import { dnssecParentMetrics } from '../ownership/dnssec-metrics.ts';
import { Ownership } from '../ownership/ownership.ts';
import { issuanceReason } from '../certs/cert-names.ts';
import { TaskBook } from '../certs/task-book.ts';
import type { Store } from '../store/types.ts';

export interface NotifyParts {
  notify: Notifications;
  start(): void;
  stop(): Promise<void>;
  metrics(): MetricsSnapshot;
}

export function notifyParts(store: Store, config: Config, log: Logger): NotifyParts {
  const notify = new Notifications(store, log);
  const { retryBaseMs, maxAttempts, timeoutMs, allowPrivate, sweepMs, watchMs, resolver, expiringMs } = config.notify;
  const worker = new DeliveryWorker({ store, webhooks: notify.webhooks, log, retryBaseMs, maxAttempts, timeoutMs, allowPrivate });
  // A claim the monitor proves gets its certificate task here (the worker finds tasks other books write within seconds).
  const tasks = new TaskBook(store, config.certs.retryBaseMs);
  const ownership = new Ownership(store, config, log.child({ component: 'ownership' }), notify.events, {
    proven: async (domain) => {
      const reason = domain.ssl ? issuanceReason(domain, await store.getCertificate(domain.domain), Date.now()) : undefined;
      if (reason) await tasks.request(domain, reason);
    },
    released: async (domain, held) => {
      await tasks.forget(domain.ownerId, domain.domain);
      if (held) await notify.forgetDomain(domain.domain);
    },
  });
  const dnssecParent = new DnssecParent(store, config, log.child({ component: 'dnssec' }));
  const monitor = new Monitor({ store, events: notify.events, tracker: notify.tracker, log, leader: () => worker.leader, sweepMs, watchMs, resolver, nameservers: config.nameservers, expiringMs, ownership, dnssecParent });
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
    metrics: () => [...notify.metrics(), ...worker.metrics(), ...dnssecParentMetrics(dnssecParent.counts)],
  };
}
