// activatens / deactivatens: switch whether our name servers answer for a domain. GET, as the
// service's API has always defined them; repeating one is harmless (no new revision).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DomainParams, errorResponses } from '../schemas.ts';
import { zoneName } from '../zone-access.ts';

const NsState = Type.Object({
  domain: Type.String(),
  ns_active: Type.Boolean(),
  nameservers: Type.Array(Type.String(), { description: 'Delegate the domain to these at your registrar' }),
  revision: Type.Integer(),
});

export const nameserverRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const [action, active] of [['activatens', true], ['deactivatens', false]] as const) {
    app.get(
      `/domains/:domain/${action}`,
      {
        schema: {
          tags: ['name servers'],
          summary: active ? 'Our name servers start answering for the domain' : 'Our name servers stop answering for the domain (REFUSED)',
          params: DomainParams,
          response: { 200: NsState, ...errorResponses(404) },
        },
      },
      async (request) => {
        const name = zoneName(request.params.domain);
        const zone = await app.store.updateZone(name, request.user.id, (z) =>
          z.domain.ns_active === active ? undefined : { ...z, domain: { ...z.domain, ns_active: active } },
        );
        return { domain: name, ns_active: zone.domain.ns_active, nameservers: [...app.config.nameservers], revision: zone.domain.revision };
      },
    );
  }
};
