// Events and webhooks: their delivery, and the sweep that looks for the conditions customers are told of.
import { bool, hostPorts, int, readTable } from './kinds.ts';
import type { Config } from './types.ts';

export const NOTIFY_SETTINGS = {
  PALISADE_WEBHOOK_RETRY_MS: int(30_000, 10, 86_400_000, { help: 'first retry delay of a failed webhook delivery (doubles, ±20 %)' }),
  PALISADE_WEBHOOK_MAX_ATTEMPTS: int(8, 1, 100, { help: 'attempts before a delivery is failed for good' }),
  PALISADE_WEBHOOK_TIMEOUT_MS: int(5000, 100, 60_000, { help: 'how long a receiver has to answer' }),
  PALISADE_WEBHOOK_ALLOW_PRIVATE: bool(false, { help: '`true` lets webhooks reach loopback or private addresses (tests, one machine)' }),
  PALISADE_MONITOR_SWEEP_SECONDS: int(300, 1, 86_400, { help: 'how often every domain is looked at for unserved domains, missing delegations and expiring certificates' }),
  PALISADE_MONITOR_WATCH_SECONDS: int(5, 1, 3600, { help: 'how often the monitor looks again at unhealthy domains, pending claims due and DNSSEC parents due (a bounded number each time)' }),
  PALISADE_DELEGATION_RESOLVER: hostPorts({
    help: 'address:port of the resolver asked for a domain\'s NS set (delegation check) and for ownership proofs; unset: not checked, and only the operator can prove a claim',
  }),
  PALISADE_CERT_EXPIRING_DAYS: int(14, 1, 365, { help: 'a certificate this near its end raises `certificate.expiring`' }),
};

export function notifyConfig(env: Record<string, string | undefined>, problems: string[]): Pick<Config, 'notify'> {
  const v = readTable(NOTIFY_SETTINGS, env, problems);
  return {
    notify: {
      retryBaseMs: v.PALISADE_WEBHOOK_RETRY_MS,
      maxAttempts: v.PALISADE_WEBHOOK_MAX_ATTEMPTS,
      timeoutMs: v.PALISADE_WEBHOOK_TIMEOUT_MS,
      allowPrivate: v.PALISADE_WEBHOOK_ALLOW_PRIVATE,
      sweepMs: v.PALISADE_MONITOR_SWEEP_SECONDS * 1000,
      watchMs: v.PALISADE_MONITOR_WATCH_SECONDS * 1000,
      resolver: v.PALISADE_DELEGATION_RESOLVER[0],
      expiringMs: v.PALISADE_CERT_EXPIRING_DAYS * 86_400_000,
    },
  };
}
