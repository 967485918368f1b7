// The cache's stages (cachelevel): before the upstream, a fresh hit is served and a miss learns
// what the proxy is to fill (edge-cache.ts, cache-rules.ts); in the response phase the backend's
// head is marked (X-Cache) and, when it may be stored, its body tapped into the entry; the fill
// lock is given back when nothing was stored.
import type { EdgeParts } from '../stage/parts.ts';
import type { ResponseFilter, WalkStage } from '../stage/stage.ts';
import type { Outcome, RequestContext } from '../stage/context.ts';
import { cacheDecision, storability } from './cache-rules.ts';
import type { Settled } from './edge-cache.ts';

/**
 * A fresh hit is served here; otherwise what the proxy is to fill, if anything. A fresh entry in
 * memory is answered at once; only disk and fill locks are waited for. A WebSocket handshake is
 * never the cache's.
 */
export function cacheLookupStage(parts: EdgeParts): WalkStage {
  const { cache } = parts;
  /** A fresh entry served (HIT), or what the proxy is to know: EXPIRED or MISS, and the fill lock. */
  const found = (ctx: RequestContext, settled: Settled): Outcome | undefined => {
    const { req, res, domain } = ctx;
    if (settled.entry && settled.fresh) {
      // A small hit the bucket can pay for at once goes out directly.
      const sink = ctx.responseSink();
      const direct = sink && settled.entry.body !== undefined && parts.bandwidth.tryTake(domain.domain, domain.bwlimit, settled.entry.size);
      const status = cache.serve(settled.entry, 'HIT', req, res, direct ? undefined : sink);
      return { status, cache: 'HIT', domain: domain.domain, bytes: settled.entry.size };
    }
    ctx.cacheStatus = settled.entry ? 'EXPIRED' : 'MISS';
    ctx.lock = settled.lock;
    return undefined;
  };
  return {
    phase: 'upstream',
    name: 'cache → HIT, or a fill for the proxy',
    run(ctx) {
      if (ctx.upgrade) return undefined;
      const { req, domain } = ctx;
      // Keyed by the Host the backend receives (the port included): an answer built from it is only
      // ever served to requests that send the same.
      const decision = cacheDecision(domain.cachelevel, req.method ?? 'GET', ctx.scheme, String(req.headers.host ?? ctx.host), ctx.url, req.headers);
      if (!decision.cache) return undefined;
      ctx.cacheKey = decision.key;
      const hit: Settled = cache.lookup(domain.domain, ctx.cacheKey, req.headers);
      if (hit.fresh) return found(ctx, hit);
      // A Range or HEAD on a miss passes through (the whole object is stored when asked for whole).
      const fills = req.method === 'GET' && req.headers.range === undefined;
      return cache.settle(domain.domain, ctx.cacheKey, req.headers, hit, fills).then((settled) => found(ctx, settled));
    },
  };
}

/** The backend's head: X-Cache, and the fill when this request holds the lock and the answer may be stored. */
export function cacheFillStage(parts: EdgeParts): ResponseFilter {
  return {
    phase: 'response',
    name: 'X-Cache; the cache filled on the way when the answer may be stored',
    head(ctx, status, headers) {
      headers['x-cache'] = ctx.cacheStatus;
      const { lock, req, domain } = ctx;
      if (!lock) return undefined;
      const verdict = storability({ method: req.method ?? 'GET', url: ctx.url, headers: req.headers }, status, headers);
      if (!verdict.store) return undefined;
      ctx.filling = true;
      return parts.cache.beginFill(domain.domain, ctx.cacheKey, req.headers, lock, { status, headers, ttlMs: verdict.ttlMs, vary: verdict.vary }, domain.cachelargefiles);
    },
  };
}

/** The fill lock given back when the answer was not stored (the next request for the key fetches). */
export function cacheLockReturnStage(): WalkStage {
  return {
    phase: 'response',
    name: 'fill lock given back when nothing is stored',
    run(ctx) {
      if (!ctx.filling) ctx.lock?.release();
      return undefined;
    },
  };
}
