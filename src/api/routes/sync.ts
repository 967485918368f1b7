// The change feed for name servers (edges have their own: edge-sync.ts), DNS's NOTIFY + IXFR in HTTP form:
//   GET /sync/snapshot              everything a consumer needs, at revision R
//   GET /sync/changes?since=R&v=2   what changed after R, in revision order: record differences, a domain's
//                                   settings, or the current document; 410 when R is older than the retained
//                                   history (refetch the snapshot). Without v=2, settings changes come as the
//                                   whole zone (name servers of earlier releases).
//   GET /sync/zones/NAME            one zone whole: for a name server that must serve a zone it does not hold
// Authenticated by a name server's bearer token (`palisade admin consumer add`), never a customer key.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TypeBoxApp } from '../typebox-app.ts';
import { Type } from 'typebox';
import { ApiError } from '../../errors.ts';
import type { SnapshotChunk } from '../../store/types.ts';
import { readChangePage } from '../../sync/change-page.ts';
import { endLine, headerLine, zoneLine } from '../../sync/snapshot-format.ts';
import { nameServerDomain, nameServerZone, nameServerZoneJson, type KeyTrouble, type OpenSealed } from '../../sync/name-server-domain.ts';
import type { DomainState } from '../../model/domain.ts';
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
  domain: Type.Optional(Type.Unsafe<unknown>({ description: 'A change of the domain\'s settings alone (v=2): the domain as it now is; apply it to the records held' })),
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
async function* snapshotLines(header: Extract<SnapshotChunk, { kind: 'header' }>, rest: AsyncGenerator<SnapshotChunk>, zoneJson: (json: string) => string): AsyncGenerator<string> {
  yield headerLine(header);
  let zones = 0;
  try {
    for await (const chunk of rest) {
      if (chunk.kind !== 'zones') continue;
      let text = '';
      for (const json of chunk.json) text += zoneLine(zoneJson(json));
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
  // Name servers sign: they get a signed zone's keys opened (and only they: the edges' feed leaves them out).
  const secrets = app.secrets;
  const open: OpenSealed | undefined = secrets && ((sealed) => secrets.open(sealed));
  const trouble: KeyTrouble = (domain, message) => app.log.warn({ domain, reason: message }, 'dnssec: a signed zone\'s keys cannot be opened; name servers get it without keys (SERVFAIL rather than unsigned answers)');
  const domainView = (domain: DomainState) => nameServerDomain(domain, open, trouble);

  serveSnapshot(app, open, trouble);
  serveChanges(app, domainView);
  serveZone(app, open, trouble);
};

/** GET /sync/snapshot: every served zone at one revision, streamed; its header read before answering. */
function serveSnapshot(app: TypeBoxApp, open: OpenSealed | undefined, trouble: KeyTrouble): void {
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
      return reply.send(Readable.from(snapshotLines(first.value, chunks, (json) => nameServerZoneJson(json, open, trouble))) as unknown as string);
    },
  );
}

/** GET /sync/changes: a page of changes after a revision (change-page.ts), domains as name servers receive them. */
function serveChanges(app: TypeBoxApp, domainView: (domain: DomainState) => DomainState): void {
  app.get(
    '/sync/changes',
    {
      schema: {
        tags: ['sync'],
        summary: 'The changes after a revision, oldest first, with current data',
        description:
          'A change of records only carries the difference (`records`: written and removed records), like IXFR. With v=2, a change of a domain\'s settings alone carries the domain as it is now (`domain`), ' +
          'and nothing at all when it changes no setting a name server answers from (tags, caching, WAF …); a zone\'s settings come once a page, before its differences. ' +
          'Any other put carries the document as it is now (it may be newer than the change; applying it is idempotent; without v=2, ' +
          'a zone whose name servers are not active comes without records); a document changed several times in a page appears once, at its last change, and differences before it are left out. ' +
          'A page holds at most about 4 MiB of data (and at least one change). `revision` is the last revision included: ask again with since=revision until `revision` equals `current`.',
        security: [{ consumerToken: [] }],
        querystring: Type.Object(
          {
            since: Type.Integer({ minimum: 0 }),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
            v: Type.Optional(Type.Integer({ minimum: 1, maximum: 2, description: '2: settings changes as the domain alone (name servers of this release); 1 (default): as the whole zone' })),
          },
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
      const page = await readChangePage(app.store, since, request.query.limit ?? 1000, { heads: request.query.v === 2, domainView });
      if ('gone' in page) {
        throw new ApiError('GONE', `revision ${since} is older than the retained history (oldest ${page.oldest}); fetch /sync/snapshot`);
      }
      return page;
    },
  );
}

/** GET /sync/zones/{name}: one zone, whole, as it is now. */
function serveZone(app: TypeBoxApp, open: OpenSealed | undefined, trouble: KeyTrouble): void {
  app.get(
    '/sync/zones/:name',
    {
      schema: {
        tags: ['sync'],
        summary: 'One zone, whole, as it is now',
        description:
          'The zone as a snapshot line carries it (`{"domain","records"}`), whether its name servers are active or not. For a name server told to serve a zone (a settings change, v=2) whose records it does not hold.',
        security: [{ consumerToken: [] }],
        params: Type.Object({ name: Type.String({ maxLength: 253 }) }),
        response: { 200: Type.Unsafe<unknown>({ description: 'The zone' }), ...errors, 404: problemResponse(404) },
      },
    },
    async (request) => {
      const zone = await app.store.getZone(request.params.name.toLowerCase());
      if (!zone) throw new ApiError('NOT_FOUND', `no zone ${request.params.name}`);
      return nameServerZone(zone, open, trouble);
    },
  );
}
