// The change feed for edges: what one edge node serves, as a snapshot and as ordered changes.
//   GET /sync/edge/snapshot          the node's domains, their certificates and the IP lists on it
//   GET /sync/edge/changes?since=R   what changed after R for this node; 410 past the retained history
// Only consumers registered for a node (`palisade admin consumer add --node ID`) may ask; each gets
// its own node's share and nothing about other domains (see ../../sync/edge-feed-format.ts).
//
// The snapshot is read at-or-after its header's revision (paged reads, no long read transaction):
// a document that changes while it is read is re-sent by the changes after that revision, and
// every change carries the current document, so snapshot + changes always converge.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TypeBoxApp } from '../typebox-app.ts';
import { Type } from 'typebox';
import { ApiError } from '../../errors.ts';
import type { Change, ConsumerState, Page, PageRequest, Store } from '../../store/types.ts';
import {
  appliesTo,
  boundTo,
  concernsEdges,
  edgeDomain,
  edgeEndLine,
  edgeHeaderLine,
  edgeItemLine,
  nameDigest,
  type EdgeChange,
  type EdgeItem,
} from '../../sync/edge-feed-format.ts';
import type { CertificateState } from '../../model/certificate.ts';
import { withOpenKey } from '../../certs/secret-box.ts';
import { problemResponse } from '../schemas.ts';
import { consumerAuth } from './consumer-auth.ts';
import { checksCredentials } from '../plugins/rate-limit.ts';
import { UptimeReport } from '../../uptime/report.ts';

type OpenKey = (cert: CertificateState) => CertificateState;

const PAGE = 500;

/**
 * The lines of one kind of document, page by page: `pick` gives a document's item for this node,
 * or undefined when it is none of the node's business. Counts what it yields in `count.items`.
 */
async function* pagesOf<T>(list: (page: PageRequest) => Promise<Page<T>>, pick: (doc: T) => EdgeItem | undefined, count: { items: number }): AsyncGenerator<string> {
  let cursor: string | undefined;
  do {
    const page = await list({ limit: PAGE, cursor });
    let text = '';
    for (const doc of page.items) {
      const item = pick(doc);
      if (!item) continue;
      text += edgeItemLine(item);
      count.items++;
    }
    if (text) yield text;
    cursor = page.next;
  } while (cursor);
}

async function* edgeSnapshot(store: Store, node: number, openKey: OpenKey): AsyncGenerator<string> {
  const revision = await store.currentRevision();
  yield edgeHeaderLine({ revision, node: (await store.getNode(node)) ?? null });
  const count = { items: 0 };
  const served = new Set<string>();
  yield* pagesOf((p) => store.listAllZones(p), ({ domain }) => {
    if (!boundTo(domain, node)) return undefined;
    served.add(domain.domain);
    return { kind: 'domain', data: edgeDomain(domain) };
  }, count);
  yield* pagesOf((p) => store.listCertificates(p), (cert) => (served.has(cert.domain) ? { kind: 'certificate', data: openKey(cert) } : undefined), count);
  yield* pagesOf((p) => store.listChallenges(p), (challenge) => (served.has(challenge.domain) ? { kind: 'challenge', data: challenge } : undefined), count);
  yield* pagesOf((p) => store.listAllIpLists(p), (list) => (appliesTo(list, node) ? { kind: 'iplist', data: list } : undefined), count);
  yield edgeEndLine(count.items);
}

/** One stored change as this node's edge sees it; undefined for changes that are none of its business. */
async function edgeChange(store: Store, consumer: ConsumerState & { node: number }, change: Change, openKey: OpenKey): Promise<EdgeChange | undefined> {
  const { revision, key } = change;
  const node = consumer.node;
  // A change of DNS records alone, or of settings no edge acts on, leaves the edge as it was.
  if (!concernsEdges(change)) return undefined;
  if (change.kind === 'zone' || change.kind === 'certificate' || change.kind === 'challenge') {
    const kind = change.kind === 'zone' ? 'domain' : change.kind;
    const zone = await store.getZoneHead(key);
    const bound = zone !== undefined && boundTo(zone.domain, node);
    const data = !bound ? undefined : kind === 'domain' ? edgeDomain(zone.domain) : kind === 'challenge' ? await store.getChallenge(key) : await store.getCertificate(key).then((c) => c && openKey(c));
    return data ? { revision, kind, op: 'put', key, data } : { revision, kind, op: 'delete', digest: nameDigest(consumer.secret, key) };
  }
  if (change.kind === 'iplist') {
    const list = await store.getIpList(Number(key));
    return list && appliesTo(list, node) ? { revision, kind: 'iplist', op: 'put', key, data: list } : { revision, kind: 'iplist', op: 'delete', key };
  }
  if (change.kind === 'node' && Number(key) === node) {
    const data = await store.getNode(node);
    return data ? { revision, kind: 'node', op: 'put', key, data } : { revision, kind: 'node', op: 'delete', key };
  }
  return undefined;
}

const errors = { 400: problemResponse(400), 401: problemResponse(401), 403: problemResponse(403), 410: { ...problemResponse(503), description: 'Gone: load the snapshot' }, 503: problemResponse(503) };

