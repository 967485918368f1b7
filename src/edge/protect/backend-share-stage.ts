// The client's (and, on an address other accounts name too, the account's) share of the backend
// address a request goes to (backend-shares.ts; the pool is everyone's): taken here, in the one
// place, for proxied requests and WebSocket upgrades alike, on the address the backend stage
// chose; given back when the exchange is over. A cache hit needs none (answered before).
import type { EdgeParts } from '../stage/parts.ts';
import type { WalkStage } from '../stage/stage.ts';
import { refuse } from '../stage/answer.ts';
import { PAGES } from '../pages.ts';

export function backendShareStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'upstream',
    name: "client's share of the backend → 429",
    run(ctx) {
      const taken = parts.backendShares.take(ctx.backendKey, ctx.domain.ownerId, ctx.client);
      if (taken.refused) {
        ctx.lock?.release();
        const reason = taken.refused === 'client' ? 'backend-share' : 'backend-share-account';
        return refuse(parts.metrics, ctx.res, ctx.domain.domain, reason, (ref) => PAGES.rateLimited(ctx.host, ref), 429, { 'retry-after': '1' });
      }
      // An open WebSocket holds a backend connection: it counts in the client's share until it closes.
      (ctx.upgrade?.socket ?? ctx.res).once('close', taken.release);
      ctx.releaseShare = taken.release;
      return undefined;
    },
  };
}

/** Response phase: the share given back as soon as the backend's exchange is over. */
export function backendShareReturnStage(): WalkStage {
  return {
    phase: 'response',
    name: "client's share of the backend given back",
    run(ctx) {
      ctx.releaseShare?.();
      return undefined;
    },
  };
}
