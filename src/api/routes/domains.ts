// /domains/ and /domains/{domain}: register, list, read, change and remove domains.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TypeBoxApp } from '../typebox-app.ts';
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
import { keyMaker, withSigningKeys } from './dnssec.ts';
import type { Ownership } from '../../ownership/ownership.ts';

export async function renderDomain(zone: ZoneHead, config: Config, ownership: Ownership) {
  // The signing keys are never shown (GET /domains/{domain}/dnssec shows their DNSKEY and DS).
  const { ownerId: _owner, claim, nsRevision: _served, signing: _keys, ...domain } = zone.domain;
  // Domains stored before a setting existed show its default.
  return {
    ...DOMAIN_DEFAULTS,
    ...domain,
    failover_active: domain.failover_active ?? false,
    nameservers: [...(claim?.nameservers ?? config.nameservers)],
    verification: await ownership.verification(zone.domain),
    records: zone.recordCount,
  };
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const tags = ['domains'];

export const domainRoutes: FastifyPluginAsyncTypebox = async (app) => {
  listDomains(app);
  addDomain(app);
  readDomain(app);
  verifyDomain(app);
  changeDomain(app);
  removeDomain(app);
};

/** GET /domains: your domains, paged (by tag if asked). */
function listDomains(app: TypeBoxApp): void {
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
      return Promise.all(linkNext(request, reply, page).map((z) => renderDomain(z, app.config, app.ownership)));
    },
  );
}

/** POST /domains: a domain registered, its claim made (served once proven). */
function addDomain(app: TypeBoxApp): void {
  app.post(
    '/domains',
    {
      attachValidation: true,
      schema: {
        tags,
        summary: 'Register a domain',
        description:
          'Makes a claim of the domain. Another account\'s pending claim of the same name, above or under it does not stand in the way; with ownership proof required (the default) the domain is served by our name servers (once activated: GET /domains/{domain}/activatens), routed by the edges and given certificates only once proven — delegate it to `nameservers` at the registrar (when `verification.accepts` has `delegation`: not when another account\'s claim of the name was given the same name servers), or put `verification.token` in a TXT record at `_palisade-verify.<domain>` (`verification.instructions` says which, in plain words), then POST /domains/{domain}/verify (the service also looks by itself, less and less often). 409 DOMAIN_OVERLAP only where another account\'s proven domain is at, above or under the name and this one would be proven at once.',
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
      const claim = await app.ownership.newClaim(request.user, name);
      const makeKeys = keyMaker(app);
      const created = await app.store.createZone((ctx) => {
        checkNodesExist(settings.bind_node, ctx.nodeExists, 'bind_node');
        const domain: DomainState = {
          ...DOMAIN_DEFAULTS,
          ...(settings as DomainSettings),
          domain: name,
          ownerId: request.user.id,
          ns_active: false,
          claim,
          created: ctx.now,
          updated: ctx.now,
          revision: 0,
        };
        return { domain: withSigningKeys(undefined, domain, makeKeys), records: [] };
      });
      const zone = await app.ownership.created(created);
      if (zone.domain.dnssec === true) void app.dnssecParent.changed(zone.domain).catch((error: unknown) => request.log.warn({ err: (error as Error).message, domain: name }, 'dnssec: the parent\'s DS could not be looked at'));
      await app.ownership.keepAccountPair(request.user);
      await followSsl(app, zone.domain);
      return reply.code(201).header('location', `/domains/${name}`).send(await renderDomain(zone, app.config, app.ownership));
    },
  );
}

/** GET /domains/{domain}: one domain. */
function readDomain(app: TypeBoxApp): void {
  app.get(
    '/domains/:domain',
    { schema: { tags, summary: 'Read a domain', params: DomainParams, response: { 200: Domain, ...errorResponses(404) } } },
    async (request) => renderDomain(await ownZoneHead(app, request.params.domain, request.user.id), app.config, app.ownership),
  );
}

/** POST /domains/{domain}/verify: the proof of the claim looked for now. */
function verifyDomain(app: TypeBoxApp): void {
  app.post(
    '/domains/:domain/verify',
    {
      schema: {
        tags,
        summary: 'Look for the proof of your claim now',
        description:
          'Asks the resolver standing for the registry (or, under another account\'s domain served here, that zone) whether the domain is delegated to its `nameservers` (counted only when `verification.accepts` has `delegation`, and no other account\'s claim of the name would be proven by it too) or `_palisade-verify.<domain>` holds `verification.token`. Proven: the domain is served, other accounts\' pending claims at or under it are released (they are told: domain.claim_released) and you are told (domain.verified). `verification.seen` says what was seen either way.',
        params: DomainParams,
        response: { 200: Domain, ...errorResponses(404) },
      },
    },
    async (request) => {
      const name = zoneName(request.params.domain);
      await ownZoneHead(app, name, request.user.id);
      const head = await app.ownership.check(name, request.user.id);
      if (!head) throw notFound(`domain ${name}`);
      return renderDomain(head, app.config, app.ownership);
    },
  );
}

/** PATCH /domains/{domain}: the supplied settings changed. */
function changeDomain(app: TypeBoxApp): void {
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
      const makeKeys = keyMaker(app);
      let turned = false;
      const zone = await app.store.updateZone(name, request.user.id, (current, ctx) => {
        checkNodesExist(patch.bind_node, ctx.nodeExists, 'bind_node');
        const changed = Object.entries(patch).some(([k, v]) => !sameValue(current.domain[k as keyof DomainState], v));
        turned = patch.dnssec !== undefined && patch.dnssec !== (current.domain.dnssec ?? false);
        if (!changed) return undefined;
        return { ...current, domain: withSigningKeys(current.domain, { ...current.domain, ...patch }, makeKeys) };
      });
      if (patch.ssl !== undefined || patch.mask !== undefined) await followSsl(app, zone.domain);
      // Turned on or off: the parent's DS is looked at now, beside the answer (secure soon when it is there; off soon when it never was).
      if (turned) void app.dnssecParent.changed(zone.domain).catch((error: unknown) => request.log.warn({ err: (error as Error).message, domain: name }, 'dnssec: the parent\'s DS could not be looked at'));
      return renderDomain(zone, app.config, app.ownership);
    },
  );
}

/** DELETE /domains/{domain}: a domain and its records. */
function removeDomain(app: TypeBoxApp): void {
  app.delete(
    '/domains/:domain',
    { schema: { tags, summary: 'Remove a domain and its records', params: DomainParams, response: { 204: Type.Null(), ...errorResponses(404) } } },
    async (request, reply) => {
      const name = zoneName(request.params.domain);
      const head = await app.store.getZoneHead(name, request.user.id);
      if (!head || !(await app.store.deleteZone(name, request.user.id))) throw notFound(`domain ${name}`);
      // A proven domain's pair stays with the name: a later claim of another account gets another.
      await app.ownership.forget(head.domain).catch((error: unknown) => app.log.warn({ err: error, domain: name }, 'ownership: the removed claim\'s documents stay'));
      // The name's holder: its measures and notices go (another account's claim beside it had none).
      const wasHolder = (await app.store.getZoneHead(name)) === undefined;
      await app.tasks.forget(request.user.id, name).catch((error: unknown) => app.log.warn({ err: error, domain: name }, 'certificates: the tasks of a removed domain stay until the worker meets them'));
      if (wasHolder) await app.notify.forgetDomain(name).catch((error: unknown) => app.log.warn({ err: error, domain: name }, 'uptime: the measures of a removed domain stay until they expire (they are not shown to a later owner of the name)'));
      return reply.code(204).send(null);
    },
  );
}
