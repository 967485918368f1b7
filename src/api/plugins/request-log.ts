// One log line per request (Fastify's own two lines per request are turned off). Rejections that
// an unauthenticated flood produces (401, 429, and 404 for paths that are no route) are sampled: the first few per client address and
// minute are logged, the rest counted and reported in one line per address and minute, so a
// flood cannot fill the disk with log lines. Memory is bounded by the number of addresses kept.
// Successful answers of the key-free routes (probes, /metrics, the API's documents) are sampled
// too: the first of each route and then one in 100, each such line saying `sampled: 100`; their
// errors are all logged.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimitAddress } from '../client-address.ts';

const SAMPLED_STATUSES = new Set([401, 429]);
const LOGGED_PER_WINDOW = 5;
const WINDOW_MS = 60_000;
const MAX_ADDRESSES = 10_000;
/** One successful answer in this many of a key-free route is logged. */
export const PUBLIC_SAMPLE = 100;

/** Key-free routes whose successes are sampled (as Fastify names them). */
const isPublicRoute = (url: string | undefined) => url !== undefined && (url === '/healthz' || url === '/readyz' || url === '/metrics' || url === '/openapi.json' || url === '/docs' || url.startsWith('/docs/') || url === '/console' || url.startsWith('/console/'));

export const requestLogPlugin = fp(
  async (app: FastifyInstance) => {
    let suppressed = new Map<string, number>();
    // Successful answers per key-free route (a fixed handful of routes).
    const publicAnswers = new Map<string, number>();
    let overflow = 0;
    const flush = () => {
      for (const [address, count] of suppressed) {
        if (count > LOGGED_PER_WINDOW) app.log.warn({ address, rejected: count, logged: LOGGED_PER_WINDOW, windowSeconds: WINDOW_MS / 1000 }, 'rejected requests from one address (not each logged)');
      }
      if (overflow > 0) app.log.warn({ rejected: overflow, windowSeconds: WINDOW_MS / 1000 }, 'rejected requests from addresses past the sampling table (not logged)');
      suppressed = new Map();
      overflow = 0;
    };
    const timer = setInterval(flush, WINDOW_MS);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      flush();
    });

    app.addHook('onResponse', async (request, reply) => {
      const status = reply.statusCode;
      // Requests for no route at all (404 without a route) are what scanners send: sampled too.
      if (SAMPLED_STATUSES.has(status) || request.is404) {
        const address = rateLimitAddress(request.ip);
        const seen = suppressed.get(address);
        if (seen === undefined && suppressed.size >= MAX_ADDRESSES) {
          overflow++;
          return;
        }
        suppressed.set(address, (seen ?? 0) + 1);
        if ((seen ?? 0) >= LOGGED_PER_WINDOW) return;
      }
      let sampled: number | undefined;
      const route = request.routeOptions.url;
      if (status < 400 && !request.is404 && isPublicRoute(route)) {
        const n = publicAnswers.get(route!) ?? 0;
        publicAnswers.set(route!, n + 1);
        if (n % PUBLIC_SAMPLE !== 0) return;
        sampled = PUBLIC_SAMPLE;
      }
      // The account behind an authenticated request: writes by user id are the audit trail.
      const user = (request as { user?: { id: number } | null }).user;
      const line = {
        ...(user && { userId: user.id }),
        req: { method: request.method, url: request.url, remoteAddress: request.ip },
        res: { statusCode: status },
        responseTime: Math.round(reply.elapsedTime * 100) / 100,
        ...(sampled && { sampled }),
      };
      if (status >= 500) request.log.error(line, 'request completed');
      else request.log.info(line, 'request completed');
    });
  },
  { name: 'palisade-request-log' },
);
