// Where an edge's feed comes from, in one shape for both (the edge view, edge-view.ts, reads
// either): a snapshot as the edge feed's lines (edge-feed-format.ts) and pages of its changes.
//   store (the serve role's edge, which stands for every node): every domain, certificate (its
//   key opened), HTTP-01 challenge and IP list, read in this process; a page is the store's
//   changes that concern edges, one per key, each document as it now is;
//   HTTP (the edge role, one node's share): GET /sync/edge/snapshot, /sync/edge/changes.
import type { CertificateState } from '../../model/certificate.ts';
import type { Change, Page, PageRequest, Store } from '../../store/types.ts';
import { LineSplitter } from '../../common/ndjson.ts';
import { concernsEdges, edgeDomain, parseEdgeLine, type EdgeChange, type EdgeChangePage, type EdgeLine } from '../../sync/edge-feed-format.ts';
import type { FeedSource } from '../../sync/feed-consumer.ts';
import type { HttpFeed } from '../../sync/http-source.ts';
import { storeSourceParts } from '../../sync/store-source.ts';

/** Lines in order: the header, items, the end line. */
export type EdgeSnapshot = Iterable<EdgeLine> | AsyncIterable<EdgeLine>;
export type EdgeSource = FeedSource<EdgeChangePage, EdgeSnapshot>;

const STORE_PAGE = 1000;

/**
 * A stored domain as the edge keeps it: a plain copy. The store's decoder returns objects whose
 * strings are slices of the whole stored record (each kept alive by one field) with their
 * properties in dictionary form: ~1.6 KB of property table and ~0.6 KB of record per domain, held
 * for as long as the edge serves it. A JSON copy is what an edge fed over HTTP holds anyway.
 */
const heldDomain = (domain: Parameters<typeof edgeDomain>[0]) => JSON.parse(JSON.stringify(edgeDomain(domain))) as ReturnType<typeof edgeDomain>;

async function all<T>(list: (page: PageRequest) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await list({ limit: 1000, cursor });
    out.push(...page.items);
    cursor = page.next;
  } while (cursor);
  return out;
}

/** `openKey` gives a certificate with its private key opened (the store keeps it sealed). */
export function edgeStoreSource(store: Store, pollMs: number, openKey: (cert: CertificateState) => CertificateState): EdgeSource {
  return {
    who: 'edge sync',
    ...storeSourceParts(store, pollMs),
    snapshot: async () => {
      const revision = await store.currentRevision();
      const lines: EdgeLine[] = [{ kind: 'header', header: { revision, node: null } }];
      for (const zone of await all((p) => store.listAllZones(p))) lines.push({ kind: 'domain', data: heldDomain(zone.domain) });
      for (const cert of await all((p) => store.listCertificates(p))) lines.push({ kind: 'certificate', data: openKey(cert) });
      for (const challenge of await all((p) => store.listChallenges(p))) lines.push({ kind: 'challenge', data: challenge });
      for (const list of await all((p) => store.listAllIpLists(p))) lines.push({ kind: 'iplist', data: list });
      lines.push({ kind: 'end', items: lines.length - 1 });
      return lines;
    },
    changes: async (since) => {
      const current = await store.currentRevision();
      const feed = await store.changesSince(since, STORE_PAGE, undefined, false);
      if ('gone' in feed) return feed;
      const last = feed.changes[feed.changes.length - 1];
      // Record-only zone changes, and changes of settings no edge acts on (tags), leave the edge as it was.
      const latest = new Map(feed.changes.filter(concernsEdges).map((c) => [`${c.kind}:${c.key}`, c]));
      const changes = await Promise.all([...latest.values()].map((change) => edgeChangeOf(store, change, openKey)));
      // Nothing after `since` (none retained): up to date at the revision read.
      const revision = last ? last.revision : since;
      return { since, revision, current: Math.max(current, revision), changes: changes.filter((c) => c !== undefined) };
    },
  };
}

/** A stored change as an edge receives it: the document as it now is, or its deletion by name. */
async function edgeChangeOf(store: Store, { revision, kind, key }: Change, openKey: (cert: CertificateState) => CertificateState): Promise<EdgeChange | undefined> {
  if (kind === 'zone') {
    const zone = await store.getZoneHead(key);
    return zone ? { revision, kind: 'domain', op: 'put', key, data: heldDomain(zone.domain) } : { revision, kind: 'domain', op: 'delete', key };
  }
  if (kind === 'certificate') {
    const cert = await store.getCertificate(key);
    return cert ? { revision, kind, op: 'put', key, data: openKey(cert) } : { revision, kind, op: 'delete', key };
  }
  if (kind === 'challenge') {
    const challenge = await store.getChallenge(key);
    return challenge ? { revision, kind, op: 'put', key, data: challenge } : { revision, kind, op: 'delete', key };
  }
  if (kind === 'iplist') {
    const list = await store.getIpList(Number(key));
    return list ? { revision, kind, op: 'put', key, data: list } : { revision, kind, op: 'delete', key };
  }
  // Accounts, consumers, nodes: the all-in-one edge stands for every node and acts on none of them.
  return undefined;
}

export function edgeHttpSource(http: HttpFeed): EdgeSource {
  return {
    who: 'edge sync',
    ...http.parts,
    snapshot: async () => streamedLines(await http.snapshot('/sync/edge/snapshot')),
    changes: (since) => http.changes<EdgeChangePage>('/sync/edge/changes', since),
  };
}

async function* streamedLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<EdgeLine> {
  const splitter = new LineSplitter();
  for await (const chunk of body) for (const line of splitter.push(chunk)) yield parseEdgeLine(line.text);
  for (const line of splitter.end()) yield parseEdgeLine(line.text);
}
