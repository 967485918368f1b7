// PALISADE_DNS_WORKERS (declared in config/dns.ts): how many processes answer DNS queries on the
// name server's port. The default is one per core (os.availableParallelism()); 1 is the single
// process of before. PALISADE_DNS_WORKER_ZONES: whether the workers hold every zone (`index`) or
// answer from the stored state with a bounded cache of zones (`stored`).
import { dnsWorkerZones, dnsWorkers, type DnsWorkerZones } from '../../config/dns.ts';
import type { RateLimitOptions } from '../../dns/rate-limit/rate-limit.ts';
import type { TcpLimits } from '../../dns/server/tcp-limits.ts';
import { StartupError } from '../startup-error.ts';

/** The dns role's processes; a wrong PALISADE_DNS_WORKERS stops its start-up with one line. */
export function dnsWorkerCount(env?: NodeJS.ProcessEnv): number {
  const { workers, problem } = dnsWorkers(env);
  if (problem !== undefined) throw new StartupError(problem);
  return workers;
}

/** How the workers hold the zones; a wrong PALISADE_DNS_WORKER_ZONES stops start-up likewise. */
export function dnsWorkerZoneMode(env?: NodeJS.ProcessEnv): DnsWorkerZones {
  const { zones, problem } = dnsWorkerZones(env);
  if (problem !== undefined) throw new StartupError(problem);
  return zones;
}

/**
 * Response-rate limiting is counted in each process. The kernel spreads a client's queries over
 * the workers by source address and port, and both resolvers and spoofed floods vary their ports,
 * so each worker allows its share of the configured rate (rounded up) and the host as a whole
 * allows about the configured rate.
 */
export function rateLimitPerWorker(limit: RateLimitOptions, workers: number): RateLimitOptions {
  // The signing budgets likewise: a zone's (or a client's) questions reach every worker.
  const share = (n: number | undefined) => (n ? Math.ceil(n / workers) : n);
  return { ...limit, rate: limit.rate > 0 ? Math.ceil(limit.rate / workers) : limit.rate, signZoneRate: share(limit.signZoneRate), signClientRate: share(limit.signClientRate) };
}

/**
 * TCP limits are counted in each process too, and the kernel spreads connections like datagrams:
 * the bounds that protect the host (connections in all, per client network, unsent answer bytes)
 * are split likewise; per-connection bounds and timeouts stay as configured.
 */
export function tcpLimitsPerWorker(limits: TcpLimits, workers: number): TcpLimits {
  const share = (n: number) => Math.max(1, Math.ceil(n / workers));
  return {
    ...limits,
    maxConnections: share(limits.maxConnections),
    maxConnectionsPerClient: share(limits.maxConnectionsPerClient),
    outputBudgetBytes: Math.max(limits.maxOutputBytes, share(limits.outputBudgetBytes)),
  };
}
