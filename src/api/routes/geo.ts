// GET /geo/targets: the GeoNames IDs a record's `target` may hold — 7 continents and 250
// countries with their codes and names — so nobody has to guess an ID.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { geoTargets } from '../../model/geo-targets.ts';
import { linkNext, pageByPosition, pageRequest } from '../paging.ts';
import { errorResponses, PageQuery, pagedList } from '../schemas.ts';

const GeoTarget = Type.Object({
  id: Type.Integer({ description: 'GeoNames ID, as MaxMind databases carry it' }),
  kind: Type.Union([Type.Literal('country'), Type.Literal('continent')]),
  code: Type.String({ description: 'ISO 3166-1 alpha-2 (countries) or the continent code' }),
  name: Type.String(),
  continent_id: Type.Optional(Type.Integer({ description: "A country's continent" })),
});

export const geoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/geo/targets',
    {
      schema: {
        tags: ['geo'],
        summary: 'The countries and continents a DNS record can target',
        querystring: Type.Object(
          {
            ...PageQuery,
            kind: Type.Optional(Type.Union([Type.Literal('country'), Type.Literal('continent')])),
            code: Type.Optional(Type.String({ minLength: 2, maxLength: 2, description: 'ISO code, any case' })),
            q: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Part of the English name, any case' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: pagedList(GeoTarget), ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { kind, code, q } = request.query;
      const needle = q?.toLowerCase();
      const matching = geoTargets
        .filter((t) => (kind === undefined || t.kind === kind) && (code === undefined || t.code === code.toUpperCase()) && (needle === undefined || t.name.toLowerCase().includes(needle)))
        .map((t) => ({ id: t.id, kind: t.kind, code: t.code, name: t.name, ...(t.continentId !== undefined && { continent_id: t.continentId }) }));
      const page = pageRequest(request.query);
      return linkNext(request, reply, pageByPosition(matching, page.limit, page.cursor));
    },
  );
};
