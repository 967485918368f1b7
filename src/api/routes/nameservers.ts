// activatens / deactivatens: switch whether our name servers answer for a domain. GET, as the
// service's API has always defined them, and POST, for clients that rightly send state changes
// as POST; repeating one is harmless (no new revision). HEAD (which Fastify would otherwise run
// as the GET) only reads: a link checker or a cache probing the URL must never change anything.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DomainParams, errorResponses } from '../schemas.ts';
import { ownZoneHead, zoneName } from '../zone-access.ts';
import { followSsl } from './certificates.ts';

const NsState = Type.Object({
  domain: Type.String(),
  ns_active: Type.Boolean(),
  nameservers: Type.Array(Type.String(), { description: 'Delegate the domain to these at your registrar (a pending claim is answered only once proven: see `verification` of GET /domains/{domain})' }),
  revision: Type.Integer(),
});

export const nameserverRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const [action, active] of [['activatens', true], ['deactivatens', false]] as const) {
    const path = `/domains/:domain/${action}`;
    const summary = active ? 'Our name servers start answering for the domain' : 'Our name servers stop answering for the domain (REFUSED)';
    const schema = { tags: ['name servers'], params: DomainParams, response: { 200: NsState, ...errorResponses(404) } };
    const change = async (request: { params: { domain: string }; user: { id: number } }) => {
      const name = zoneName(request.params.domain);
      const zone = await app.store.updateZone(name, request.user.id, (z) =>
        z.domain.ns_active === active ? undefined : { domain: { ...z.domain, ns_active: active } },
      );
      // DNS-01 becomes possible (or HTTP-01 the only way): a waiting certificate task goes now.
      if (zone.domain.ssl) await followSsl(app, zone.domain);
      return { domain: name, ns_active: zone.domain.ns_active, nameservers: [...(zone.domain.claim?.nameservers ?? app.config.nameservers)], revision: zone.domain.revision };
    };
    app.get(path, { exposeHeadRoute: false, schema: { ...schema, summary } }, change);
    app.post(path, { schema: { ...schema, summary: `${summary} (same as GET)` } }, change);
    app.head(path, { schema: { tags: ['name servers'], params: DomainParams, summary: 'Changes nothing: 200 when the domain is yours, else 404' } }, async (request, reply) => {
      await ownZoneHead(app, request.params.domain, request.user.id);
      return reply.code(200).send();
    });
  }
};
