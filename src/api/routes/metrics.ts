// GET /metrics: Prometheus text format — API request counts plus whatever else the process
// runs (the DNS server in the serve role). Outside authentication, like /healthz; expose the API
// port only where scrapers may reach it.
import type { FastifyPluginAsync } from 'fastify';

export interface MetricsOptions {
  /** Other parts' metrics, appended to the API's. */
  extra?: () => string | Promise<string>;
}

export const metricsRoutes: FastifyPluginAsync<MetricsOptions> = async (app, options) => {
  const requests = new Map<string, number>();
  app.addHook('onResponse', async (request, reply) => {
    const key = `${request.method} ${reply.statusCode}`;
    requests.set(key, (requests.get(key) ?? 0) + 1);
  });
  app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => {
    const lines = ['# HELP palisade_api_requests_total HTTP requests answered, by method and status.', '# TYPE palisade_api_requests_total counter'];
    for (const [key, n] of requests) {
      const [method, status] = key.split(' ');
      lines.push(`palisade_api_requests_total{method="${method}",status="${status}"} ${n}`);
    }
    const text = `${lines.join('\n')}\n${(await options.extra?.()) ?? ''}`;
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(text);
  });
};
