// A page of the name servers' change feed, read from the store: what GET /sync/changes sends and
// what the serve role applies in-process — one definition, so both consumers see the same thing.
//
// - A change of records carries its difference (like IXFR): bytes grow with the change, never
//   with the zone.
// - Zone and node changes carry the document as it now is (it may be newer than the change: applying
//   it is idempotent, and the differences after it in the page are applied again harmlessly, since
//   they name records by id). A zone whose name servers are not active comes without records: a
//   consumer only stops serving it. A document changed several times in a page comes once, at its
//   key's last change; differences before that are dropped (the document supersedes them).
//   Other kinds (accounts, consumers, IP lists, certificates) are none of a name server's
//   business: bare entries.
// - A page holds at most PAGE_BYTES of data (at least one change), so it is never huge.
import type { EdgeNode } from '../model/node.ts';
import type { Change, RecordDelta, Store, Zone } from '../store/types.ts';
import type { IndexBatch, ZoneChange } from '../dns/zone/apply.ts';

export const PAGE_BYTES = 4 * 1_048_576;

export interface FeedChange {
  revision: number;
  at: string;
  kind: string;
  key: string;
  op: 'put' | 'delete';
  /** The document as it now is (puts other than record differences). */
  data?: unknown;
  /** A zone's record difference. */
  records?: RecordDelta;
}

export interface ChangePage {
  since: number;
  /** The last revision included. */
  revision: number;
  current: number;
  changes: FeedChange[];
}

/** Reads one page of changes after `since`; `gone` when `since` predates the retained history. */
export async function readChangePage(store: Store, since: number, limit: number, pageBytes = PAGE_BYTES): Promise<ChangePage | { gone: true; oldest: number }> {
  // The store's reads are synchronous under their promises: let queries in before, and between
  // documents below, so that reading a page never holds the event loop for long.
  await yieldToIo();
  const current = await store.currentRevision();
  const feed = await store.changesSince(since, limit, pageBytes);
  if ('gone' in feed) return feed;
  const docs = new Map<string, unknown>();
  let bytes = 0;
  let cut = feed.changes.length;
  for (let i = 0; i < feed.changes.length; i++) {
    const change = feed.changes[i]!;
    let size = 0;
    if (change.records) size = change.bytes ?? 0;
    else if (change.op === 'put' && !docs.has(docKey(change)) && carriesDocument(change)) {
      await yieldToIo();
      const data = await documentOf(store, change);
      docs.set(docKey(change), data);
      size = data === undefined ? 0 : JSON.stringify(data).length;
    }
    if (i > 0 && bytes + size > pageBytes) {
      cut = i;
      break;
    }
    bytes += size;
  }
  const included = feed.changes.slice(0, cut);
  // Where each key's last whole-document change (put or delete) is in the page.
  const lastWhole = new Map<string, number>();
  included.forEach((c, i) => {
    if (!c.records) lastWhole.set(docKey(c), i);
  });
  const changes = included.flatMap((change, i): FeedChange[] => {
    const whole = lastWhole.get(docKey(change));
    if (change.records) {
      const { bytes: _size, ...difference } = change;
      return whole !== undefined && whole > i ? [] : [difference];
    }
    if (whole !== i) return [];
    if (change.op === 'delete' || !carriesDocument(change)) return [change];
    const data = docs.get(docKey(change));
    // Gone since: report the state the consumer must reach.
    return [data === undefined ? { ...change, op: 'delete' } : { ...change, data }];
  });
  const last = included[included.length - 1];
  return { since, revision: last ? last.revision : Math.max(since, 0), current, changes };
}

/**
 * Name servers answer from zones and nodes only: other changes (accounts, consumers, IP lists,
 * certificates) travel as bare entries, so that a big IP list changed often costs them nothing.
 */
const carriesDocument = (change: Change) => change.kind === 'zone' || change.kind === 'node';

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

const docKey = (change: Change | FeedChange) => `${change.kind}:${change.key}`;

async function documentOf(store: Store, change: Change): Promise<unknown> {
  switch (change.kind) {
    case 'zone': {
      const head = await store.getZoneHead(change.key);
      if (!head) return undefined;
      // Not served: the consumer drops it, so its records would be bytes for nothing.
      return head.domain.ns_active ? await store.getZone(change.key) : ({ domain: head.domain, records: [] } satisfies Zone);
    }
    case 'node':
      return store.getNode(Number(change.key));
    default:
      return undefined;
  }
}

/**
 * What a page does to a zone index, given the node list before it: the zones' changes in order,
 * and the new node list when nodes changed.
 */
export function indexBatchOf(changes: readonly FeedChange[], nodesBefore: readonly EdgeNode[]): IndexBatch & { nodeList: EdgeNode[] } {
  const zones: ZoneChange[] = [];
  const nodes = new Map(nodesBefore.map((n) => [n.id, n]));
  let nodeRevision = 0;
  for (const change of changes) {
    if (change.kind === 'zone') {
      if (change.records) zones.push({ name: change.key, delta: change.records, revision: change.revision });
      else {
        const zone = change.op === 'put' ? (change.data as Zone) : undefined;
        zones.push({ name: change.key, zone: zone?.domain.ns_active ? zone : undefined });
      }
    } else if (change.kind === 'node') {
      nodeRevision = change.revision;
      if (change.op === 'put') nodes.set(Number(change.key), change.data as EdgeNode);
      else nodes.delete(Number(change.key));
    }
  }
  const nodeList = [...nodes.values()];
  return { zones, nodes: nodeRevision > 0 ? { list: nodeList, revision: nodeRevision } : undefined, nodeList };
}
