// GET /metrics: Prometheus text format — API request counts plus whatever else the process
// runs (the DNS server in the serve role). For the operator only: with PALISADE_METRICS_TOKEN set,
// to `Authorization: Bearer <token>` (401 otherwise, counted against the address like any failed
// authentication); unset, to loopback clients only (403 otherwise), so a single machine's
// Prometheus works without setting anything. A loopback request that a proxy on the same machine
// passed on (it carries X-Forwarded-For, Forwarded or X-Real-IP) is not the operator's: 403.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import { family, labelled, type MetricsSnapshot } from '../../common/metrics/family.ts';
import { PROMETHEUS_CONTENT_TYPE, prometheusText } from '../../common/metrics/prometheus-text.ts';

export interface MetricsOptions {
  /** Other parts' figures, written with the API's. */
  extra?: () => MetricsSnapshot | Promise<MetricsSnapshot>;
  /** The operator's bearer token; unset: loopback clients only. */
  token?: string;
}

/** 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export function isLoopback(ip: string): boolean {
  return /^(?:::ffff:)?127\.\d+\.\d+\.\d+$/i.test(ip) || ip === '::1';
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

const API_REQUESTS = family({ name: 'palisade_api_requests_total', type: 'counter', help: 'HTTP requests answered, by method and status.', labels: ['method', 'status'] });

const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'];

function checkOperator(request: FastifyRequest, reply: FastifyReply, tokenHash: Buffer | undefined): void {
  if (tokenHash) {
    const given = /^Bearer ([\x21-\x7e]{1,256})$/.exec(request.headers.authorization ?? '')?.[1];
    // Compared as hashes, so the comparison takes the same time whatever the length given.
    if (!given || !timingSafeEqual(sha256(given), tokenHash)) {
      void reply.header('www-authenticate', 'Bearer realm="palisade-metrics"');
      throw new ApiError('UNAUTHORIZED', 'send the operator token (PALISADE_METRICS_TOKEN) as "Authorization: Bearer …"');
    }
    return;
  }
  if (!isLoopback(request.ip) || PROXY_HEADERS.some((h) => request.headers[h] !== undefined)) {
    throw new ApiError('FORBIDDEN', '/metrics answers loopback clients only; set PALISADE_METRICS_TOKEN to scrape it from elsewhere with "Authorization: Bearer …"');
  }
}

export const metricsRoutes: FastifyPluginAsync<MetricsOptions> = async (app, options) => {
  const tokenHash = options.token === undefined ? undefined : sha256(options.token);
  const requests = new Map<string, number>();
  app.addHook('onResponse', async (request, reply) => {
    const key = `${request.method} ${reply.statusCode}`;
    requests.set(key, (requests.get(key) ?? 0) + 1);
  });
  // With a token, the route checks a credential: a request carrying one is charged to the
  // address only when it fails (see plugins/rate-limit.ts); without, every request is.
  app.get('/metrics', { schema: { hide: true }, config: { credentials: tokenHash !== undefined } }, async (request, reply) => {
    checkOperator(request, reply, tokenHash);
    const own = labelled(API_REQUESTS, [...requests].map(([key, n]) => [key.split(' '), n] as const));
    return reply.type(PROMETHEUS_CONTENT_TYPE).send(prometheusText([own, ...((await options.extra?.()) ?? [])]));
  });
};
