// A request body's deadline (body-pace.ts), armed when the request starts, whichever stage holds
// the request when it runs out: slow POSTs held backend pools. Overdue → 408 and the connection ends.
import type { EdgeParts } from '../stage/parts.ts';
import type { BodyWatchStage } from '../stage/stage.ts';
import { page } from '../stage/answer.ts';
import { PAGES } from '../pages.ts';
import { DEFAULT_BODY_PACE, watchBodyPace } from './body-pace.ts';

export function bodyPaceStage(parts: EdgeParts): BodyWatchStage {
  const options = parts.options.bodyPace ?? DEFAULT_BODY_PACE;
  return {
    phase: 'body',
    name: 'body past its deadline (below its least pace, or past its maximum) → 408',
    watch(ctx) {
      const { req, res } = ctx;
      // Kept now: a request's socket is gone from it once the connection has closed.
      const socket = req.socket;
      return watchBodyPace(req, options, ctx.bodyBytesRead, (why) => {
        parts.metrics.blocked(why === 'slow' ? 'slow-body' : 'body-deadline');
        if (res.headersSent) return void socket.destroy();
        page(res, 408, PAGES.requestTimeout(), { connection: 'close' });
        res.once('finish', () => socket.destroy());
        setTimeout(() => socket.destroy(), 1000).unref();
      });
    },
  };
}
