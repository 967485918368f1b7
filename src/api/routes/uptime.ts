// GET /domains/{domain}/uptime: the backend's availability and response times as the edges
// measure them (../../uptime), now and over the last hour by minute, the last day by hour and
// the last 30 days by day, all nodes together and each apart.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { RESOLUTIONS, type Resolution } from '../../model/uptime-periods.ts';
import type { HealthDoc } from '../../uptime/health-rules.ts';
import { uptimeJson, windowOf, windowStart, type Window } from '../../uptime/uptime-stats.ts';
import { DomainParams, errorResponses } from '../schemas.ts';
import { holdsName, ownZoneHead } from '../zone-access.ts';

const Ms = Type.Union([Type.Number(), Type.Null()]);
const Quantiles = Type.Object({ p50: Ms, p95: Ms, p99: Ms });
const figureProps = {
  availability: Type.Union([Type.Number(), Type.Null()], { description: '% of active checks passed (of requests answered when no check was made); null without measures' }),
  checks: Type.Integer(),
  checks_failed: Type.Integer(),
  requests: Type.Integer({ description: 'Requests proxied to the backend' }),
  requests_failed: Type.Integer({ description: 'Unreachable, timed out, or a 5xx counted against the backend' }),
  response_ms: Type.Object(Quantiles.properties, { description: 'Time to the backend\'s response headers (proxied requests)' }),
  connect_ms: Type.Object(Quantiles.properties, { description: 'Time to connect (active checks)' }),
};
const Figures = Type.Object(figureProps);
const PerNode = Type.Record(Type.String(), Figures, { description: 'By edge node id (0: the all-in-one process\'s own edge)' });
const WindowSchema = Type.Object({
  resolution: Type.String(),
  from: Type.String({ format: 'date-time' }),
  summary: Type.Object({ ...figureProps, nodes: PerNode }),
  periods: Type.Array(Type.Object({ start: Type.String({ format: 'date-time' }), ...figureProps, nodes: PerNode })),
});
const Uptime = Type.Object({
  domain: Type.String(),
  state: Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('failover'), Type.Literal('unknown')], {
    description: 'Down (or on failover) when at least half of the nodes heard from lately see the backend down; unknown before any report',
  }),
  since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  flapping: Type.Boolean({ description: 'Changing state too often: events are held until it settles' }),
  nodes: Type.Record(Type.String(), Type.Object({ state: Type.String(), since: Type.String({ format: 'date-time' }) })),
  minute: WindowSchema,
  hour: WindowSchema,
  day: WindowSchema,
});

export const uptimeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/domains/:domain/uptime',
    {
      schema: {
        tags: ['uptime'],
        summary: 'Read the backend\'s uptime and response times',
        description:
          'From the edges\' active checks (a TCP connect every few seconds) and the requests they proxy. `minute`: the last 60 minutes; `hour`: the last 24 hours; `day`: the last 30 days (UTC days); the current period last, still filling. Periods before the domain was created are left out.',
        params: DomainParams,
        response: { 200: Uptime, ...errorResponses(404) },
      },
    },
    async (request) => {
      const head = await ownZoneHead(app, request.params.domain, request.user.id);
      const { domain } = head;
      // A claim beside another account's (issue 26): the measures of the name are the holder's, none of them this account's.
      const holder = await holdsName(app, head);
      const now = Date.now();
      const created = Date.parse(domain.created);
      const windows = {} as Record<Resolution, Window>;
      await Promise.all(
        RESOLUTIONS.map(async (resolution) => {
          const from = windowStart(resolution, now, created);
          windows[resolution] = windowOf(resolution, holder ? await app.store.readUptime(domain.domain, resolution, from, now) : [], from, now);
        }),
      );
      const health = holder ? await app.store.getDoc<HealthDoc>('health', domain.domain) : undefined;
      return uptimeJson(domain.domain, health && health.owner === domain.ownerId ? health : undefined, windows);
    },
  );
};
