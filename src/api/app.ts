// Builds the control-plane API. It never listens: server.ts starts it, and tests may inject.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { Store } from '../store/types.ts';
import { authPlugin } from './plugins/auth.ts';
import { openapiPlugin } from './plugins/openapi.ts';
import { rateLimitPlugin } from './plugins/rate-limit.ts';
import { requestLogPlugin } from './plugins/request-log.ts';
import { problem, sendProblem, toProblem } from './problem.ts';
import { domainRoutes } from './routes/domains.ts';
import { geoRoutes } from './routes/geo.ts';
import { healthRoutes } from './routes/health.ts';
import { ipListRoutes } from './routes/iplists.ts';
import { meRoutes } from './routes/me.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { nameserverRoutes } from './routes/nameservers.ts';
import { nodeRoutes } from './routes/nodes.ts';
import { recordRoutes } from './routes/records.ts';
import { syncRoutes } from './routes/sync.ts';
import { parseJsonBody, validatorCompiler } from './validation.ts';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
    config: Config;
  }
}

export interface AppOptions {
  store: Store;
  config: Config;
  logger: Logger | false;
  /** Metrics of other parts of the process, served with the API's at /metrics. */
  metrics?: () => string;
}

export async function buildApp({ store, config, logger, metrics }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: (logger || undefined) as FastifyBaseLogger | undefined,
    bodyLimit: config.api.bodyLimit,
    // request-log.ts writes one line per request, sampling floods of rejections.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 300 },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  app.decorate('store', store);
  app.decorate('config', config);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A failed authentication counts against the client's address; past its limit, 429.
    const limited = error instanceof ApiError && error.code === 'UNAUTHORIZED' ? app.rateLimits.chargeFailure(request) : undefined;
    const body = toProblem(limited ?? error);
    if (body.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, body);
  });
  app.setNotFoundHandler((request, reply) => {
    // Probing for routes counts like a failed authentication.
    const limited = app.rateLimits.chargeFailure(request);
    return sendProblem(reply, limited ? toProblem(limited) : problem('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`));
  });

  await app.register(requestLogPlugin);
  await app.register(rateLimitPlugin, config.api.rateLimit);
  await app.register(openapiPlugin);
  await app.register(healthRoutes);
  // Registered at the root so its request counter sees every route.
  await app.register(fp(metricsRoutes), { extra: metrics });
  // Consumers (name servers) authenticate with their own tokens, in their own scope.
  await app.register(syncRoutes);
  await app.register(async (authed) => {
    await authed.register(authPlugin);
    await authed.register(meRoutes);
    await authed.register(domainRoutes);
    await authed.register(recordRoutes);
    await authed.register(nameserverRoutes);
    await authed.register(ipListRoutes);
    await authed.register(nodeRoutes);
    await authed.register(geoRoutes);
  });
  return app as unknown as FastifyInstance;
}
