// /security/iplist/: named lists of IP addresses and CIDR prefixes for the edge nodes.
// PUT and DELETE of one entry are idempotent and answer the list as it now is.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TypeBoxApp } from '../typebox-app.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiError, invalidFields, notFound } from '../../errors.ts';
import { canonicalIpOrPrefix } from '../../model/ip.ts';
import { canonicalIpEntries, IpList, IpListCreate, IpListPatch, type IpListState } from '../../model/iplist.ts';
import type { UserState } from '../../model/user.ts';
import { linkNext, pageRequest } from '../paging.ts';
import { errorResponses, PageQuery, pagedList } from '../schemas.ts';
import { bodySchemaErrors } from '../validation.ts';
import { checkNodesExist } from '../zone-access.ts';

const ListParams = Type.Object({ listid: Type.Integer({ minimum: 1 }) });
const EntryParams = Type.Object({
  listid: Type.Integer({ minimum: 1 }),
  ip: Type.String({ minLength: 2, maxLength: 49, description: 'An address, or a prefix with "/" sent as %2F' }),
});

function render(list: IpListState): IpList {
  const { ownerId: _o, ...rest } = list;
  return rest;
}

function checkSize(ips: readonly string[], user: UserState): void {
  const max = user.limits.max_ips_per_list;
  if (ips.length > max) throw new ApiError('LIMIT_EXCEEDED', `an IP list may hold at most ${max} entries`, [{ field: 'ips', message: `has ${ips.length} entries` }]);
}

function entry(ip: string): string {
  const e = canonicalIpOrPrefix(ip);
  if ('error' in e) throw invalidFields([{ field: 'params.ip', message: e.error }]);
  return e.value;
}

const tags = ['ip lists'];

export const ipListRoutes: FastifyPluginAsyncTypebox = async (app) => {
  listIpLists(app);
  readIpList(app);
  addIpList(app);
  changeIpList(app);
  removeIpList(app);
  entryRoutes(app);
};

/** GET /security/iplist: your IP lists, paged. */
function listIpLists(app: TypeBoxApp): void {
  app.get(
    '/security/iplist',
    {
      schema: {
        tags,
        summary: 'List your IP lists',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: pagedList(IpList), ...errorResponses() },
      },
    },
    async (request, reply) => linkNext(request, reply, await app.store.listIpLists(request.user.id, pageRequest(request.query))).map(render),
  );
}

/** GET /security/iplist/{listid}: one list. */
function readIpList(app: TypeBoxApp): void {
  app.get(
    '/security/iplist/:listid',
    { schema: { tags, summary: 'Read an IP list', params: ListParams, response: { 200: IpList, ...errorResponses(404) } } },
    async (request) => {
      const list = await app.store.getIpList(request.params.listid);
      if (!list || list.ownerId !== request.user.id) throw notFound(`IP list ${request.params.listid}`);
      return render(list);
    },
  );
}

/** POST /security/iplist: a new list. */
function addIpList(app: TypeBoxApp): void {
  app.post(
    '/security/iplist',
    { attachValidation: true, schema: { tags, summary: 'Create an IP list', body: IpListCreate, response: { 201: IpList, ...errorResponses(413, 415, 422) } } },
    async (request, reply) => {
      const { errors, bad } = bodySchemaErrors(request);
      const ips = canonicalIpEntries(bad.has('ips') ? [] : (request.body.ips ?? []), errors);
      if (errors.length > 0) throw invalidFields(errors);
      checkSize(ips, request.user);
      const list = await app.store.createIpList((ctx) => {
        checkNodesExist(request.body.nodes, ctx.nodeExists, 'nodes');
        return {
          id: ctx.id,
          ownerId: request.user.id,
          name: request.body.name,
          ips,
          allnodes: request.body.allnodes ?? true,
          nodes: [...new Set(request.body.nodes ?? [])].sort((a, b) => a - b),
          created: ctx.now,
          updated: ctx.now,
          revision: 0,
        };
      });
      return reply.code(201).header('location', `/security/iplist/${list.id}`).send(render(list));
    },
  );
}

