// A page of the name servers' change feed, read from the store: what GET /sync/changes sends and
// what the serve role applies in-process — one definition, so both consumers see the same thing.
//
// - A change of records carries its difference (like IXFR): bytes grow with the change, never
//   with the zone.
// - A change of a domain's settings alone carries nothing when it touches no setting a name
//   server answers from (tags, caching, WAF …: it is left out), else only the domain as it now is
//   (`domain`): the consumer applies it to the records it holds — a zone's records never travel
//   because its settings changed. (Consumers that do not ask for these, `heads: false`, get such
//   a change as the whole zone, as before.)
// - A zone's creation or removal, and node changes, carry the document as it now is (it may be
//   newer than the change: applying it is idempotent, and the differences after it in the page
//   are applied again harmlessly, since they name records by id). A zone whose name servers are
//   not active comes without records to consumers of earlier releases (they only stop serving it).
// - Coalesced: one account's repeated changes to one zone cost once a page. A key's whole
//   document comes once, at its last whole change, and supersedes what came before it in the
//   page; a zone's settings changes come once, as they now are, before its differences (the
//   differences are kept, each in order: nothing is composed, so nothing can be lost).
//   Other kinds (accounts, consumers, IP lists, certificates) are none of a name server's
//   business: bare entries.
// - A page holds at most PAGE_BYTES of data (at least one change), so it is never huge.
import type { DomainState } from '../model/domain.ts';
import { NAME_SERVER_SETTINGS } from '../model/domain.ts';
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
  /** The document as it now is (puts other than record differences and settings changes). */
  data?: unknown;
  /** A zone's record difference. */
  records?: RecordDelta;
  /** A zone's settings as they now are, when only they changed (its records are as they were). */
  domain?: DomainState;
}

export interface ChangePage {
  since: number;
  /** The last revision included. */
  revision: number;
  current: number;
  changes: FeedChange[];
}

export interface PageOptions {
  /** Bytes of data a page holds at most (at least one change). */
  pageBytes?: number;
  /**
   * Settings changes as the domain alone (true: every consumer of this release), or as the whole
   * zone (false: name servers of earlier releases, which build a zone from whole documents only).
   */
  heads?: boolean;
  /** A domain as this consumer receives it (name servers: signing keys opened, name-server-domain.ts); as stored by default. */
  domainView?: (domain: DomainState) => DomainState;
}

/** What an entry is to a name server. */
type Role = 'whole' | 'head' | 'difference' | 'none' | 'bare';

/** Whether a change of these settings changes a name server's answers. */
const usedByNameServers = (settings: readonly string[]) => settings.some((s) => NAME_SERVER_SETTINGS.has(s));

function roleOf(change: Change, heads: boolean): Role {
  if (change.kind === 'node') return 'whole';
  if (change.kind !== 'zone') return 'bare';
  if (change.records) return 'difference';
  if (change.settings === undefined) return 'whole';
  if (!usedByNameServers(change.settings)) return 'none';
  return heads ? 'head' : 'whole';
}

/** Reads one page of changes after `since`; `gone` when `since` predates the retained history. */
export async function readChangePage(store: Store, since: number, limit: number, options: PageOptions = {}): Promise<ChangePage | { gone: true; oldest: number }> {
  const pageBytes = options.pageBytes ?? PAGE_BYTES;
  const heads = options.heads ?? true;
  const view = options.domainView ?? ((domain: DomainState) => domain);
  // The store's reads are synchronous under their promises: let queries in before, and between
  // documents below, so that reading a page never holds the event loop for long.
  await yieldToIo();
  const current = await store.currentRevision();
  const feed = await store.changesSince(since, limit, pageBytes);
  if ('gone' in feed) return feed;
  const roles = feed.changes.map((change) => roleOf(change, heads));
  // Documents as they now are, read once per key: whole ones, and domains for settings changes.
  const docs = new Map<string, unknown>();
  const domains = new Map<string, DomainState | undefined>();
  let bytes = 0;
  let cut = feed.changes.length;
  for (let i = 0; i < feed.changes.length; i++) {
    const change = feed.changes[i]!;
    const role = roles[i]!;
    let size = 0;
    if (role === 'difference') size = change.bytes ?? 0;
    else if (role === 'whole' && change.op === 'put' && !docs.has(docKey(change))) {
      await yieldToIo();
      const data = await documentOf(store, change, heads, view);
      docs.set(docKey(change), data);
      size = data === undefined ? 0 : JSON.stringify(data).length;
    } else if (role === 'head' && !domains.has(change.key)) {
      const stored = (await store.getZoneHead(change.key))?.domain;
      const domain = stored && view(stored);
      domains.set(change.key, domain);
      size = domain === undefined ? 0 : JSON.stringify(domain).length;
    }
    if (i > 0 && bytes + size > pageBytes) {
      cut = i;
      break;
    }
    bytes += size;
  }
  const included = feed.changes.slice(0, cut);
  const changes = pageChanges(included, roles, docs, domains);
  const last = included[included.length - 1];
  return { since, revision: last ? last.revision : Math.max(since, 0), current, changes };
}

