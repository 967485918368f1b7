// The change feed for name servers (and later edges), DNS's NOTIFY + IXFR in HTTP form:
//   GET /sync/snapshot          everything a consumer needs, at revision R
//   GET /sync/changes?since=R   what changed after R, in revision order, with the current data;
//                               410 when R is older than the retained history (refetch the snapshot)
// Authenticated by a consumer's bearer token (`palisade admin consumer add`), never a customer key.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../errors.ts';
import { hashApiKey } from '../../model/user.ts';
import type { Zone } from '../../store/types.ts';
import { Problem } from '../schemas.ts';

const Any = Type.Unsafe<unknown>({ description: 'The document as the store holds it' });

const ChangeWithData = Type.Object({
  revision: Type.Integer(),
  at: Type.String(),
  kind: Type.String({ description: 'zone | node | iplist | user | consumer' }),
  key: Type.String(),
  op: Type.Union([Type.Literal('put'), Type.Literal('delete')]),
  data: Type.Optional(Any),
});

const errors = { 401: Problem, 410: Problem, 503: Problem };

export const syncRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization ?? '';
    const token = /^Bearer ([\x21-\x7e]{8,256})$/.exec(header)?.[1];
    if (!token) throw new ApiError('UNAUTHORIZED', 'send a consumer token as "Authorization: Bearer …"');
    const hash = hashApiKey(token);
    const consumer = await app.store.findConsumerByTokenHash(hash);
    if (!consumer || !timingSafeEqual(Buffer.from(consumer.tokenHash, 'hex'), Buffer.from(hash, 'hex'))) {
      throw new ApiError('UNAUTHORIZED', 'the consumer token is not valid');
    }
  });

  app.get(
    '/sync/snapshot',
    {
      schema: {
        tags: ['sync'],
        summary: 'Everything a name server needs, at one revision',
        description: 'Only zones whose name servers are active are included; apply /sync/changes?since=revision afterwards.',
        security: [{ consumerToken: [] }],
        response: {
          200: Type.Object({ revision: Type.Integer(), nodes_revision: Type.Integer(), zones: Type.Array(Any), nodes: Type.Array(Any) }),
          ...errors,
        },
      },
    },
    async () => {
      const snap = await app.store.snapshot();
      return { revision: snap.revision, nodes_revision: snap.nodesRevision, zones: snap.zones.filter((z) => z.domain.ns_active), nodes: snap.nodes };
    },
  );

  app.get(
    '/sync/changes',
    {
      schema: {
        tags: ['sync'],
        summary: 'The changes after a revision, oldest first, with current data',
        description:
          'Each put carries the document as it is now (it may be newer than the change; applying it is idempotent). `revision` is the last revision included: ask again with since=revision until `revision` equals `current`.',
        security: [{ consumerToken: [] }],
        querystring: Type.Object(
          { since: Type.Integer({ minimum: 0 }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ since: Type.Integer(), revision: Type.Integer(), current: Type.Integer(), changes: Type.Array(ChangeWithData) }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { since } = request.query;
      const current = await app.store.currentRevision();
      const feed = await app.store.changesSince(since, request.query.limit ?? 1000);
      if ('gone' in feed) {
        throw new ApiError('GONE', `revision ${since} is older than the retained history (oldest ${feed.oldest}); fetch /sync/snapshot`);
      }
      const changes = await Promise.all(
        feed.changes.map(async (change) => {
          if (change.op === 'delete') return change;
          const data: Zone | unknown =
            change.kind === 'zone'
              ? await app.store.getZone(change.key)
              : change.kind === 'node'
                ? await app.store.getNode(Number(change.key))
                : change.kind === 'iplist'
                  ? await app.store.getIpList(Number(change.key))
                  : undefined;
          if (change.kind === 'user' || change.kind === 'consumer') return change;
          // Gone since: report the state the consumer must reach.
          return data === undefined ? { ...change, op: 'delete' as const } : { ...change, data };
        }),
      );
      const last = changes[changes.length - 1];
      return { since, revision: last ? last.revision : Math.max(since, 0), current, changes };
    },
  );
};
