// A write storm against API processes on a Sentinel-watched Redis, with the primary killed in the
// middle: each write creates a domain of its own name, so every answer can be checked afterwards.
// Shared by the failover test (test/store/redis-failover.test.ts) and its bench
// (bench/redis-failover.ts).
import type { SentinelDeployment } from './redis-sentinel.ts';

export interface StormResult {
  /** Names whose create was answered 201 (acknowledged). */
  acknowledged: string[];
  /** When each was acknowledged (ms since start). */
  ackedAt: Map<string, number>;
  /** Answers by status (0: no answer: the connection failed). */
  statuses: Map<number, number>;
  /** The 503 answers by what they said of the write. */
  unavailable: Map<string, number>;
  /** When the primary was killed and when the first write after it was acknowledged (ms since start). */
  killedAt: number;
  resumedAt: number | undefined;
  /** Latency (ms) of each acknowledged create, before the kill and after writes resumed. */
  latencies: number[];
  /** The primary's port before, and the new primary's. */
  from: number;
  to: number;
}

export interface StormOptions {
  apis: string[];
  key: string;
  deployment: SentinelDeployment;
  /** Names start with this (one storm's writes apart from another's). */
  prefix: string;
  /** Parallel writers. */
  writers: number;
  /** Writes before the kill (ms), and how long writing goes on after writes resume (ms). */
  beforeKillMs: number;
  afterResumeMs: number;
  /** Gives up waiting for writes to resume after this long (ms). */
  resumeTimeoutMs: number;
}

export async function failoverStorm(options: StormOptions): Promise<StormResult> {
  const { apis, key, deployment } = options;
  const from = await deployment.primaryPort();
  const start = performance.now();
  const acknowledged: string[] = [];
  const ackedAt = new Map<string, number>();
  const statuses = new Map<number, number>();
  const unavailable = new Map<string, number>();
  const latencies: number[] = [];
  let killedAt = Number.POSITIVE_INFINITY;
  let resumedAt: number | undefined;
  let stopAt = Number.POSITIVE_INFINITY;
  let n = 0;
  const writer = async (w: number) => {
    while (performance.now() - start < stopAt) {
      const name = `${options.prefix}-${w}-${n++}.example`;
      const sent = performance.now();
      const res = await fetch(`${apis[n % apis.length]}/domains`, {
        method: 'POST',
        headers: { 'x-auth-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ domain: name, backend: '198.51.100.1' }),
        signal: AbortSignal.timeout(20_000),
      }).catch(() => undefined);
      const status = res?.status ?? 0;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const body = res ? await res.text() : '';
      if (status === 201) {
        acknowledged.push(name);
        const at = performance.now() - start;
        ackedAt.set(name, at);
        if (sent - start > killedAt && resumedAt === undefined) {
          resumedAt = at;
          stopAt = at + options.afterResumeMs;
        }
        if (sent - start < killedAt || (resumedAt !== undefined && sent - start > resumedAt)) latencies.push(performance.now() - sent);
      } else if (status === 503) {
        unavailable.set(kindOf503(body), (unavailable.get(kindOf503(body)) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 50));
      } else await new Promise((r) => setTimeout(r, 50));
    }
  };
  const running = Array.from({ length: options.writers }, (_, w) => writer(w));
  await new Promise((r) => setTimeout(r, options.beforeKillMs));
  killedAt = performance.now() - start;
  await deployment.kill(from);
  // Writers stop anyway once the wait for resumption is over.
  const giveUp = setTimeout(() => {
    if (resumedAt === undefined) stopAt = performance.now() - start;
  }, options.resumeTimeoutMs);
  const to = await deployment.failedOver(from, options.resumeTimeoutMs);
  await Promise.all(running);
  clearTimeout(giveUp);
  return { acknowledged, ackedAt, statuses, unavailable, killedAt, resumedAt, latencies, from, to };
}

/** Acknowledged names the API no longer has (asked of each API process in turn). */
export async function lostWrites(apis: string[], key: string, names: string[]): Promise<string[]> {
  const lost: string[] = [];
  // One answer per name: 200 (kept) or 404 (lost); a 503 (a process still reconnecting) is asked again.
  const ask = async (name: string, i: number): Promise<number> => {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${apis[(i + attempt) % apis.length]}/domains/${name}`, { headers: { 'x-auth-key': key } });
      const body = await res.text();
      if (res.status === 200 || res.status === 404) return res.status;
      if (res.status !== 503 || attempt === 50) throw new Error(`GET /domains/${name} answered ${res.status} while checking the acknowledged writes: ${body}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  for (let i = 0; i < names.length; i += 20) {
    const batch = names.slice(i, i + 20);
    const found = await Promise.all(batch.map((name, j) => ask(name, j)));
    batch.forEach((name, j) => {
      if (found[j] === 404) lost.push(name);
    });
  }
  return lost;
}

/** What a 503 said of the write (see docs/redis.md, "What a client sees during a failover"). */
function kindOf503(body: string): string {
  if (body.includes('not yet confirmed')) return 'not durable (made, not on the replicas yet)';
  if (body.includes('the commit was not made')) return 'answer lost, settled: not made';
  if (body.includes('whether it was made is not known')) return 'answer lost, not settled';
  return 'store unavailable (nothing sent)';
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
