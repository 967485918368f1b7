// POST /domains/{domain}/dnsrecords/bulk: creates, updates and removes records in one atomic
// change (one revision, one change-feed entry), or none of them. Every error names its item
// ("create.3.value", "update.0.id"); the zone rules are judged against the zone as it will be.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { TimeSlices } from '../../common/time-slices.ts';
import type { RecordView, Zone } from '../../store/types.ts';
import { ApiError, invalidFields, notFound, unprocessable, type FieldError } from '../../errors.ts';
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
      const slices = new TimeSlices();
      const drafts: RecordState[] = [];
      for (const [i, input] of create.entries()) {
        await slices.breathe();
        const fieldErrors: FieldError[] = [];
        drafts.push(buildRecord(input, 0, name, fieldErrors));
        errors.push(...prefixed(`create.${i}`, fieldErrors));
      }
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
      const input = { create, update, remove, drafts, name, limit: request.user.limits.max_records_per_domain };
      if (create.length + update.length + remove.length < LARGE_FROM) {
        let decided: BulkDecision | undefined;
        const { head } = await app.store.changeRecords(name, request.user.id, (view, ctx) => {
          decided = drain(decideBulk(view, input, ctx.nextRecordId));
          return decided.edit;
        });
        return rendered(head.domain.revision, decided!, remove);
      }
      // Thousands of items: the zone is read (in slices), the change decided in slices, and
      // committed as one change set, off the event loop or in pieces (store/types.ts), only if the
      // zone is still as read. In the store's commit step, 10,000 items held every account's
      // requests up for most of a second.
      for (let attempt = 0; ; attempt++) {
        const zone = await app.store.getZone(name, request.user.id);
        if (!zone) throw notFound(`domain ${name}`);
        const view = await viewOf(zone);
        let temporary = 0;
        const decided = await drainInSlices(decideBulk(view, input, () => --temporary));
        if (!decided.edit) return rendered(zone.domain.revision, decided, remove);
        const isNew = (r: RecordState) => r.id < 0;
        const applied = await app.store.applyRecordChangeSet(name, request.user.id, {
          revision: zone.domain.revision,
          create: decided.edit.put.filter(isNew),
          put: decided.edit.put.filter((r) => !isNew(r)),
          del: decided.edit.del,
        });
        if (applied !== 'moved') {
          // Temporary ids (-1, -2, …) in creation order become the ids the store gave, in that order.
          decided.created = decided.created.map((r) => ({ ...r, id: applied.ids[-r.id - 1]! }));
          return rendered(applied.head.domain.revision, decided, remove);
        }
        if (attempt >= 2) throw new ApiError('CONFLICT', 'the zone kept changing while the change was applied; nothing was changed, send it again');
      }
    },
  );
};

/** Bulk changes of this many items and more take the change-set path (see above). */
const LARGE_FROM = 500;

interface BulkInput {
  create: unknown[];
  update: NonNullable<Static<typeof BulkBody>['update']>;
  remove: number[];
  drafts: RecordState[];
  name: string;
  limit: number;
}

interface BulkDecision {
  created: RecordState[];
  updated: RecordState[];
  /** undefined: nothing changes. */
  edit: { put: RecordState[]; del: number[] } | undefined;
}

function rendered(revision: number, decided: BulkDecision, remove: number[]) {
  return { revision, created: decided.created.map(renderRecord), updated: decided.updated.map(renderRecord), deleted: remove };
}

/** A zone read whole as the record view a decision reads. */
async function viewOf(zone: Zone): Promise<RecordView> {
  const slices = new TimeSlices();
  const byId = new Map<number, RecordState>();
  const atName = new Map<string, RecordState[]>();
  for (const record of zone.records) {
    await slices.breathe();
    byId.set(record.id, record);
    const list = atName.get(record.name);
    if (list) list.push(record);
    else atName.set(record.name, [record]);
  }
  return { head: { domain: zone.domain, recordCount: zone.records.length }, at: (owner) => [...(atName.get(owner) ?? [])], byId: (id) => byId.get(id) };
}

function drain<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

async function drainInSlices<T>(steps: Generator<void, T>): Promise<T> {
  const slices = new TimeSlices();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await slices.breathe();
  }
}