export const edgeSyncRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Edges need the private keys in the clear to serve TLS; the store keeps them sealed.
  const openKey: OpenKey = (cert) => withOpenKey(app.secrets, cert);
  app.addHook('onRequest', consumerAuth(app.store, 'edge'));
  checksCredentials(app);

  receiveReports(app);
  serveSnapshot(app, openKey);
  serveChanges(app, openKey);
};

/** POST /sync/edge/report: an edge's measures and verdicts, taken by the uptime intake. */
function receiveReports(app: TypeBoxApp): void {
  app.post(
    '/sync/edge/report',
    {
      // A report names every domain the node watches: 10,000 domains are about 1 MB.
      bodyLimit: 64 * 1_048_576,
      schema: {
        tags: ['sync'],
        summary: "An edge's measures of its domains' backends and its verdicts on them",
        description:
          'Rows of `{domain, state: up|down|failover, measures: [{minute, c, u, r, o, ch, rh}]}`: active checks made and passed, requests proxied and answered, and sparse histograms (bucket index → count) of connect and response times, for the time since the previous report. Measures add up, so a minute may come in parts. Sent every PALISADE_EDGE_REPORT_MS and soon after a backend goes down or comes back.',
        security: [{ consumerToken: [] }],
        body: UptimeReport,
        response: { 200: Type.Object({ measures: Type.Integer(), ignored: Type.Integer(), verdicts: Type.Integer(), duplicate: Type.Boolean({ description: 'This report id was taken before: nothing counted again' }) }), ...errors },
      },
    },
    async (request) => app.notify.intake.accept(request.consumer!.node!, request.body),
  );
}

/** GET /sync/edge/snapshot: what the node serves, streamed; its header read before answering. */
function serveSnapshot(app: TypeBoxApp, openKey: OpenKey): void {
  app.get(
    '/sync/edge/snapshot',
    {
      schema: {
        tags: ['sync'],
        summary: "Everything one edge node serves, streamed as NDJSON",
        description:
          'First `{"edge":{"revision","node"}}`, then `{"domain":{...}}`, `{"certificate":{...}}`, `{"challenge":{...}}` (HTTP-01 tokens in flight) and `{"iplist":{...}}` lines, last `{"end":{"items":N}}` ' +
          '(a body without it was cut short). Only the domains bound to the consumer\'s node, their certificates and the IP lists on that node. Apply /sync/edge/changes?since=revision afterwards.',
        security: [{ consumerToken: [] }],
        response: { 200: { content: { 'application/x-ndjson': { schema: Type.String() } } }, ...errors },
      },
    },
    async (request, reply) => {
      const lines = edgeSnapshot(app.store, request.consumer!.node!, openKey);
      // The header is read before answering, so a store that is down gets a 503, not a cut body.
      const first = await lines.next();
      if (first.done) throw new Error('edge snapshot: no header');
      async function* all(): AsyncGenerator<string> {
        yield first.value as string;
        yield* lines;
      }
      reply.type('application/x-ndjson; charset=utf-8');
      return reply.send(Readable.from(all()) as unknown as string);
    },
  );
}

/** GET /sync/edge/changes: the page after a revision, of what concerns the node, the last change per document. */
function serveChanges(app: TypeBoxApp, openKey: OpenKey): void {
  app.get(
    '/sync/edge/changes',
    {
      schema: {
        tags: ['sync'],
        summary: "The changes after a revision that concern the consumer's edge node",
        description:
          'Puts carry the current document. A domain or certificate that left the node (unbound or deleted) comes as a delete with `digest` = base64url HMAC-SHA256(consumer secret, "edge-name:" + name) instead of its name. ' +
          '`revision` is the last revision looked at: ask again with since=revision until it equals `current`.',
        security: [{ consumerToken: [] }],
        querystring: Type.Object({ since: Type.Integer({ minimum: 0 }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ since: Type.Integer(), revision: Type.Integer(), current: Type.Integer(), changes: Type.Array(Type.Unsafe<EdgeChange>({ description: 'One change: revision, kind (domain | certificate | challenge | iplist | node), op, and key + data, or digest for a departure' })) }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { since } = request.query;
      const consumer = request.consumer! as ConsumerState & { node: number };
      const current = await app.store.currentRevision();
      const feed = await app.store.changesSince(since, request.query.limit ?? 1000, undefined, false);
      if ('gone' in feed) throw new ApiError('GONE', `revision ${since} is older than the retained history (oldest ${feed.oldest}); fetch /sync/edge/snapshot`);
      // Several changes of one document in a page: only the last is sent (each carries the current
      // document anyway), of those that concern an edge (records and tags do not).
      const relevant = feed.changes.filter(concernsEdges);
      const last = new Map<string, number>();
      relevant.forEach((c, i) => last.set(`${c.kind}:${c.key}`, i));
      const picked = relevant.filter((c, i) => last.get(`${c.kind}:${c.key}`) === i);
      const changes = (await Promise.all(picked.map((c) => edgeChange(app.store, consumer, c, openKey)))).filter((c): c is EdgeChange => c !== undefined);
      const end = feed.changes[feed.changes.length - 1];
      return { since, revision: end ? end.revision : since, current, changes };
    },
  );
}
