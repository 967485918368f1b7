// /domains/{domain}/dnsrecords: the zone's records. Field checks (400) run before the store;
// zone rules (422: CNAME exclusivity, duplicates, apex rules, limits) run inside the store's
// atomic step, against the zone as it is at commit time.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TypeBoxApp } from '../typebox-app.ts';
import { Type } from 'typebox';
import { ApiError, invalidFields, notFound, unprocessable, type FieldError } from '../../errors.ts';
import { normaliseOwnerName } from '../../model/names.ts';
import { buildRecord, checkRecordInZone, DnsRecord, orphanedDs, RecordCreate, RecordPatch, renderRecord, type RecordState } from '../../model/record.ts';
import { hasPriority, recordTypeNumber, TYPE, TYPE_MNEMONIC_PATTERN, TYPE_NUMBERS } from '../../model/record-types.ts';
import { decodeIdCursor } from '../../store/cursor.ts';
import type { RecordView, Zone } from '../../store/types.ts';
import { nextLink, pageById, pageRequest } from '../paging.ts';
import { RenderCache, type Rendered } from '../render-cache.ts';
import { DomainParams, errorResponses, PageQuery, pagedList } from '../schemas.ts';
import { bodySchemaErrors, withoutFields } from '../validation.ts';
import { ownZone, ownZoneHead, zoneName } from '../zone-access.ts';

const RecordParams = Type.Object({ domain: DomainParams.properties.domain, id: Type.Integer({ minimum: 1 }) });

function checked(input: RecordCreate, id: number, zone: string): RecordState {
  const errors: FieldError[] = [];
  const record = buildRecord(input, id, zone, errors);
  if (errors.length > 0) throw invalidFields(errors);
  return record;
}

/**
 * The records a record must be checked against (checkRecordInZone): those at its name, and for
 * an SOA those at the apex, where the zone's only SOA can be. Never the whole zone.
 */
function neighbours(view: RecordView, record: RecordState, except?: number): RecordState[] {
  const near = view.at(record.name);
  const apex = record.type === TYPE.SOA && record.name !== '@' ? view.at('@') : [];
  return [...near, ...apex].filter((r) => r.id !== except);
}

/** The filtered, paged record list of a zone as JSON, with its next-page link. */
function renderList(zone: Zone, query: { name?: string; type?: number | string; limit?: number; cursor?: string }, url: string): Rendered {
  let owner: string | undefined;
  if (query.name !== undefined) {
    const n = normaliseOwnerName(query.name, zone.domain.domain);
    if (!n.ok) throw invalidFields([{ field: 'querystring.name', message: n.message }]);
    owner = n.value;
  }
  const type = query.type === undefined ? undefined : recordTypeNumber(query.type);
  const matching = zone.records.filter((r) => !r.acme && (owner === undefined || r.name === owner) && (type === undefined || r.type === type));
  const page = pageRequest(query);
  const after = page.cursor === undefined ? undefined : decodeIdCursor(page.cursor);
  const result = pageById(matching, page.limit, after);
  return { body: JSON.stringify(result.items.map(renderRecord)), link: result.next === undefined ? undefined : nextLink(url, result.next) };
}

const tags = ['dns records'];

export const recordRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const cache = new RenderCache();

  listRecords(app, cache);
  addRecord(app);
  readRecord(app);
  changeRecord(app);
  removeRecord(app);
};