/**
 * The bulk change against the zone as `view` shows it: refusals (422, naming each item), the
 * record limit, the zone rules at every name written. A generator yielding between items, so
 * that a large one runs in slices (drainInSlices) and a small one at once inside the store's
 * atomic step (drain).
 */
function* decideBulk(view: RecordView, input: BulkInput, nextId: () => number): Generator<void, BulkDecision> {
  const { update, remove, drafts, name } = input;
  const problems: FieldError[] = [];
  const updated: Array<{ item: string; record: RecordState }> = [];
  const removed = new Set<number>();
  for (const [i, id] of remove.entries()) {
    yield;
    const current = view.byId(id);
    if (!current || current.acme) problems.push({ field: `delete.${i}`, message: `record ${id} not found` });
    else removed.add(id);
  }
  const before = new Map<number, RecordState>();
  for (const [i, u] of update.entries()) {
    yield;
    const current = view.byId(u.id);
    if (!current || current.acme) {
      problems.push({ field: `update.${i}.id`, message: `record ${u.id} not found` });
      continue;
    }
    before.set(u.id, current);
    const { id: _id, ...patch } = u;
    const type = patch.type === undefined ? current.type : recordTypeNumber(patch.type);
    const priority = patch.priority !== undefined ? patch.priority : hasPriority(type) ? current.priority : null;
    const fieldErrors: FieldError[] = [];
    const record = buildRecord({ ...current, ...patch, type, priority }, u.id, name, fieldErrors);
    problems.push(...prefixed(`update.${i}`, fieldErrors));
    updated.push({ item: `update.${i}`, record });
  }
  if (problems.length > 0) throw unprocessable(problems);
  const count = view.head.recordCount - removed.size + drafts.length;
  if (count > input.limit) throw new ApiError('LIMIT_EXCEEDED', `the domain would hold ${count} records; it may hold at most ${input.limit}`);
  const created = drafts.map((d, i) => ({ item: `create.${i}`, record: { ...d, id: nextId() } }));
  // The zone as it will be, at every name a new or changed record sits at (the records there
  // now, less those removed or changed, plus the new and changed ones).
  const changedIds = new Set(updated.map((u) => u.record.id));
  const atName = new Map<string, RecordState[]>();
  const written = [...updated, ...created];
  for (const { record } of written) {
    yield;
    if (atName.has(record.name)) continue;
    atName.set(record.name, view.at(record.name).filter((r) => !removed.has(r.id) && !changedIds.has(r.id)));
  }
  for (const { record } of written) atName.get(record.name)!.push(record);
  for (const { item, record } of written) {
    yield;
    const others = atName.get(record.name)!.filter((r) => r !== record);
    problems.push(...prefixed(item, checkRecordInZone(record, others)));
  }
  // Names a removed or moved record leaves: no DS may stay there without an NS.
  const left = new Map<string, string>();
  remove.forEach((id, i) => view.byId(id) && left.set(view.byId(id)!.name, `delete.${i}`));
  for (const { item, record } of updated) {
    const was = before.get(record.id)!;
    if (was.name !== record.name || was.type !== record.type) left.set(was.name, `${item}.type`);
  }
  for (const [owner, field] of left) {
    yield;
    const now = atName.get(owner) ?? view.at(owner).filter((r) => !removed.has(r.id) && !changedIds.has(r.id)).concat(written.map((w) => w.record).filter((r) => r.name === owner));
    const orphan = orphanedDs(now, field);
    if (orphan) problems.push(orphan);
  }
  if (problems.length > 0) throw unprocessable(problems);
  const changed: RecordState[] = [];
  for (const u of updated) {
    yield;
    if (JSON.stringify(u.record) !== JSON.stringify(before.get(u.record.id))) changed.push(u.record);
  }
  const decision = { created: created.map((c) => c.record), updated: updated.map((u) => u.record) };
  if (changed.length === 0 && created.length === 0 && removed.size === 0) return { ...decision, edit: undefined };
  return { ...decision, edit: { put: [...changed, ...created.map((c) => c.record)], del: [...removed] } };
}
