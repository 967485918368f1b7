// Builds the control-plane API. It never listens: server.ts starts it, and tests may inject.
import { randomUUID } from 'node:crypto';
import { lingerBeforeClose } from '../common/lingering-close.ts';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { Store } from '../store/types.ts';
import { SecretBox } from '../certs/secret-box.ts';
import { TaskBook } from '../certs/task-book.ts';
import { Notifications } from '../notify/notifications.ts';
import { Ownership } from '../ownership/ownership.ts';
import { DnssecParent } from '../ownership/dnssec-parent.ts';
import { createLogger } from '../log.ts';
import { authPlugin } from './plugins/auth.ts';
import { openapiPlugin } from './plugins/openapi.ts';
import { rateLimitPlugin } from './plugins/rate-limit.ts';
import { requestLogPlugin } from './plugins/request-log.ts';
import { problem, sendProblem, tooLarge, toProblem, unsupportedType } from './problem.ts';
import { domainRoutes } from './routes/domains.ts';
import { dnssecRoutes } from './routes/dnssec.ts';
import { geoRoutes } from './routes/geo.ts';
import { healthRoutes } from './routes/health.ts';
import { ipListRoutes } from './routes/iplists.ts';
import { meRoutes } from './routes/me.ts';
import { metricsRoutes } from './routes/metrics.ts';
import type { MetricsSnapshot } from '../common/metrics/family.ts';
import { nameserverRoutes } from './routes/nameservers.ts';
import { nodeRoutes } from './routes/nodes.ts';
import { recordRoutes } from './routes/records.ts';
import { bulkRecordRoutes } from './routes/records-bulk.ts';
import { zoneFileRoutes } from './routes/zonefile.ts';
import { syncRoutes } from './routes/sync.ts';
import { edgeSyncRoutes } from './routes/edge-sync.ts';
import { certificateRoutes, followSsl } from './routes/certificates.ts';
import { uptimeRoutes } from './routes/uptime.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { parseJsonBody, validatorCompiler } from './validation.ts';
import { operationId, RouteMethods } from './route-methods.ts';
import { Type } from 'typebox';
import { consoleRoutes } from './plugins/console.ts';

declare module 'fastify' {
  interface FastifyInstance {
    store: Store;
    config: Config;
    /** Seals and opens private keys at rest (undefined without PALISADE_SECRET_KEY). */
    secrets: SecretBox | undefined;
    /** Certificate tasks (see ../certs). */
    tasks: TaskBook;
    /** Events, webhooks, the domains' health and the edges' reports (see ../notify, ../uptime). */
    notify: Notifications;
    /** Claims and their proof (see ../ownership). */
    ownership: Ownership;
    /** The parent's DS, for the DNSSEC states (see ../ownership/dnssec-parent.ts). */
    dnssecParent: DnssecParent;
  }
}

export interface AppOptions {
  store: Store;
  config: Config;
  logger: Logger | false;
  /** Metrics of other parts of the process, served with the API's at /metrics. */
  metrics?: () => MetricsSnapshot | Promise<MetricsSnapshot>;
  /** The certificate tasks the process's worker follows (a new book when the API runs alone, as in tests). */
  tasks?: TaskBook;
  /** The process's notification parts (a new set when the API runs alone, as in tests). */
  notify?: Notifications;
  /** Set: the API speaks HTTPS with this certificate and key (PEM). */
  https?: { cert: string; key: string };
}

/** The API's view of claims: a proof orders certificates at once, a release forgets the claim's tasks and measures. */
function ownershipOf(app: FastifyInstance, logger: Logger | false): Ownership {
  return new Ownership(app.store, app.config, logger ? logger.child({ component: 'ownership' }) : createLogger('silent'), app.notify.events, {
    proven: (domain) => followSsl(app, domain),
    released: async (domain, held) => {
      await app.tasks.forget(domain.ownerId, domain.domain);
      if (held) await app.notify.forgetDomain(domain.domain);
    },
  });
}

export async function buildApp({ store, config, logger, metrics, tasks, notify, https }: AppOptions): Promise<FastifyInstance> {
  const app = fastifyFor(config, logger, https);
  app.setValidatorCompiler(validatorCompiler);
  // JSON only: text/plain (which Fastify parses by default) and forms get 415 like any other type.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  app.decorate('store', store);
  app.decorate('config', config);
  app.decorate('secrets', config.certs.secretKey ? new SecretBox(config.certs.secretKey) : undefined);
  app.decorate('tasks', tasks ?? new TaskBook(store, config.certs.retryBaseMs));
  app.decorate('notify', notify ?? new Notifications(store, logger ? logger.child({ component: 'notify' }) : createLogger('silent')));
  app.decorate('ownership', ownershipOf(app, logger));
  app.decorate('dnssecParent', new DnssecParent(app.store, app.config, logger ? logger.child({ component: 'dnssec' }) : createLogger('silent')));

  answerWithProblems(app, config);
  app.addHook('onSend', async (request, reply, payload) => {
    void reply.header('x-request-id', request.id);
    // Answered before the body was read (413, 401, 415): let the client finish sending and read it.
    lingerBeforeClose(request.raw, reply.raw);
    // JSON ends with a newline, so `curl` leaves the shell's prompt on a line of its own.
    if (typeof payload === 'string' && payload.length > 0 && !payload.endsWith('\n') && /json/.test(String(reply.getHeader('content-type') ?? ''))) return `${payload}\n`;
    return payload;
  });
  await registerRoutes(app, config, metrics);
  return app;
}

