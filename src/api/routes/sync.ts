// The change feed for name servers (edges have their own: edge-sync.ts), DNS's NOTIFY + IXFR in HTTP form:
//   GET /sync/snapshot          everything a consumer needs, at revision R
//   GET /sync/changes?since=R   what changed after R, in revision order: record differences, or the current document;
//                               410 when R is older than the retained history (refetch the snapshot)
// Authenticated by a name server's bearer token (`palisade admin consumer add`), never a customer key.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../errors.ts';
import type { SnapshotChunk } from '../../store/types.ts';
import { readChangePage } from '../../sync/change-page.ts';
import { endLine, headerLine, zoneLine } from '../../sync/snapshot-format.ts';
import { problemResponse } from '../schemas.ts';
import { consumerAuth } from './consumer-auth.ts';
import { checksCredentials } from '../plugins/rate-limit.ts';

const Any = Type.Unsafe<unknown>({ description: 'The document as the store holds it' });

const ChangeWithData = Type.Object({
  revision: Type.Integer(),
  at: Type.String(),
  kind: Type.String({ description: 'zone | node carry data; iplist | user | consumer | certificate come bare (nothing for a name server)' }),
  key: Type.String(),
  op: Type.Union([Type.Literal('put'), Type.Literal('delete')]),
  data: Type.Optional(Any),
  records: Type.Optional(
    Type.Object(
      {
        put: Type.Array(Type.Unsafe<unknown>({ description: 'A record as it now is' })),
        del: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })),
      },
      { description: 'A change of records only: those written and those removed (with the owner name they had)' },
    ),
  ),
});

const errors = { 400: problemResponse(400), 401: problemResponse(401), 403: problemResponse(403), 410: { ...problemResponse(503), description: 'Gone: the revision is older than the feed keeps; load the snapshot' }, 503: problemResponse(503) };

/** The snapshot as NDJSON text, a batch of zones per chunk; ends with the line that proves it whole. */
async function* snapshotLines(header: Extract<SnapshotChunk, { kind: 'header' }>, rest: AsyncGenerator<SnapshotChunk>): AsyncGenerator<string> {
  yield headerLine(header);
  let zones = 0;
  try {
    for await (const chunk of rest) {
      if (chunk.kind !== 'zones') continue;
      let text = '';
      for (const json of chunk.json) text += zoneLine(json);
      zones += chunk.json.length;
      if (text) yield text;
    }
  } finally {
    await rest.return(undefined);
  }
  yield endLine(zones);
}

export const syncRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', consumerAuth(app.store, 'nameserver'));
  checksCredentials(app);

  app.get(
    '/sync/snapshot',
    {
      schema: {
        tags: ['sync'],
        summary: 'Everything a name server needs, at one revision, streamed as NDJSON',
        description:
          'One JSON object per line: first `{"snapshot":{"revision","nodes_revision","nodes"}}`, then `{"zone":{...}}` for each zone whose name servers are active, ' +
          'last `{"end":{"zones":N}}`. A body without the end line was cut short and must be discarded. Apply /sync/changes?since=revision afterwards.',
        security: [{ consumerToken: [] }],
        response: {
          200: { content: { 'application/x-ndjson': { schema: Type.String({ description: 'NDJSON lines as described' }) } } },
          ...errors,
        },
      },
    },
    async (_request, reply) => {
      const chunks = app.store.streamSnapshot();
      // The header is read before answering, so a store that is down gets a 503, not a cut body.
      const first = await chunks.next();
      if (first.done || first.value.kind !== 'header') throw new Error('snapshot: the store sent no header');
      reply.type('application/x-ndjson; charset=utf-8');
      // A stream is sent as it is; the response schema only documents the lines.
      return reply.send(Readable.from(snapshotLines(first.value, chunks)) as unknown as string);
    },
  );

  app.get(
    '/sync/changes',
    {
      schema: {
        tags: ['sync'],
        summary: 'The changes after a revision, oldest first, with current data',
        description:
          'A change of records only carries the difference (`records`: written and removed records), like IXFR. Any other put carries the document as it is now (it may be newer than the change; applying it is idempotent; ' +
          'a zone whose name servers are not active comes without records); a document changed several times in a page appears once, at its last change, and differences before it are left out. ' +
          'A page holds at most about 4 MiB of data (and at least one change). `revision` is the last revision included: ask again with since=revision until `revision` equals `current`.',
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
      const page = await readChangePage(app.store, since, request.query.limit ?? 1000);
      if ('gone' in page) {
        throw new ApiError('GONE', `revision ${since} is older than the retained history (oldest ${page.oldest}); fetch /sync/snapshot`);
      }
      return page;
    },
  );
};
