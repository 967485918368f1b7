// POST /domains/{domain}/dnsrecords/bulk: creates, updates and removes records in one atomic
// change (one revision, one change-feed entry), or none of them. Every error names its item
// ("create.3.value", "update.0.id"); the zone rules are judged against the zone as it will be.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError, invalidFields, unprocessable, type FieldError } from '../../errors.ts';
import { buildRecord, checkRecordInZone, DnsRecord, orphanedDs, RecordCreate, RecordPatch, renderRecord, type RecordState } from '../../model/record.ts';
import { hasPriority, recordTypeNumber } from '../../model/record-types.ts';
import { DomainParams, errorResponses } from '../schemas.ts';
import { bodySchemaErrors } from '../validation.ts';
import { zoneName } from '../zone-access.ts';

/** Items of one bulk change, all kinds together (the body limit bounds it too). */
export const BULK_MAX_ITEMS = 10_000;

const BulkBody = Type.Object(
  {
    create: Type.Optional(Type.Array(RecordCreate, { maxItems: BULK_MAX_ITEMS })),
    update: Type.Optional(Type.Array(Type.Object({ id: Type.Integer({ minimum: 1, description: 'The record to change' }), ...RecordPatch.properties }, { additionalProperties: false }), { maxItems: BULK_MAX_ITEMS })),
    delete: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: BULK_MAX_ITEMS })),
  },
  { additionalProperties: false },
);

const BulkResult = Type.Object({
  revision: Type.Integer(),
  created: Type.Array(DnsRecord),
  updated: Type.Array(DnsRecord),
  deleted: Type.Array(Type.Integer()),
});

const prefixed = (prefix: string, errors: readonly FieldError[]) => errors.map((e) => ({ field: `${prefix}.${e.field}`, message: e.message }));

export const bulkRecordRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/domains/:domain/dnsrecords/bulk',
    {
      schema: {
        tags: ['dns records'],
        summary: 'Create, change and remove records in one atomic change',
        description: 'All or nothing, one revision. `update` items are patches carrying the record `id`; `delete` lists ids. Errors name the item: `create.3.value`, `update.0.id`, `delete.2`. The zone rules and the record limit are judged on the zone as it will be.',
        params: DomainParams,
        body: BulkBody,
        response: { 200: BulkResult, ...errorResponses(404, 413, 415, 422) },
      },
      attachValidation: true,
    },
    async (request) => {
      const name = zoneName(request.params.domain);
      const { errors } = bodySchemaErrors(request);
      if (errors.length > 0) throw invalidFields(errors);
      const body = request.body;
      const create = body.create ?? [];
      const update = body.update ?? [];
      const remove = body.delete ?? [];
      // Field checks of the creates first (no store needed).
      const drafts = create.map((input, i) => {
        const fieldErrors: FieldError[] = [];
        const record = buildRecord(input, 0, name, fieldErrors);
        errors.push(...prefixed(`create.${i}`, fieldErrors));
        return record;
      });
      const seen = new Map<number, string>();
      update.forEach((u, i) => {
        if (seen.has(u.id)) errors.push({ field: `update.${i}.id`, message: `record ${u.id} is also ${seen.get(u.id)}` });
        seen.set(u.id, `update.${i}`);
      });
      remove.forEach((id, i) => {
        if (seen.has(id)) errors.push({ field: `delete.${i}`, message: `record ${id} is also ${seen.get(id)}` });
        seen.set(id, `delete.${i}`);
      });
      if (errors.length > 0) throw invalidFields(errors);
      let result: { created: RecordState[]; updated: RecordState[] } = { created: [], updated: [] };
      const { head } = await app.store.changeRecords(name, request.user.id, (view, ctx) => {
        const problems: FieldError[] = [];
        const updated: Array<{ item: string; record: RecordState }> = [];
        const removed = new Set<number>();
        remove.forEach((id, i) => {
          const current = view.byId(id);
          if (!current || current.acme) problems.push({ field: `delete.${i}`, message: `record ${id} not found` });
          else removed.add(id);
        });
        const before = new Map<number, RecordState>();
        update.forEach((u, i) => {
          const current = view.byId(u.id);
          if (!current || current.acme) {
            problems.push({ field: `update.${i}.id`, message: `record ${u.id} not found` });
            return;
          }
          before.set(u.id, current);
          const { id: _id, ...patch } = u;
          const type = patch.type === undefined ? current.type : recordTypeNumber(patch.type);
          const priority = patch.priority !== undefined ? patch.priority : hasPriority(type) ? current.priority : null;
          const fieldErrors: FieldError[] = [];
          const record = buildRecord({ ...current, ...patch, type, priority }, u.id, name, fieldErrors);
          problems.push(...prefixed(`update.${i}`, fieldErrors));
          updated.push({ item: `update.${i}`, record });
        });
        if (problems.length > 0) throw unprocessable(problems);
        const count = view.head.recordCount - removed.size + drafts.length;
        const limit = request.user.limits.max_records_per_domain;
        if (count > limit) throw new ApiError('LIMIT_EXCEEDED', `the domain would hold ${count} records; it may hold at most ${limit}`);
        const created = drafts.map((d, i) => ({ item: `create.${i}`, record: { ...d, id: ctx.nextRecordId() } }));
        // The zone as it will be, at every name a new or changed record sits at (the records there
        // now, less those removed or changed, plus the new and changed ones).
        const changedIds = new Set(updated.map((u) => u.record.id));
        const atName = new Map<string, RecordState[]>();
        const written = [...updated, ...created];
        for (const { record } of written) {
          if (atName.has(record.name)) continue;
          atName.set(record.name, view.at(record.name).filter((r) => !removed.has(r.id) && !changedIds.has(r.id)));
        }
        for (const { record } of written) atName.get(record.name)!.push(record);
        for (const { item, record } of written) {
          const others = atName.get(record.name)!.filter((r) => r !== record);
          problems.push(...prefixed(item, checkRecordInZone(record, others)));
        }
        // Names a removed or moved record leaves: no DS may stay there without an NS.
        const left = new Map<string, string>();
        remove.forEach((id, i) => view.byId(id) && left.set(view.byId(id)!.name, `delete.${i}`));
        updated.forEach(({ item, record }) => {
          const was = before.get(record.id)!;
          if (was.name !== record.name || was.type !== record.type) left.set(was.name, `${item}.type`);
        });
        for (const [owner, field] of left) {
          const now = atName.get(owner) ?? view.at(owner).filter((r) => !removed.has(r.id) && !changedIds.has(r.id)).concat(written.map((w) => w.record).filter((r) => r.name === owner));
          const orphan = orphanedDs(now, field);
          if (orphan) problems.push(orphan);
        }
        if (problems.length > 0) throw unprocessable(problems);
        const changed = updated.filter((u) => JSON.stringify(u.record) !== JSON.stringify(before.get(u.record.id)));
        result = { created: created.map((c) => c.record), updated: updated.map((u) => u.record) };
        if (changed.length === 0 && created.length === 0 && removed.size === 0) return undefined;
        return { put: [...changed.map((u) => u.record), ...created.map((c) => c.record)], del: [...removed] };
      });
      return { revision: head.domain.revision, created: result.created.map(renderRecord), updated: result.updated.map(renderRecord), deleted: remove };
    },
  );
};
