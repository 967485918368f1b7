// /domains/ and /domains/{domain}: register, list, read, change and remove domains.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { ApiError, invalidFields, notFound } from '../../errors.ts';
import { registrationProblem } from '../../model/registrable.ts';
import {
  checkDomainName,
  checkDomainSettings,
  Domain,
  DOMAIN_DEFAULTS,
  DomainCreate,
  DomainPatch,
  type DomainSettings,
  type DomainState,
} from '../../model/domain.ts';
import type { ZoneHead } from '../../store/types.ts';
import { linkNext, pageRequest } from '../paging.ts';
import { bodySchemaErrors, withoutFields } from '../validation.ts';
import { DomainParams, errorResponses, PageQuery, pagedList } from '../schemas.ts';
import { checkNodesExist, ownZoneHead, zoneName } from '../zone-access.ts';
import { followSsl } from './certificates.ts';

export function renderDomain(zone: ZoneHead, config: Config) {
  const { ownerId: _owner, nsRevision: _served, ...domain } = zone.domain;
  // Domains stored before a setting existed show its default.
  return { ...DOMAIN_DEFAULTS, ...domain, failover_active: domain.failover_active ?? false, nameservers: [...config.nameservers], records: zone.recordCount };
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const domainRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['domains'];

  app.get(
    '/domains',
    {
      schema: {
        tags,
        summary: 'List your domains',
        querystring: Type.Object({ ...PageQuery, tag: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false }),
        response: { 200: pagedList(Domain), ...errorResponses() },
      },
    },
    async (request, reply) => {
      const page = await app.store.listZones(request.user.id, pageRequest(request.query), request.query.tag);
      return linkNext(request, reply, page).map((z) => renderDomain(z, app.config));
    },
  );

  app.post(
    '/domains',
    {
      attachValidation: true,
      schema: {
        tags,
        summary: 'Register a domain',
        description: 'The domain is served by our name servers once activated (GET /domains/{domain}/activatens).',
        body: DomainCreate,
        response: { 201: Domain, ...errorResponses(409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      // Schema errors and value checks answered together: every offending field at once.
      const { errors, bad } = bodySchemaErrors(request);
      const body = withoutFields(request.body, bad);
      const name = typeof body.domain === 'string' ? checkDomainName(body.domain, errors) : '';
      const { domain: _d, ...input } = body;
      const settings = checkDomainSettings(input, errors, name || 'invalid.example', app.config.allowPrivateBackends);
      if (errors.length > 0) throw invalidFields(errors);
      const refused = registrationProblem(name, { reserved: app.config.reservedZones, mayUseReserved: request.user.reservedZones === true });
      if (refused) throw new ApiError(refused.code, refused.message, [{ field: 'domain', message: refused.message }]);
      const zone = await app.store.createZone((ctx) => {
        checkNodesExist(settings.bind_node, ctx.nodeExists, 'bind_node');
        const domain: DomainState = {
          ...DOMAIN_DEFAULTS,
          ...(settings as DomainSettings),
          domain: name,
          ownerId: request.user.id,
          ns_active: false,
          created: ctx.now,
          updated: ctx.now,
          revision: 0,
        };
        return { domain, records: [] };
      });
      await followSsl(app, zone.domain);
      return reply.code(201).header('location', `/domains/${name}`).send(renderDomain(zone, app.config));
    },
  );

  app.get(
    '/domains/:domain',
    { schema: { tags, summary: 'Read a domain', params: DomainParams, response: { 200: Domain, ...errorResponses(404) } } },
    async (request) => renderDomain(await ownZoneHead(app, request.params.domain, request.user.id), app.config),
  );

  app.patch(
    '/domains/:domain',
    {
      attachValidation: true,
      schema: {
        tags,
        summary: 'Change a domain',
        description: 'Only the supplied fields change.',
        params: DomainParams,
        body: DomainPatch,
        response: { 200: Domain, ...errorResponses(404, 413, 415, 422) },
      },
    },
    async (request) => {
      const name = zoneName(request.params.domain);
      const { errors, bad } = bodySchemaErrors(request);
      const patch = checkDomainSettings(withoutFields(request.body, bad), errors, name, app.config.allowPrivateBackends);
      if (errors.length > 0) throw invalidFields(errors);
      const zone = await app.store.updateZone(name, request.user.id, (current, ctx) => {
        checkNodesExist(patch.bind_node, ctx.nodeExists, 'bind_node');
        const changed = Object.entries(patch).some(([k, v]) => !sameValue(current.domain[k as keyof DomainState], v));
        return changed ? { ...current, domain: { ...current.domain, ...patch } } : undefined;
      });
      if (patch.ssl !== undefined || patch.mask !== undefined) await followSsl(app, zone.domain);
      return renderDomain(zone, app.config);
    },
  );

  app.delete(
    '/domains/:domain',
    { schema: { tags, summary: 'Remove a domain and its records', params: DomainParams, response: { 204: Type.Null(), ...errorResponses(404) } } },
    async (request, reply) => {
      const name = zoneName(request.params.domain);
      if (!(await app.store.deleteZone(name, request.user.id))) throw notFound(`domain ${name}`);
      await app.tasks.forget(request.user.id, name).catch((error: unknown) => app.log.warn({ err: error, domain: name }, 'certificates: the tasks of a removed domain stay until the worker meets them'));
      await app.notify.forgetDomain(name).catch((error: unknown) => app.log.warn({ err: error, domain: name }, 'uptime: the measures of a removed domain stay until they expire (they are not shown to a later owner of the name)'));
      return reply.code(204).send(null);
    },
  );
};
