// Another tenant's view of the API while one account does something large: its GETs sent one
// after another (bounded in count and time), each answer's latency and the gaps between answers.

export interface ProbeFigures {
  count: number;
  /** Each request's latency, sorted (ms). */
  latencies: number[];
  /** The longest time between two consecutive answers (ms): the stall the tenant saw. */
  largestGapMs: number;
  /** Answers other than 200. */
  failures: number;
}

export interface TenantProbe {
  stop(): Promise<ProbeFigures>;
}

export function startTenantProbe(opts: { url: string; path: string; key: string; maxRequests?: number; maxMs?: number; pauseMs?: number }): TenantProbe {
  const maxRequests = opts.maxRequests ?? 50_000;
  const deadline = performance.now() + (opts.maxMs ?? 120_000);
  const latencies: number[] = [];
  let largestGapMs = 0;
  let failures = 0;
  let running = true;
  const loop = (async () => {
    let lastAnswer = performance.now();
    while (running && latencies.length < maxRequests && performance.now() < deadline) {
      const at = performance.now();
      const res = await fetch(opts.url + opts.path, { headers: { 'x-auth-key': opts.key } });
      await res.arrayBuffer();
      const now = performance.now();
      if (res.status !== 200) failures++;
      latencies.push(now - at);
      largestGapMs = Math.max(largestGapMs, now - lastAnswer);
      lastAnswer = now;
      if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { count: latencies.length, latencies: latencies.sort((a, b) => a - b), largestGapMs, failures };
    },
  };
}

/**
 * A zone file of `count` records under names `<prefix>N` (A, AAAA, TXT, MX in turn), the kind of
 * file a customer moving a large zone sends.
 */
export function largeZoneFile(count: number, prefix: string, ttl = 300): string {
  const lines = ['$TTL 300'];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}${i}`;
    switch (i % 4) {
      case 0:
        lines.push(`${name} ${ttl} IN A 192.0.${(i >> 8) & 255}.${i & 255}`);
        break;
      case 1:
        lines.push(`${name} ${ttl} IN AAAA 2001:db8::${i.toString(16)}`);
        break;
      case 2:
        lines.push(`${name} ${ttl} IN TXT "v=spf1 include:${name}.example.net -all"`);
        break;
      default:
        lines.push(`${name} ${ttl} IN MX 10 mail${i}.example.net.`);
    }
  }
  return `${lines.join('\n')}\n`;
}
