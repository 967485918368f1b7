// The Store contract: what the API, the CLI and the sync producer need from persistence.
// Adapters (embedded LMDB, Redis) implement it; test/store/contract.ts checks any adapter.
//
// Rules every adapter keeps:
// - Every mutation commits atomically together with a new global revision (strictly increasing
//   by one) and a change entry naming what changed at that revision.
// - A mutation callback runs against the current state inside the atomic step and may throw an
//   ApiError to reject the change; it must not have side effects (an adapter may run it again).
// - A promise resolves only once the write is durable under the adapter's documented guarantee.
import type { AcmeChallengeInput, AcmeChallengeState } from '../model/acme-challenge.ts';
import type { CertificateInput, CertificateState } from '../model/certificate.ts';
import type { DomainState } from '../model/domain.ts';
import type { IpListState } from '../model/iplist.ts';
import type { EdgeNode } from '../model/node.ts';
import type { RecordState } from '../model/record.ts';
import type { ApiKeyState, Limits, UserState } from '../model/user.ts';
import type { Measure } from '../uptime/measure.ts';
import type { Resolution } from '../uptime/periods.ts';

export interface UserPatch {
  limits?: Partial<UserState['limits']>;
  disabled?: boolean;
  reservedZones?: boolean;
  /** The account's pair of name servers (assigned once, from the pool). */
  nameservers?: [string, string];
}

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
 * 'claim': a pending claim of a name another account holds (issue 26) changed; its key is the
 * name. No consumer acts on it (what they serve is the holder's zone).
 */
export type ChangeKind = 'zone' | 'node' | 'iplist' | 'user' | 'consumer' | 'certificate' | 'challenge' | 'claim';

/** A claim of a name by an account (see Store.listClaims). */
export interface ClaimRef {
  name: string;
  ownerId: number;
}

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

/** A registered change-feed consumer (a name server, later an edge). */
export interface ConsumerState {
  id: number;
  name: string;
  /** Where commit notifications are POSTed; null = the consumer only polls. */
  url: string | null;
  /** The edge node it serves as: an edge consumer (it is fed only that node's domains); null for a name server. */
  node?: number | null;
  /** SHA-256 of its bearer token. */
  tokenHash: string;
  /** HMAC key for notifications (shared with the consumer, so kept as is). */
  secret: string;
  created: string;
}

/** Kinds of internal documents (see Store.getDoc). */
export type DocKind = 'task' | 'taskid' | 'taskdue' | 'acme' | 'meta' | 'health' | 'event' | 'webhook' | 'delivery' | 'deliverydue' | 'hookpending' | 'notice' | 'claimseen' | 'claimdue' | 'nshist';

/** One node's measure of one domain's backend over one minute (or a part of it: measures add up). */
export interface UptimeRow {
  domain: string;
  node: number;
  /** Start of the minute, ms since the epoch. */
  minute: number;
  measure: Measure;
}

/** A stored period's measure of one node. */
export interface UptimePoint {
  /** Start of the period, ms. */
  period: number;
  node: number;
  measure: Measure;
}

export interface PageRequest {
  /** Opaque cursor from a previous page. */
  cursor?: string;
  limit: number;
}

export interface Page<T> {
  items: T[];
  /** Cursor of the next page, absent on the last page. */
  next?: string;
}

export interface MutationContext {
  /** Allocates a new, never reused record id. */
  nextRecordId(): number;
  nodeExists(id: number): boolean;
  /** The commit time, for `updated` fields. */
  now: string;
}

/** Returns the new domain (in `domain`), or undefined when nothing changes (no revision is spent). */
export type ZoneMutation = (zone: ZoneHead, ctx: MutationContext) => { domain: DomainState } | undefined;
/** Returns the records to write and remove, or undefined when nothing changes (no revision is spent). */
export type RecordMutation = (zone: RecordView, ctx: MutationContext) => RecordEdit | undefined;
/** An IP list without its entries: what a change of entries answers (reading them all is the caller's choice). */
export type IpListSummary = Omit<IpListState, 'ips'> & { count: number };

/** Entries to add to and remove from an IP list (those already so are left alone). */
export interface IpEntryChange {
  add: string[];
  del: string[];
}
export type IpListMutation = (list: IpListState, ctx: MutationContext) => IpListState | undefined;

export interface Store {
  readonly kind: string;

  createUser(input: { name: string; email: string; limits?: Partial<Limits> }): Promise<UserState>;
  getUser(id: number): Promise<UserState | undefined>;
  /** Changes an account's operator-set fields (limits, disabled, reserved zones, name servers); NOT_FOUND for no such user. */
  updateUser(id: number, patch: UserPatch): Promise<UserState>;
  /** Removes an account and its keys; CONFLICT while it still holds domains or IP lists. False when there is none. */
  deleteUser(id: number): Promise<boolean>;
  listUsers(): Promise<UserState[]>;
  addApiKey(userId: number, hash: string, label: string): Promise<ApiKeyState>;
  findApiKeyByHash(hash: string): Promise<ApiKeyState | undefined>;
  listApiKeys(userId: number): Promise<ApiKeyState[]>;
  /** Marks the key revoked; undefined when no such key. */
  revokeApiKey(keyId: number): Promise<ApiKeyState | undefined>;

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
  deleteZone(name: string, ownerId: number): Promise<boolean>;

  createIpList(build: (ctx: MutationContext & { id: number }) => IpListState): Promise<IpListState>;
  getIpList(id: number): Promise<IpListState | undefined>;
  listIpLists(ownerId: number, page: PageRequest): Promise<Page<IpListState>>;
  /** Every IP list of every owner, in id order (what edges act on). */
  listAllIpLists(page: PageRequest): Promise<Page<IpListState>>;
  countIpLists(ownerId: number): Promise<number>;
  updateIpList(id: number, ownerId: number, mutate: IpListMutation): Promise<IpListState>;
  /**
   * Adds and removes single entries in one revision, at a cost that does not grow with the
   * list; `checkCount` sees the count the list would have (and may throw to refuse). No
   * revision when nothing changes. Resolves to the list's head and count (its entries are not
   * read: that would cost what the list holds).
   */
  changeIpEntries(id: number, ownerId: number, change: IpEntryChange, checkCount: (count: number) => void): Promise<IpListSummary>;
  deleteIpList(id: number, ownerId: number): Promise<boolean>;

  createNode(node: Omit<EdgeNode, 'id'>): Promise<EdgeNode>;
  getNode(id: number): Promise<EdgeNode | undefined>;
  listNodes(): Promise<EdgeNode[]>;
  updateNode(id: number, patch: Partial<Omit<EdgeNode, 'id'>>): Promise<EdgeNode>;
  /** CONFLICT while a domain or IP list still names the node. */
  deleteNode(id: number): Promise<boolean>;

  /** Stores (replaces) a domain's certificate; NOT_FOUND when the domain does not exist. */
  putCertificate(cert: CertificateInput): Promise<CertificateState>;
  getCertificate(domain: string): Promise<CertificateState | undefined>;
  /** False when the domain has none. A domain's deletion removes its certificate with it. */
  deleteCertificate(domain: string): Promise<boolean>;
  /** Every stored certificate, in domain order. */
  listCertificates(page: PageRequest): Promise<Page<CertificateState>>;

  /** Stores (replaces) a domain's HTTP-01 challenge in flight; NOT_FOUND when the domain does not exist. */
  putChallenge(challenge: AcmeChallengeInput): Promise<AcmeChallengeState>;
  getChallenge(domain: string): Promise<AcmeChallengeState | undefined>;
  /** False when the domain has none. A domain's deletion removes it with it. */
  deleteChallenge(domain: string): Promise<boolean>;
  listChallenges(page: PageRequest): Promise<Page<AcmeChallengeState>>;

  /**
   * Internal documents kept beside the resources (certificate tasks, the ACME account): durable,
   * but no revision and no change entry, since no consumer acts on them. `id` is any string; a
   * listing is in `id` order, optionally only ids starting with `prefix`.
   */
  getDoc<T>(kind: DocKind, id: string): Promise<T | undefined>;
  putDoc(kind: DocKind, id: string, value: unknown): Promise<void>;
  deleteDoc(kind: DocKind, id: string): Promise<boolean>;
  listDocs<T>(kind: DocKind, page: PageRequest, prefix?: string): Promise<Page<{ id: string; value: T }>>;
  /**
   * Reads a document and writes what `mutate` makes of it in one atomic step (`mutate` gets a
   * copy and may run more than once; undefined leaves the document as it is). Resolves to the
   * document before and after.
   */
  updateDoc<T>(kind: DocKind, id: string, mutate: (current: T | undefined) => T | undefined): Promise<{ before: T | undefined; after: T | undefined }>;

  /**
   * Adds measures to their minute, hour and day (see ../uptime/periods.ts for how long each is
   * kept). Cost grows with the rows, never with what is stored.
   */
  addUptime(rows: readonly UptimeRow[]): Promise<void>;
  /** A domain's stored periods at one resolution from `from` to `to` (ms), each node apart. */
  readUptime(domain: string, resolution: Resolution, from: number, to: number): Promise<UptimePoint[]>;
  /** Drops a domain's measures (its deletion: a later owner of the name must not see them). */
  deleteUptime(domain: string): Promise<void>;
  /**
   * Takes or renews the lease `name` for `holder` for `ttlMs` when it is free, expired or
   * already `holder`'s (one atomic step); false when another holder has it. How several API
   * processes agree that exactly one runs the certificate work.
   */
  tryLease(name: string, holder: string, ttlMs: number): Promise<boolean>;

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

  createConsumer(input: Omit<ConsumerState, 'id' | 'created'>): Promise<ConsumerState>;
  listConsumers(): Promise<ConsumerState[]>;
  findConsumerByTokenHash(hash: string): Promise<ConsumerState | undefined>;
  deleteConsumer(id: number): Promise<boolean>;

  /** The revision of the last commit (0 for an empty store). */
  currentRevision(): Promise<number>;
  /**
   * Change entries after `since`, oldest first: at most `limit`, and no more record differences
   * than `maxBytes` (default CHANGES_MAX_BYTES; at least one entry); `gone` when `since`
   * predates the retained history. `records: false` leaves record differences unread (and
   * uncounted): for readers that skip them, such as the edges.
   */
  changesSince(since: number, limit: number, maxBytes?: number, records?: boolean): Promise<{ changes: Change[] } | { gone: true; oldest: number }>;

  close(): Promise<void>;
}
