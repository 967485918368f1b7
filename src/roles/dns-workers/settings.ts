// PALISADE_DNS_WORKERS: how many processes answer DNS queries on the name server's port. The
// default is one per core (os.availableParallelism()); 1 is the single process of before.
import { availableParallelism } from 'node:os';
import type { RateLimitOptions } from '../../dns/rate-limit/rate-limit.ts';
import type { TcpLimits } from '../../dns/server/tcp.ts';
import { StartupError } from '../startup-error.ts';

export const MAX_DNS_WORKERS = 64;

export function dnsWorkerCount(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.PALISADE_DNS_WORKERS;
  if (text === undefined || text === '') return Math.min(MAX_DNS_WORKERS, availableParallelism());
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= MAX_DNS_WORKERS)) throw new StartupError(`PALISADE_DNS_WORKERS=${text}: must be an integer from 1 to ${MAX_DNS_WORKERS} (unset: one per core)`);
  return n;
}

/**
 * Response-rate limiting is counted in each process. The kernel spreads a client's queries over
 * the workers by source address and port, and both resolvers and spoofed floods vary their ports,
 * so each worker allows its share of the configured rate (rounded up) and the host as a whole
 * allows about the configured rate.
 */
export function rateLimitPerWorker(limit: RateLimitOptions, workers: number): RateLimitOptions {
  return limit.rate > 0 ? { ...limit, rate: Math.ceil(limit.rate / workers) } : limit;
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