/** PATCH /security/iplist/{listid}: the supplied fields of a list changed. */
function changeIpList(app: TypeBoxApp): void {
  app.patch(
    '/security/iplist/:listid',
    {
      attachValidation: true,
      schema: { tags, summary: 'Change an IP list', params: ListParams, body: IpListPatch, response: { 200: IpList, ...errorResponses(404, 413, 415, 422) } },
    },
    async (request) => {
      const { errors, bad } = bodySchemaErrors(request);
      const ips = !bad.has('ips') && request.body.ips ? canonicalIpEntries(request.body.ips, errors) : undefined;
      if (errors.length > 0) throw invalidFields(errors);
      if (ips) checkSize(ips, request.user);
      const list = await app.store.updateIpList(request.params.listid, request.user.id, (current, ctx) => {
        checkNodesExist(request.body.nodes, ctx.nodeExists, 'nodes');
        const nodes = request.body.nodes && [...new Set(request.body.nodes)].sort((a, b) => a - b);
        const next: IpListState = {
          ...current,
          ...(request.body.name !== undefined && { name: request.body.name }),
          ...(request.body.allnodes !== undefined && { allnodes: request.body.allnodes }),
          ...(ips && { ips }),
          ...(nodes && { nodes }),
        };
        return JSON.stringify(next) === JSON.stringify(current) ? undefined : next;
      });
      return render(list);
    },
  );
}

/** DELETE /security/iplist/{listid}: a list. */
function removeIpList(app: TypeBoxApp): void {
  app.delete(
    '/security/iplist/:listid',
    { schema: { tags, summary: 'Remove an IP list', params: ListParams, response: { 204: Type.Null(), ...errorResponses(404) } } },
    async (request, reply) => {
      if (!(await app.store.deleteIpList(request.params.listid, request.user.id))) throw notFound(`IP list ${request.params.listid}`);
      return reply.code(204).send(null);
    },
  );
}

/** PUT and DELETE /security/iplist/{listid}/{ip}: one entry added or removed, answered alike (answerEntryChange). */
function entryRoutes(app: TypeBoxApp): void {
  /**
   * After a one-entry change: the list as it now is (the documented answer), or with
   * `Prefer: return=minimal` (RFC 7240) 204 and no body — a client adding thousands of entries
   * one by one need not receive the whole list each time. The list is rendered with
   * JSON.stringify (its schema still documents the shape): many entries serialise faster so.
   */
  const answerEntryChange = async (request: FastifyRequest, reply: FastifyReply, id: number) => {
    if (/(^|[\s,;])return=minimal\b/i.test(String(request.headers.prefer ?? ''))) {
      return reply.code(204).header('preference-applied', 'return=minimal').send(null);
    }
    const list = await app.store.getIpList(id);
    if (!list) throw notFound(`IP list ${id}`);
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(render(list)) as never);
  };
  const entryChangeResponses = { 200: IpList, 204: { ...Type.Null(), description: 'With `Prefer: return=minimal`: done, no body' } };
  const preferHeader = Type.Object({ prefer: Type.Optional(Type.String({ description: '`return=minimal`: answer 204 without the list' })) });

  app.put(
    '/security/iplist/:listid/:ip',
    {
      schema: {
        tags,
        summary: 'Add one address or prefix (idempotent)',
        description: 'Costs the same whatever the list holds; answers the list as it now is, or 204 with `Prefer: return=minimal`.',
        params: EntryParams,
        headers: preferHeader,
        response: { ...entryChangeResponses, ...errorResponses(404, 422) },
      },
    },
    async (request, reply) => {
      const ip = entry(request.params.ip);
      const max = request.user.limits.max_ips_per_list;
      await app.store.changeIpEntries(request.params.listid, request.user.id, { add: [ip], del: [] }, (count) => {
        if (count > max) throw new ApiError('LIMIT_EXCEEDED', `an IP list may hold at most ${max} entries`, [{ field: 'ips', message: `would have ${count} entries` }]);
      });
      return answerEntryChange(request, reply, request.params.listid);
    },
  );

  app.delete(
    '/security/iplist/:listid/:ip',
    {
      schema: {
        tags,
        summary: 'Remove one address or prefix (idempotent)',
        description: 'Costs the same whatever the list holds; answers the list as it now is, or 204 with `Prefer: return=minimal`.',
        params: EntryParams,
        headers: preferHeader,
        response: { ...entryChangeResponses, ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const ip = entry(request.params.ip);
      await app.store.changeIpEntries(request.params.listid, request.user.id, { add: [], del: [ip] }, () => undefined);
      return answerEntryChange(request, reply, request.params.listid);
    },
  );
}
