// Zones (a domain and its records) and claims of names (issue 26).
import type { DomainState } from '../../model/domain.ts';
import type { RecordState } from '../../model/record.ts';
import type { MutationContext, Page, PageRequest } from './common.ts';

/** A zone as a whole: its domain and every record (read whole only where the whole is needed). */
export interface Zone {
  domain: DomainState;
  records: RecordState[];
}

/** What a zone's settings need: the domain and how many records it holds (read in O(1)). */
export interface ZoneHead {
  domain: DomainState;
  recordCount: number;
}

/**
 * A record-level change of one zone, the way the change feed carries it (like an IXFR
 * difference): records written (new or changed, as they now are) and records removed, each with
 * the owner name it had, so that a consumer rebuilds only those names.
 */
export interface RecordDelta {
  put: RecordState[];
  del: Array<{ id: number; name: string }>;
}

/**
 * The records a record mutation may read, inside the atomic step: only what it asks for, so its
 * cost does not depend on the zone's size.
 */
export interface RecordView {
  head: ZoneHead;
  /** The records at one owner name (relative, as stored: "@", "www"). */
  at(name: string): RecordState[];
  byId(id: number): RecordState | undefined;
}

/** What a record mutation decides: records to write (new ids from the context) and ids to remove. */
export interface RecordEdit {
  put: RecordState[];
  del: number[];
}

/**
 * A large record change computed outside the store against the zone as read at `revision` (a
 * zone-file import, a bulk change): plain data, so that an adapter may apply it off the event
 * loop or in pieces. `create` records get new ids (theirs are ignored), in order.
 */
export interface RecordChangeSet {
  revision: number;
  create: RecordState[];
  put: RecordState[];
  del: number[];
}

/** A claim of a name by an account (see Store.listClaims). */
export interface ClaimRef {
  name: string;
  ownerId: number;
}

/** Returns the new domain (in `domain`), or undefined when nothing changes (no revision is spent). */
export type ZoneMutation = (zone: ZoneHead, ctx: MutationContext) => { domain: DomainState } | undefined;
/** Returns the records to write and remove, or undefined when nothing changes (no revision is spent). */
export type RecordMutation = (zone: RecordView, ctx: MutationContext) => RecordEdit | undefined;

/** Zones, their records and claims of names. */
export interface ZoneStore {
  // Claims (issue 26). A name has at most one holder (its zone at the name: what name servers,
  // edges and certificates read) and any number of other accounts' pending claims beside it.
  // Methods taking an owner act on that owner's claim, whichever it is; `getZone(name)`,
  // `getZoneHead(name)` and `getRecord(zone, id)` without one read the holder's. Only a proven
  // domain (model/domain.ts isProven) is served. A domain created proven may not overlap another
  // account's proven domain (DOMAIN_OVERLAP); pending claims overlap anything, and one proven by
  // evidence may lie under another account's proven domain (its owner delegated or placed the token).

  /**
   * Creates a zone (with any records). A proven domain (no claim, or a verified one): CONFLICT
   * when the name is held, DOMAIN_OVERLAP at, under or above another account's proven domain. A
   * pending claim: CONFLICT only when the owner has a claim of the name already; it holds the
   * name when no one does, else it sits beside the holder. LIMIT_EXCEEDED past the owner's limit.
   */
  createZone(build: (ctx: MutationContext) => Zone): Promise<ZoneHead>;
  /** The whole zone: its domain and every record (cost grows with the zone). */
  getZone(name: string, ownerId?: number): Promise<Zone | undefined>;
  getZoneHead(name: string, ownerId?: number): Promise<ZoneHead | undefined>;
  getRecord(zone: string, id: number, ownerId?: number): Promise<RecordState | undefined>;
  /** The holder's records at one owner name (relative, "@", "_palisade-verify.shop"). */
  getRecordsAt(zone: string, owner: string): Promise<RecordState[]>;
  /** Every claim of a name: the holder's first, then the others in owner order. */
  listClaims(name: string): Promise<ZoneHead[]>;
  /** The pending claims at or under a name (every account's). */
  pendingClaimsUnder(name: string): Promise<ClaimRef[]>;
  /**
   * Proves the owner's claim in one step: `mutate` gives the proven domain. When another
   * account holds the name with a pending claim, that claim is released (removed with its
   * records, returned) and this one takes the name, records and all; CONFLICT when another
   * account holds it proven. NOT_FOUND when the owner has no claim of the name.
   */
  proveClaim(name: string, ownerId: number, mutate: (head: ZoneHead) => DomainState): Promise<{ head: ZoneHead; released?: ZoneHead }>;
  /** The owner's zones in name order, optionally only those carrying `tag`. */
  listZones(ownerId: number, page: PageRequest, tag?: string): Promise<Page<ZoneHead>>;
  countZones(ownerId: number): Promise<number>;
  /** Every zone of every owner in name order (the edge serves domains whatever their name servers). */
  listAllZones(page: PageRequest): Promise<Page<ZoneHead>>;
  /** Applies `mutate` to the owner's domain settings; NOT_FOUND when missing or owned by someone else. */
  updateZone(name: string, ownerId: number, mutate: ZoneMutation): Promise<ZoneHead>;
  /**
   * Changes some records of the owner's zone in one revision; the change entry carries the
   * difference. Cost grows with the records read and written, not with the zone.
   */
  changeRecords(name: string, ownerId: number, mutate: RecordMutation): Promise<{ head: ZoneHead; delta: RecordDelta }>;
  /**
   * Applies a change set to the owner's zone as one revision and one change entry (the difference,
   * as changeRecords'), only if the zone is still at `change.revision`: else 'moved' and nothing
   * changes. However large the set, neither this process's event loop nor the store is held for
   * long (other accounts' requests go on meanwhile), and readers see the zone before or after,
   * never between. `ids`: the new records' ids, in `create` order.
   */
  applyRecordChangeSet(name: string, ownerId: number, change: RecordChangeSet): Promise<{ head: ZoneHead; ids: number[] } | 'moved'>;
  deleteZone(name: string, ownerId: number): Promise<boolean>;
}
