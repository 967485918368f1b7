// The rate-limit stage: on the way out, a UDP response goes through response-rate limiting (sent,
// slipped as TC=1, or dropped), unless the query carried a valid server cookie: its sender proved
// it receives answers at its address, so it is no spoofed victim. TCP is never limited here.
import type { DnsStage, Hook } from '../chain/stage.ts';
import { slipResponse, type ResponseRateLimiter } from './rate-limit.ts';

export function rateLimitStage(limiter: ResponseRateLimiter | undefined): DnsStage {
  if (!limiter) return { name: 'rate-limit', cached: null, full: null };
  const hook: Hook = (ctx, next) => {
    next(ctx);
    const response = ctx.response;
    if (!response || ctx.transport !== 'udp' || ctx.cookie?.valid) return;
    const decision = limiter.decide(ctx.client.address, response);
    if (decision === 'drop') ctx.response = undefined;
    else if (decision === 'slip') ctx.response = slipResponse(response);
  };
  return { name: 'rate-limit', cached: hook, full: hook };
}