/**
 * What the page sends of the changes it includes (`roles` theirs, `docs` and `domains` as read):
 * each document's last whole change, a zone's settings as they now are once before its
 * differences, the differences, the bare changes; nothing of what a later entry supersedes.
 */
function pageChanges(included: readonly Change[], roles: readonly Role[], docs: ReadonlyMap<string, unknown>, domains: ReadonlyMap<string, DomainState | undefined>): FeedChange[] {
  // Where each key's last whole change (put or delete) and last settings change are in the page.
  const lastWhole = new Map<string, number>();
  const lastHead = new Map<string, number>();
  included.forEach((c, i) => {
    if (roles[i] === 'whole') lastWhole.set(docKey(c), i);
    else if (roles[i] === 'head') lastHead.set(c.key, i);
  });
  const headSent = new Set<string>();
  return included.flatMap((change, i): FeedChange[] => {
    const role = roles[i]!;
    if (role === 'none') return [];
    if (role === 'bare') return [change];
    const key = docKey(change);
    const whole = lastWhole.get(key);
    if (role === 'whole') {
      if (whole !== i) return [];
      if (change.op === 'delete') return [change];
      const data = docs.get(key);
      // Gone since: report the state the consumer must reach.
      return [data === undefined ? { ...change, op: 'delete' } : { ...change, data }];
    }
    // A whole document later in the page supersedes this; one earlier already holds its settings.
    if (whole !== undefined && (whole > i || role === 'head')) return [];
    const out: FeedChange[] = [];
    const head = lastHead.get(change.key);
    if (whole === undefined && head !== undefined && !headSent.has(change.key)) {
      // The settings as they now are, once, before the zone's differences in this page (a
      // zone that starts to be served is built from the records held before the page).
      headSent.add(change.key);
      const { revision, at, kind, key: name } = included[head]!;
      const domain = domains.get(name);
      out.push(domain ? { revision, at, kind, key: name, op: 'put', domain } : { revision, at, kind, key: name, op: 'delete' });
    }
    if (role === 'difference') {
      const { bytes: _size, settings: _s, ...difference } = change;
      out.push(difference);
    }
    return out;
  });
}

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

const docKey = (change: Change | FeedChange) => `${change.kind}:${change.key}`;

/**
 * `withRecords`: a zone's records even when it is not served — a consumer of settings changes
 * keeps them, to serve the zone when it is activated (a whole document is a zone's creation, or
 * an entry of an earlier release).
 */
async function documentOf(store: Store, change: Change, withRecords: boolean, view: (domain: DomainState) => DomainState): Promise<unknown> {
  switch (change.kind) {
    case 'zone': {
      const head = await store.getZoneHead(change.key);
      if (!head) return undefined;
      // Not served by an earlier release: it drops it, so its records would be bytes for nothing.
      const zone = head.domain.ns_active || withRecords ? await store.getZone(change.key) : ({ domain: head.domain, records: [] } satisfies Zone);
      return zone && { ...zone, domain: view(zone.domain) };
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
      else if (change.domain) zones.push({ name: change.key, head: change.domain });
      else {
        // A zone not served is passed on too: the index stops serving it, a consumer may keep it.
        zones.push({ name: change.key, zone: change.op === 'put' ? (change.data as Zone) : undefined });
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
