// How long a failed attempt waits before the next one, for every retrying worker (certificate
// issuance, webhook deliveries): base × 2^(n-1), at most six hours, ±20 % so that many items
// failing together do not retry in step.

export const MAX_RETRY_DELAY_MS = 6 * 3600_000;

/** The delay before attempt n+1, after `attempts` attempts (≥ 1). */
export function retryDelay(baseMs: number, attempts: number, random = Math.random()): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), MAX_RETRY_DELAY_MS) * (0.8 + 0.4 * random);
}
