// The metrics stage: counts every response the stages inside it made (by transport, rcode and
// type) and its latency from the packet's arrival, and the packets they chose not to answer.
// It sits inside the rate limit (a response the limit drops was still answered, and counted
// apart in rate_limited_total) and outside the cache and the engine, so it sees both paths.
import type { DnsStage } from '../chain/stage.ts';
import type { DnsMetrics } from './dns-metrics.ts';

export function metricsStage(metrics: DnsMetrics): DnsStage {
  return {
    name: 'metrics',
    cached(ctx, next) {
      next(ctx);
      if (ctx.answered && ctx.response) metrics.observe(ctx.response, performance.now() - ctx.started, ctx.transport, ctx.qtype);
    },
    full(ctx, next) {
      next(ctx);
      if (ctx.response) metrics.observe(ctx.response, performance.now() - ctx.started, ctx.transport, ctx.qtype);
      else metrics.dropped++;
    },
  };
}