/** GET /domains/{domain}/dnsrecords: the zone's records, filtered and paged, rendered once per zone revision and query (`cache`). */
function listRecords(app: TypeBoxApp, cache: RenderCache): void {
  app.get(
    '/domains/:domain/dnsrecords',
    {
      schema: {
        tags,
        summary: "List a domain's DNS records",
        params: DomainParams,
        querystring: Type.Object(
          {
            ...PageQuery,
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'Only records at this name' })),
            type: Type.Optional(Type.Union([Type.Integer({ enum: [...TYPE_NUMBERS] }), Type.String({ pattern: TYPE_MNEMONIC_PATTERN })], { description: 'Only records of this type (number or mnemonic)' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: pagedList(DnsRecord), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const zone = await ownZone(app, request.params.domain, request.user.id);
      // Same zone revision and same query → same answer: serve it from the render cache.
      const cacheKey = `${zone.domain.domain}\n${zone.domain.revision}\n${request.url.slice(request.url.indexOf('?') + 1 || request.url.length)}`;
      let rendered = cache.get(cacheKey);
      if (!rendered) {
        rendered = renderList(zone, request.query, request.url);
        cache.set(cacheKey, rendered);
      }
      if (rendered.link) reply.header('link', rendered.link);
      // A string payload is sent as is; the schema still documents its shape.
      return reply.type('application/json; charset=utf-8').send(rendered.body as never);
    },
  );
}

/** POST /domains/{domain}/dnsrecords: a new record, checked against its neighbours and the account's limit in the store's atomic step. */
function addRecord(app: TypeBoxApp): void {
  app.post(
    '/domains/:domain/dnsrecords',
    {
      schema: {
        tags,
        summary: 'Add a DNS record',
        params: DomainParams,
        body: RecordCreate,
        response: { 201: DnsRecord, ...errorResponses(404, 413, 415, 422) },
      },
      attachValidation: true,
    },
    async (request, reply) => {
      const name = zoneName(request.params.domain);
      // Schema errors and value checks together; the value checks need name, type and value.
      const { errors, bad } = bodySchemaErrors(request);
      if (errors.length > 0 && !['name', 'type', 'value'].some((f) => bad.has(f))) buildRecord(withoutFields(request.body, bad), 0, name, errors);
      if (errors.length > 0) throw invalidFields(errors);
      const draft = checked(request.body, 0, name);
      let created: RecordState | undefined;
      await app.store.changeRecords(name, request.user.id, (view, ctx) => {
        const limit = request.user.limits.max_records_per_domain;
        if (view.head.recordCount >= limit) throw new ApiError('LIMIT_EXCEEDED', `a domain may hold at most ${limit} records`);
        const problems = checkRecordInZone(draft, neighbours(view, draft));
        if (problems.length > 0) throw unprocessable(problems);
        created = { ...draft, id: ctx.nextRecordId() };
        return { put: [created], del: [] };
      });
      return reply.code(201).header('location', `/domains/${name}/dnsrecords/${created!.id}`).send(renderRecord(created!));
    },
  );
}

/** GET /domains/{domain}/dnsrecords/{id}: one record. */
function readRecord(app: TypeBoxApp): void {
  app.get(
    '/domains/:domain/dnsrecords/:id',
    { schema: { tags, summary: 'Read a DNS record', params: RecordParams, response: { 200: DnsRecord, ...errorResponses(404) } } },
    async (request) => {
      const zone = await ownZoneHead(app, request.params.domain, request.user.id);
      const record = await app.store.getRecord(zone.domain.domain, request.params.id, request.user.id);
      if (!record || record.acme) throw notFound(`record ${request.params.id}`);
      return renderRecord(record);
    },
  );
}

/** PATCH /domains/{domain}/dnsrecords/{id}: the supplied fields merged in, the result checked as a new record would be. */
function changeRecord(app: TypeBoxApp): void {
  app.patch(
    '/domains/:domain/dnsrecords/:id',
    {
      schema: {
        tags,
        summary: 'Change a DNS record',
        description: 'Only the supplied fields change; the result must pass the same rules as a new record.',
        params: RecordParams,
        body: RecordPatch,
        response: { 200: DnsRecord, ...errorResponses(404, 413, 415, 422) },
      },
    },
    async (request) => {
      const name = zoneName(request.params.domain);
      const { id } = request.params;
      let updated: RecordState | undefined;
      await app.store.changeRecords(name, request.user.id, (view) => {
        const current = view.byId(id);
        if (!current || current.acme) throw notFound(`record ${id}`);
        const type = request.body.type === undefined ? current.type : recordTypeNumber(request.body.type);
        // A type change to one without priority drops the old priority unless one is given.
        const priority = request.body.priority !== undefined ? request.body.priority : hasPriority(type) ? current.priority : null;
        const merged: RecordCreate = { ...current, ...request.body, type, priority };
        updated = checked(merged, id, name);
        const problems = checkRecordInZone(updated, neighbours(view, updated, id));
        // An NS moved away (or made another type) must not leave a DS behind at its old name.
        const left = updated.name === current.name && updated.type === current.type ? undefined : orphanedDs(view.at(current.name).filter((r) => r.id !== id), 'type');
        if (left) problems.push(left);
        if (problems.length > 0) throw unprocessable(problems);
        if (JSON.stringify(updated) === JSON.stringify(current)) return undefined;
        return { put: [updated], del: [] };
      });
      return renderRecord(updated!);
    },
  );
}

/** DELETE /domains/{domain}/dnsrecords/{id}: a record, unless it is the last NS at a name holding a DS. */
function removeRecord(app: TypeBoxApp): void {
  app.delete(
    '/domains/:domain/dnsrecords/:id',
    { schema: { tags, summary: 'Remove a DNS record', description: 'An NS record whose name also holds a DS cannot be removed while it is the last NS there (422): remove the DS first.', params: RecordParams, response: { 204: Type.Null(), ...errorResponses(404, 422) } } },
    async (request, reply) => {
      const name = zoneName(request.params.domain);
      const { id } = request.params;
      await app.store.changeRecords(name, request.user.id, (view) => {
        const current = view.byId(id);
        if (!current || current.acme) throw notFound(`record ${id}`);
        const left = orphanedDs(view.at(current.name).filter((r) => r.id !== id), 'id');
        if (left) throw unprocessable([left]);
        return { put: [], del: [id] };
      });
      return reply.code(204).send(null);
    },
  );
}
