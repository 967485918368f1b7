// Domain fronting: over TLS, Host must name the domain the handshake (SNI) was for (fronting.ts).
import type { EdgeParts } from '../stage/parts.ts';
import type { WalkStage } from '../stage/stage.ts';
import { reply } from '../stage/answer.ts';
import { frontingRefusal } from './fronting.ts';

export function frontingStage(parts: EdgeParts): WalkStage {
  return {
    phase: 'request head',
    name: 'domain fronting (Host of another domain than the SNI) → 421',
    run(ctx) {
      const fronted = frontingRefusal(parts.state.routes, ctx.connection, ctx.route);
      if (!fronted) return undefined;
      reply(ctx.res, 421, 'text/plain; charset=utf-8', fronted);
      return { status: 421, via: 'sni-mismatch' };
    },
  };
}
