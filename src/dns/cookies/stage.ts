// The cookie stage (RFC 7873, RFC 9018): on the way in, our reply to the query's cookie, made once
// per query, so later stages can use it: the rate limit lets a valid cookie through, the answer
// cache and the engine put the reply in the response.
import type { QueryContext } from '../chain/context.ts';
import type { DnsStage } from '../chain/stage.ts';
import type { DnsMetrics } from '../metrics/dns-metrics.ts';
import type { ServerCookies } from './server-cookies.ts';

export function cookieStage(cookies: ServerCookies | undefined, metrics: DnsMetrics): DnsStage {
  if (!cookies) return { name: 'cookies', cached: null, full: null };
  const reply = (ctx: QueryContext, client: Uint8Array, server: Uint8Array | undefined): void => {
    const made = cookies.reply(client, server, ctx.client.address);
    ctx.cookie = made;
    metrics.cookiesIssued++;
    if (made.valid) metrics.cookiesValid++;
  };
  return {
    name: 'cookies',
    cached(ctx, next) {
      const at = ctx.fast?.cookie;
      if (at) {
        const { packet } = ctx;
        reply(ctx, packet.subarray(at.at, at.at + 8), at.length > 8 ? packet.subarray(at.at + 8, at.at + at.length) : undefined);
      }
      next(ctx);
    },
    full(ctx, next) {
      // Made on the cached path already when the cache could not answer.
      if (!ctx.cookie) {
        const parsed = ctx.parsed;
        const cookie = parsed.kind === 'query' ? parsed.query.edns?.cookie : parsed.kind === 'error' ? parsed.opt?.cookie : undefined;
        if (cookie) reply(ctx, cookie.client, cookie.server);
      }
      next(ctx);
    },
  };
}
