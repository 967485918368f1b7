// The change feed: revisions, change entries, snapshots, and commit notifications.
import type { EdgeNode } from '../../model/node.ts';
import type { RecordDelta, Zone } from './zones.ts';

/**
 * 'claim': a pending claim of a name another account holds (issue 26) changed; its key is the
 * name. No consumer acts on it (what they serve is the holder's zone).
 */
export type ChangeKind = 'zone' | 'node' | 'iplist' | 'user' | 'consumer' | 'certificate' | 'challenge' | 'claim';

export interface Change {
  revision: number;
  /** ISO time of the commit. */
  at: string;
  kind: ChangeKind;
  /** Domain name (zone, certificate, challenge), node id, IP list id, user id or consumer id. */
  key: string;
  op: 'put' | 'delete';
  /**
   * Zone changes of records only (the domain's settings unchanged): what changed. Absent on a
   * zone change of the domain itself (create, settings, name servers), whose consumers read the
   * zone as it is.
   */
  records?: RecordDelta;
  /**
   * Zone changes of the domain's settings alone (updateZone): the names of the settings that
   * changed (none when the mutation rewrote them unchanged). The records are as they were, so a
   * consumer needs the domain only — or nothing, when it uses none of these settings. Absent on
   * other changes (a zone's creation or removal: the zone as a whole).
   */
  settings?: string[];
  /** The size of `records` as stored (bytes of JSON), so readers can bound what they hold. */
  bytes?: number;
}

/** A change of records only (its difference read or not): none of an edge's business. */
export const isRecordChange = (change: Change): boolean => change.records !== undefined || change.bytes !== undefined;

/** Detail bytes (record differences) one read of the change feed holds at most (at least one change). */
export const CHANGES_MAX_BYTES = 4 * 1_048_576;

export interface Snapshot {
  revision: number;
  /** The zones whose name servers are active (the ones served). */
  zones: Zone[];
  nodes: EdgeNode[];
  /** Revision of the last node change (0 if none is retained or none happened). */
  nodesRevision: number;
}

/**
 * A snapshot as it is read: the header first, then the served zones (name servers active) in
 * batches, each zone as its JSON text — kept ready by the store, so streaming one to a name server
 * costs no serialisation.
 */
export type SnapshotChunk =
  | { kind: 'header'; revision: number; nodesRevision: number; nodes: EdgeNode[] }
  | { kind: 'zones'; json: string[] };

/** What consumers of the change feed read, and how a process learns of commits. */
export interface ChangeFeedStore {
  /** Everything a name server needs, read at one revision (one consistent read). */
  snapshot(): Promise<Snapshot>;
  /**
   * The same read, streamed: the header, then zones in batches, so that neither the store nor a
   * consumer holds every zone at once. Iterate to the end or call return(): it may hold a read
   * transaction open meanwhile.
   */
  streamSnapshot(): AsyncGenerator<SnapshotChunk, void, undefined>;
  /** Calls `listener` after each commit made through this store object (in this process). */
  onCommit(listener: () => void): () => void;
  /**
   * Told that another process committed: the next reads see it. (LMDB readers keep one snapshot
   * until the current task is over; a read soon after another process's commit could miss it.)
   */
  committedElsewhere(): void;

  /** The revision of the last commit (0 for an empty store). */
  currentRevision(): Promise<number>;
  /**
   * Change entries after `since`, oldest first: at most `limit`, and no more record differences
   * than `maxBytes` (default CHANGES_MAX_BYTES; at least one entry); `gone` when `since`
   * predates the retained history. `records: false` leaves record differences unread (and
   * uncounted): for readers that skip them, such as the edges.
   */
  changesSince(since: number, limit: number, maxBytes?: number, records?: boolean): Promise<{ changes: Change[] } | { gone: true; oldest: number }>;
}