/** The Fastify instance with the API's server options (errors before routing answered as problems too, request ids, proxies trusted). */
function fastifyFor(config: Config, logger: Logger | false, https: AppOptions['https']): FastifyInstance {
  return Fastify({
    // Router errors (a path parameter past its length, a malformed URL) as problem documents too.
    frameworkErrors: (error, _request, reply) => {
      const code = (error as { code?: string }).code;
      void sendProblem(reply, code === 'FST_ERR_MAX_PARAM_LENGTH' ? problem('URI_TOO_LONG', 'a path segment is longer than this service accepts') : problem('BAD_REQUEST', error.message));
    },
    // Errors Node's HTTP parser meets before Fastify (headers or URL past 16 KiB): problem+json.
    clientErrorHandler: (error, socket) => {
      const tooLarge = (error as { code?: string }).code === 'HPE_HEADER_OVERFLOW';
      const body = JSON.stringify(problem(tooLarge ? 'HEADERS_TOO_LARGE' : 'BAD_REQUEST', tooLarge ? 'the request line and headers exceed 16 KiB (a URL that long is refused too)' : 'the request could not be parsed as HTTP'));
      if (socket.writable) {
        socket.end(
          `HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      } else socket.destroy();
    },
    loggerInstance: (logger || undefined) as FastifyBaseLogger | undefined,
    bodyLimit: config.api.bodyLimit,
    // request-log.ts writes one line per request, sampling floods of rejections.
    logController: new LogController({ disableRequestLogging: true }),
    // A client's X-Request-Id (sane ones only) names the request in every log line and comes
    // back in the response; otherwise one is made.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\x21-\x7e]{1,128}$/.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 300 },
    // Behind a TLS terminator or load balancer: its X-Forwarded-For names the client (rate limits,
    // logs, the loopback-only /metrics), from these addresses only.
    ...(config.api.trustedProxies.length > 0 && { trustProxy: config.api.trustedProxies }),
    ...(https && { https }),
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as FastifyInstance;
}

/** Every error as a problem document: a route's error, an unknown path (404) or method (405 with Allow), and a query parameter no route knows. */
function answerWithProblems(app: FastifyInstance, config: Config): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A failed authentication counts against the client's address; past its limit, 429.
    const limited = error instanceof ApiError && error.code === 'UNAUTHORIZED' ? app.rateLimits.chargeFailure(request) : undefined;
    const body =
      error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
        ? tooLarge(request.routeOptions.bodyLimit ?? config.api.bodyLimit)
        : error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? unsupportedType(request.headers['content-type'], request.routeOptions.url?.endsWith('/zonefile') ? 'text/dns' : 'application/json')
          : toProblem(limited ?? error);
    if (body.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, body);
  });
  // Every route's path and methods, so an unknown method on a known path is 405 with Allow.
  const routes = new RouteMethods();
  app.addHook('onRoute', (route) => routes.add(route.url, route.method));
  // Every route refuses query parameters it does not know: routes without a query schema get an
  // empty one (the documentation pages and their assets excepted).
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) return;
    if (!route.schema?.querystring) route.schema = { ...route.schema, querystring: Type.Object({}, { additionalProperties: false }) };
    // Stable operation ids for generated clients: method and path ("getDomainsByDomainDnsrecords").
    const method = Array.isArray(route.method) ? route.method[0]! : route.method;
    (route.schema as { operationId?: string }).operationId ??= operationId(method, route.url);
  });
  app.setNotFoundHandler((request, reply) => {
    // Probing for routes counts like a failed authentication.
    const limited = app.rateLimits.chargeFailure(request);
    if (limited) return sendProblem(reply, toProblem(limited));
    const path = request.url.split('?')[0]!;
    const allowed = routes.allowed(path);
    if (allowed.length > 0) {
      void reply.header('allow', allowed.join(', '));
      return sendProblem(reply, problem('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`));
    }
    return sendProblem(reply, problem('NOT_FOUND', `no route ${request.method} ${path}`));
  });
}

/** The plugins and routes, each in its scope: the consumers' with their own tokens, the customers' behind the API key. */
async function registerRoutes(app: FastifyInstance, config: Config, metrics: AppOptions['metrics']): Promise<void> {
  await app.register(requestLogPlugin);
  await app.register(rateLimitPlugin, config.api.rateLimit);
  await app.register(openapiPlugin);
  await app.register(healthRoutes);
  // The customer console's static files (key-free: the page asks the API with the key typed into it).
  await app.register(consoleRoutes);
  // Registered at the root so its request counter sees every route.
  await app.register(fp(metricsRoutes), { extra: metrics, token: config.api.metricsToken });
  // Consumers (name servers) authenticate with their own tokens, in their own scope.
  await app.register(syncRoutes);
  await app.register(edgeSyncRoutes);
  await app.register(async (authed) => {
    await authed.register(authPlugin);
    await authed.register(meRoutes);
    await authed.register(domainRoutes);
    await authed.register(dnssecRoutes);
    await authed.register(recordRoutes);
    await authed.register(bulkRecordRoutes);
    await authed.register(zoneFileRoutes);
    await authed.register(certificateRoutes);
    await authed.register(uptimeRoutes);
    await authed.register(webhookRoutes);
    await authed.register(nameserverRoutes);
    await authed.register(ipListRoutes);
    await authed.register(nodeRoutes);
    await authed.register(geoRoutes);
  });
}
