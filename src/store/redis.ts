// The Redis store (ioredis), for several API processes sharing state. Every mutation reads the
// documents it depends on, computes the new state in JS (the same pure rules as the embedded
// store), and commits with one Lua script that re-checks those documents, takes the next
// revision, writes, and appends the change to a stream — atomically. A concurrent writer makes the
// check fail and the mutation is recomputed on the new state.
//
// All keys share one hash tag, so the store also runs on Redis Cluster (in one slot).
// Redis unreachable: commands fail at once (no offline queue); Redis hung: within 5 s and the API answers
// 503 STORE_UNAVAILABLE; the client reconnects by itself.
import { randomBytes } from 'node:crypto';
import { Redis, type ChainableCommander } from 'ioredis';
import { ApiError, notFound } from '../errors.ts';
import type { AcmeChallengeInput, AcmeChallengeState } from '../model/acme-challenge.ts';
import type { CertificateInput, CertificateState } from '../model/certificate.ts';
import type { IpListState } from '../model/iplist.ts';
import { settingsChange, withoutNsRevision } from '../model/domain.ts';
import type { EdgeNode } from '../model/node.ts';
import type { RecordState } from '../model/record.ts';
import { DEFAULT_LIMITS, type ApiKeyState, type UserState } from '../model/user.ts';
import { decodeCursor, decodeIdCursor, encodeCursor } from './cursor.ts';
import { COMMIT_SCRIPT, INDEX_ZONE_TREE_SCRIPT } from './redis-commit.ts';
import { applyUserPatch } from './user-patch.ts';
import { ancestorsOf, claimKey, nameOfReversed, overlapError, reversedName } from './name-tree.ts';
import { isProven, type DomainState } from '../model/domain.ts';
import { collectSnapshot } from './snapshot.ts';
import { RedisUptime, UPTIME_SCRIPT } from './uptime-redis.ts';
import type { Resolution } from '../uptime/periods.ts';
import type { UptimePoint, UptimeRow } from './types.ts';
import type { UserPatch } from './types.ts';
import { CHANGES_MAX_BYTES } from './types.ts';
import type { Change, ChangeKind, ClaimRef, ConsumerState, DocKind, IpEntryChange, IpListSummary, MutationContext, Page, PageRequest, RecordDelta, RecordMutation, RecordView, Snapshot, SnapshotChunk, Store, Zone, ZoneHead, ZoneMutation } from './types.ts';

const MAX_ATTEMPTS = 200;

/** KEYS[1] lease, ARGV holder, ttl ms: 1 when taken or renewed, 0 when another holder has it. */
/** Writes a document only if it is still what was read ("" for absent: stored documents are JSON, never empty). */
const DOC_CAS_SCRIPT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if (current or '') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1
`;

const LEASE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return 1`;

/** An IP list as kept: everything but its entries, which are kept in a sorted set. */
type IpListHead = IpListSummary;
/** Zones per streamed snapshot chunk (one MGET). */
const SNAPSHOT_BATCH = 500;
export interface RedisStoreOptions {
  url: string;
  /** Key prefix; keep the {braces}: they pin every key to one Cluster slot. */
  prefix?: string;
  changeRetention?: number;
}

/** Thrown by a record view for what is not read yet (see changeRecords). */
class ReadFirst extends Error {
  constructor(readonly what: { owner?: string; id?: number }) {
    super('read first');
  }
  get owner(): string | undefined {
    return this.what.owner;
  }
  get id(): number | undefined {
    return this.what.id;
  }
}

function readFirst(what: { owner?: string; id?: number }): never {
  throw new ReadFirst(what);
}

type Op =
  | { op: 'set'; key: string; v: string }
  /** Values that may carry a customer's text: passed as arguments, never inside the plan. */
  | { op: 'hsetv'; key: string; f: string; v: string }
  | { op: 'zaddv' | 'zremv'; key: string; v: string }
  /** A document whose revision the script fills in: parts[0] + revision + parts[1]. */
  | { op: 'setrev'; key: string; parts: [string, string] }
  | { op: 'del'; key: string }
  | { op: 'zadd' | 'zrem'; key: string; v: string; s?: number }
  | { op: 'hset'; key: string; f: string; v: string }
  | { op: 'hdel'; key: string; f: string }
  | { op: 'rename'; key: string; to: string };

interface Plan<T> {
  /** Documents read before computing, with the values they had (null = absent). */
  checks: Array<[string, string | null]>;
  ops: Op[];
  /** `settings`: our own field names (never a customer's text), so kept in the plan itself. */
  change: { kind: ChangeKind; key: string; op: 'put' | 'delete'; settings?: string[] };
  /** The change's detail (a record delta) as JSON text: stored beside the entry as given. */
  detail?: string;
  limit?: { key: string; max: number; error: ApiError };
  /** A new domain: refused when it lies at, under or above another owner's domain. */
  overlap?: { name: string; owner: number };
  /** The result, given the committed revision. */
  result: (revision: number) => T;
}

type Attempt<T> = Plan<T> | { unchanged: T };

declare module 'ioredis' {
  interface RedisCommander {
    palisadeCommit(numKeys: number, ...args: string[]): Promise<number>;
    palisadeLease(key: string, holder: string, ttlMs: string): Promise<number>;
    palisadeDocCas(hash: string, ids: string, id: string, expected: string, value: string): Promise<number>;
  }
}

/**
 * A document as two texts around its revision, for the script to join with the revision it takes.
 * The split is made by structure: the revision is set to a random marker that is checked to occur
 * exactly once in the serialised document, so no stored text is ever searched or rewritten.
 */
function withRevision<T extends object>(key: string, doc: T, path: (d: T) => { revision: number }): Op {
  const copy = structuredClone(doc);
  for (;;) {
    const marker = `\u0000rev${randomBytes(12).toString('hex')}`;
    (path(copy) as { revision: unknown }).revision = marker;
    const text = JSON.stringify(copy);
    const quoted = JSON.stringify(marker);
    const at = text.indexOf(quoted);
    if (at !== -1 && text.indexOf(quoted, at + 1) === -1) return { op: 'setrev', key, parts: [text.slice(0, at), text.slice(at + quoted.length)] };
  }
}

export class RedisStore implements Store {
  readonly kind = 'redis';
  private readonly redis: Redis;
  private readonly p: string;
  private readonly retention: number;
  private readonly commitListeners = new Set<() => void>();
  private readonly uptime: RedisUptime;

  constructor(options: RedisStoreOptions) {
    this.p = options.prefix ?? '{palisade}:';
    this.retention = options.changeRetention ?? 100_000;
    this.redis = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 1000,
      // Long enough for the largest atomic commit the limits allow (a 100,000-entry IP list is
      // one script; under load it took over a second): a timed-out commit may still be applied,
      // and would be answered 503 although made.
      commandTimeout: 5000,
      retryStrategy: (times) => Math.min(times * 100, 1000),
      lazyConnect: false,
    });
    // Connection problems surface as 503s per request; the client reconnects by itself.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('palisadeCommit', { lua: COMMIT_SCRIPT });
    this.redis.defineCommand('palisadeLease', { lua: LEASE_SCRIPT, numberOfKeys: 1 });
    this.redis.defineCommand('palisadeUptime', { lua: UPTIME_SCRIPT, numberOfKeys: 0 });
    this.redis.defineCommand('palisadeDocCas', { lua: DOC_CAS_SCRIPT, numberOfKeys: 2 });
    this.uptime = new RedisUptime(this.redis, (domain, resolution, period) => this.k('upt', domain, resolution, period));
  }

  private k(...parts: Array<string | number>): string {
    return this.p + parts.join(':');
  }

  /** Waits (at most a second) for the connection: commands are never queued while it is down. */
  private async connected(): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        reject(new Error(`not connected (${this.redis.status})`));
      }, 1000);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.redis.once('ready', onReady);
    });
  }

  /** Maps connection failures and timeouts to 503, leaving the store's own rejections alone. */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      await this.connected();
      return await fn();
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw new ApiError('STORE_UNAVAILABLE', `the store (Redis) did not answer: ${(error as Error).message}`);
    }
  }

  /** The documents an index (sorted set of ids) names, in index order. */
  private async documents<T>(index: string, kind: string): Promise<T[]> {
    const ids = await this.redis.zrange(index, '0', '-1');
    if (ids.length === 0) return [];
    const docs = await this.redis.mget(ids.map((id) => this.k(kind, id)));
    return docs.flatMap((d) => (d ? [JSON.parse(d) as T] : []));
  }

  private async json<T>(key: string): Promise<T | undefined> {
    const text = await this.redis.get(key);
    return text === null ? undefined : (JSON.parse(text) as T);
  }

  /** Reads, computes and commits, again and again while other writers get in between. */
  private mutate<T>(attempt: () => Promise<Attempt<T>>): Promise<T> {
    return this.guard(async () => {
      for (let i = 0; i < MAX_ATTEMPTS; i++) {
        const plan = await attempt();
        if ('unchanged' in plan) return plan.unchanged;
        const keys: string[] = [this.k('rev'), this.k('changes')];
        const index = (key: string) => {
          let at = keys.indexOf(key);
          if (at === -1) at = keys.push(key) - 1;
          return at + 1;
        };
        // Values go as separate arguments (ARGV[2…]), never inside the plan's JSON.
        const args: string[] = [];
        const arg = (value: string) => args.push(value) + 1;
        const body = {
          checks: plan.checks.map(([key, v]) => (v === null ? { k: index(key), absent: true } : { k: index(key), a: arg(v) })),
          limit: plan.limit && { k: index(plan.limit.key), max: plan.limit.max },
          overlap: plan.overlap && {
            owners: index(this.k('zoneowners')),
            tree: index(this.k('zonetree')),
            owner: plan.overlap.owner,
            rev: reversedName(plan.overlap.name),
            ancestors: ancestorsOf(plan.overlap.name),
          },
          ops: plan.ops.map((o) => {
            const k = index(o.key);
            switch (o.op) {
              case 'set':
                return { op: o.op, k, a: arg(o.v) };
              case 'setrev':
                return { op: o.op, k, a: arg(o.parts[0]), b: arg(o.parts[1]) };
              case 'zadd':
              case 'zrem':
                return { op: o.op, k, m: o.v, s: o.s };
              case 'hset':
                return { op: o.op, k, f: o.f, m: o.v };
              case 'hsetv':
                return { op: o.op, k, f: o.f, a: arg(o.v) };
              case 'zaddv':
              case 'zremv':
                return { op: o.op, k, a: arg(o.v) };
              case 'rename':
                return { op: o.op, k, t: index(o.to) };
              default:
                return { op: o.op, k, f: 'f' in o ? o.f : undefined };
            }
          }),
          change: { ...plan.change, at: new Date().toISOString(), ...(plan.detail !== undefined && { bytes: plan.detail.length }) },
          detail: plan.detail === undefined ? undefined : arg(plan.detail),
          details: index(this.k('changedetails')),
          retention: this.retention,
          nodes: plan.change.kind === 'node' ? index(this.k('nodesRevision')) : undefined,
        };
        const revision = await this.redis.palisadeCommit(keys.length, ...keys, JSON.stringify(body), ...args);
        if (revision === -2) throw plan.limit!.error;
        if (revision === -3) throw await this.overlapReason(plan.overlap!.name, plan.overlap!.owner);
        if (revision > 0) {
          for (const listener of this.commitListeners) listener();
          return plan.result(revision);
        }
        // Someone else committed in between: back off a little, then recompute.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 1 + i * 2)));
      }
      throw new ApiError('STORE_UNAVAILABLE', 'too much contention on one resource; try again');
    });
  }

  onCommit(listener: () => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  committedElsewhere(): void {
    // Every Redis read sees every commit already.
  }

  // ---- users and keys

  async createUser(input: { name: string; email: string; limits?: Partial<UserState['limits']> }): Promise<UserState> {
    const id = await this.guard(() => this.redis.incr(this.k('seq', 'user')));
    const user: UserState = { id, name: input.name, email: input.email, created: new Date().toISOString(), limits: { ...DEFAULT_LIMITS, ...input.limits } };
    return this.mutate(async () => ({
      checks: [],
      ops: [
        { op: 'set', key: this.k('user', id), v: JSON.stringify(user) },
        { op: 'zadd', key: this.k('users'), s: id, v: String(id) },
      ],
      change: { kind: 'user', key: String(id), op: 'put' },
      result: () => user,
    }));
  }

  getUser(id: number): Promise<UserState | undefined> {
    return this.guard(() => this.json<UserState>(this.k('user', id)));
  }

  updateUser(id: number, patch: UserPatch): Promise<UserState> {
    const key = this.k('user', id);
    return this.mutate(async () => {
      const text = await this.redis.get(key);
      if (text === null) throw notFound(`user ${id}`);
      const updated = applyUserPatch(JSON.parse(text) as UserState, patch);
      return {
        checks: [[key, text]],
        ops: [{ op: 'set', key, v: JSON.stringify(updated) }],
        change: { kind: 'user', key: String(id), op: 'put' },
        result: () => updated,
      };
    });
  }

  deleteUser(id: number): Promise<boolean> {
    const key = this.k('user', id);
    return this.mutate<boolean>(async () => {
      const text = await this.redis.get(key);
      if (text === null) return { unchanged: false };
      const [domains, lists] = await Promise.all([this.redis.zcard(this.k('udom', id)), this.redis.zcard(this.k('uipl', id))]);
      const conflict = new ApiError('CONFLICT', `user ${id} still holds ${domains} domains and ${lists} IP lists (--force removes them first)`);
      if (domains + lists > 0) throw conflict;
      const keys = await this.documents<ApiKeyState>(this.k('ukeys', id), 'apikey');
      return {
        checks: [[key, text]],
        // Refused in the script too if a domain was registered meanwhile.
        limit: { key: this.k('udom', id), max: 1, error: conflict },
        ops: [
          { op: 'del', key },
          { op: 'zrem', key: this.k('users'), v: String(id) },
          { op: 'del', key: this.k('ukeys', id) },
          ...keys.flatMap((k): Op[] => [
            { op: 'del', key: this.k('apikey', k.id) },
            { op: 'del', key: this.k('keyhash', k.hash) },
          ]),
        ],
        change: { kind: 'user', key: String(id), op: 'delete' },
        result: () => true,
      };
    });
  }

  listUsers(): Promise<UserState[]> {
    return this.guard(() => this.documents<UserState>(this.k('users'), 'user'));
  }

  async addApiKey(userId: number, hash: string, label: string): Promise<ApiKeyState> {
    if (!(await this.getUser(userId))) throw notFound(`user ${userId}`);
    const id = await this.guard(() => this.redis.incr(this.k('seq', 'apikey')));
    const key: ApiKeyState = { id, userId, hash, label, created: new Date().toISOString(), revoked: null };
    return this.mutate(async () => ({
      checks: [],
      ops: [
        { op: 'set', key: this.k('apikey', id), v: JSON.stringify(key) },
        { op: 'set', key: this.k('keyhash', hash), v: String(id) },
        { op: 'zadd', key: this.k('ukeys', userId), s: id, v: String(id) },
      ],
      change: { kind: 'user', key: String(userId), op: 'put' },
      result: () => key,
    }));
  }

  findApiKeyByHash(hash: string): Promise<ApiKeyState | undefined> {
    return this.guard(async () => {
      const id = await this.redis.get(this.k('keyhash', hash));
      return id === null ? undefined : this.json<ApiKeyState>(this.k('apikey', id));
    });
  }

  listApiKeys(userId: number): Promise<ApiKeyState[]> {
    return this.guard(() => this.documents<ApiKeyState>(this.k('ukeys', userId), 'apikey'));
  }

  revokeApiKey(keyId: number): Promise<ApiKeyState | undefined> {
    const docKey = this.k('apikey', keyId);
    return this.mutate<ApiKeyState | undefined>(async () => {
      const text = await this.redis.get(docKey);
      if (text === null) return { unchanged: undefined };
      const key = JSON.parse(text) as ApiKeyState;
      if (key.revoked) return { unchanged: key };
      const revoked = { ...key, revoked: new Date().toISOString() };
      return {
        checks: [[docKey, text]],
        ops: [{ op: 'set', key: docKey, v: JSON.stringify(revoked) }],
        change: { kind: 'user', key: String(key.userId), op: 'put' },
        result: () => revoked,
      };
    });
  }

  // ---- zones

  private async nodeIds(): Promise<Set<number>> {
    return new Set((await this.redis.zrange(this.k('nodes'), '0', '-1')).map(Number));
  }

  /**
   * Runs a mutation twice when it allocates record ids: once to count them, then with ids
   * reserved by one INCRBY, so ids stay dense and a rejected mutation reserves none.
   */
  private async withRecordIds<T>(build: (ctx: MutationContext) => Promise<T | undefined>): Promise<T | undefined> {
    const nodes = await this.nodeIds();
    const now = new Date().toISOString();
    let wanted = 0;
    const dry = await build({ now, nodeExists: (id) => nodes.has(id), nextRecordId: () => ++wanted });
    if (dry === undefined || wanted === 0) return dry;
    let next = (await this.redis.incrby(this.k('seq', 'record'), wanted)) - wanted;
    return build({ now, nodeExists: (id) => nodes.has(id), nextRecordId: () => ++next });
  }

  // A zone is kept in parts, so that changing a record costs the same in a zone of 20 records
  // and of 200,000: its head (zone:NAME, the domain and the record count), its records as JSON
  // in a hash (zrec:NAME, field = id), and the records at each owner name in a sorted set
  // (zat:NAME, members "owner|id"; owner names never hold "|"). Every change rewrites the head
  // (its revision), so checking the head's text covers every record read beside it.

  private recordOps(zone: string, record: RecordState): Op[] {
    return [
      { op: 'hsetv', key: this.k('zrec', zone), f: String(record.id), v: JSON.stringify(record) },
      { op: 'zaddv', key: this.k('zat', zone), v: `${record.name}|${record.id}` },
    ];
  }

  /**
   * Writes a claim's head and indexes. The account holding the name (`primary`) keeps it at
   * zone:NAME (what name servers, edges and certificates read); another account's pending claim
   * of the name at zone:NAME#OWNER (claimKey), listed in zclaims:NAME. zoneowners/zonetree index
   * proven holders (the overlap rule), `pending` every pending claim ("reversed.name.|owner").
   */
  private zoneOps(head: ZoneHead, isNew: boolean, records: readonly RecordState[] = [], primary = true): Op[] {
    const name = head.domain.domain;
    const owner = head.domain.ownerId;
    const key = primary ? name : claimKey(name, owner);
    const proven = isProven(head.domain);
    const ops: Op[] = [withRevision(this.k('zone', key), head, (z) => z.domain)];
    if (isNew) {
      ops.push({ op: 'zadd', key: this.k('udom', owner), s: 0, v: name });
      ops.push(primary ? { op: 'zadd', key: this.k('zones'), s: 0, v: name } : { op: 'hset', key: this.k('zclaims', name), f: String(owner), v: '1' });
    }
    if (primary && proven) ops.push({ op: 'hset', key: this.k('zoneowners'), f: name, v: String(owner) }, { op: 'zadd', key: this.k('zonetree'), s: 0, v: `${reversedName(name)}|${name}` });
    else if (primary) ops.push({ op: 'hdel', key: this.k('zoneowners'), f: name }, { op: 'zrem', key: this.k('zonetree'), v: `${reversedName(name)}|${name}` });
    ops.push({ op: proven ? 'zrem' : 'zadd', key: this.k('pending'), s: 0, v: `${reversedName(name)}|${owner}` });
    for (const record of records) ops.push(...this.recordOps(key, record));
    return ops;
  }

  /** Removes a claim, its records and indexes (and the holder's certificate and challenge). */
  private dropClaimOps(name: string, owner: number, primary: boolean): Op[] {
    const key = primary ? name : claimKey(name, owner);
    const ops: Op[] = [
      { op: 'del', key: this.k('zone', key) },
      { op: 'del', key: this.k('zrec', key) },
      { op: 'del', key: this.k('zat', key) },
      { op: 'zrem', key: this.k('udom', owner), v: name },
      { op: 'zrem', key: this.k('pending'), v: `${reversedName(name)}|${owner}` },
    ];
    if (primary) {
      ops.push(
        { op: 'zrem', key: this.k('zones'), v: name },
        { op: 'hdel', key: this.k('zoneowners'), f: name },
        { op: 'zrem', key: this.k('zonetree'), v: `${reversedName(name)}|${name}` },
        { op: 'del', key: this.k('cert', name) },
        { op: 'zrem', key: this.k('certs'), v: name },
        { op: 'del', key: this.k('acmech', name) },
        { op: 'zrem', key: this.k('acmechs'), v: name },
      );
    } else ops.push({ op: 'hdel', key: this.k('zclaims', name), f: String(owner) });
    return ops;
  }

  /** The owner's claim of a name: the holder's, or a pending one beside it. */
  private async claimOf(name: string, ownerId: number): Promise<{ text: string; head: ZoneHead; key: string; primary: boolean } | undefined> {
    const found = await this.head(name);
    if (found?.head.domain.ownerId === ownerId) return { ...found, key: name, primary: true };
    const text = await this.redis.get(this.k('zone', claimKey(name, ownerId)));
    return text === null ? undefined : { text, head: JSON.parse(text) as ZoneHead, key: claimKey(name, ownerId), primary: false };
  }

  /** Which way a refused name overlaps (read after the script refused it, for the message). */
  private async overlapReason(name: string, owner: number): Promise<ApiError> {
    const owners = await this.redis.hmget(this.k('zoneowners'), ...ancestorsOf(name));
    return overlapError(name, owners.some((o) => o !== null && Number(o) !== owner) ? 'under' : 'above');
  }

  /** Data written before the tree set and owners hash existed gets them once. */
  private zoneTreeIndexed?: Promise<unknown>;
  private indexZoneTree(): Promise<unknown> {
    this.zoneTreeIndexed ??= (async () => {
      if ((await this.redis.exists(this.k('meta', 'zoneTree'))) === 1) return;
      await this.redis.eval(INDEX_ZONE_TREE_SCRIPT, 4, this.k('zones'), this.k('zoneowners'), this.k('zonetree'), this.k('meta', 'zoneTree'), this.k('zone', ''));
    })().catch((error: unknown) => {
      this.zoneTreeIndexed = undefined;
      throw error;
    });
    return this.zoneTreeIndexed;
  }

  /**
   * Data written before records were kept apart (one zone document holding its records) is
   * split once, zone by zone; each zone under WATCH, so a process still writing the old way
   * cannot lose a change, and a second process doing the same finds nothing left to split.
   */
  private layoutSplit?: Promise<void>;
  private splitZoneDocuments(): Promise<void> {
    this.layoutSplit ??= (async () => {
      if ((await this.redis.exists(this.k('meta', 'recordLayout'))) === 1) return;
      const names = await this.redis.zrange(this.k('zones'), '0', '-1');
      for (const name of names) {
        await this.rewriteWatched(this.k('zone', name), (text) => {
          const old = text === null ? undefined : (JSON.parse(text) as Partial<Zone>);
          if (!old || !Array.isArray(old.records)) return undefined;
          const multi = this.redis.multi().set(this.k('zone', name), JSON.stringify({ domain: old.domain!, recordCount: old.records.length } satisfies ZoneHead));
          for (const record of old.records) {
            multi.hset(this.k('zrec', name), String(record.id), JSON.stringify(record));
            multi.zadd(this.k('zat', name), 0, `${record.name}|${record.id}`);
          }
          return multi;
        });
      }
      await this.redis.set(this.k('meta', 'recordLayout'), '1');
    })().catch((error: unknown) => {
      this.layoutSplit = undefined;
      throw error;
    });
    return this.layoutSplit;
  }

  /**
   * Rewrites one key's document in the earlier layout (an upgrade): read under WATCH, the
   * rewrite planned from its text (undefined: nothing to do), retried if a writer got in between.
   */
  private async rewriteWatched(key: string, plan: (text: string | null) => ChainableCommander | undefined): Promise<void> {
    for (let attempt = 0; attempt < 10; attempt++) {
      await this.redis.watch(key);
      const multi = plan(await this.redis.get(key));
      if (!multi) {
        await this.redis.unwatch();
        return;
      }
      if ((await multi.exec()) !== null) return;
    }
  }

  private async head(name: string): Promise<{ text: string; head: ZoneHead } | undefined> {
    await this.splitZoneDocuments();
    const text = await this.redis.get(this.k('zone', name));
    return text === null ? undefined : { text, head: JSON.parse(text) as ZoneHead };
  }

  createZone(build: (ctx: MutationContext) => Zone): Promise<ZoneHead> {
    return this.mutate(async () => {
      await this.indexZoneTree();
      await this.splitZoneDocuments();
      const zone = (await this.withRecordIds(async (ctx) => build(ctx)))!;
      const name = zone.domain.domain;
      const ownerId = zone.domain.ownerId;
      const taken = () => new ApiError('CONFLICT', `${name} is already registered`, [{ field: 'domain', message: 'is already registered' }]);
      // A pending claim may sit beside other accounts' claims of the name (issue 26); a proven
      // domain is first come, first served, and overlaps no other account's proven domain.
      const pending = !isProven(zone.domain);
      const holder = await this.head(name);
      if (holder && (!pending || holder.head.domain.ownerId === ownerId)) throw taken();
      const mine = this.k('zone', claimKey(name, ownerId));
      if ((await this.redis.exists(mine)) === 1) throw taken();
      const owner = await this.getUser(ownerId);
      if (!owner) throw notFound(`user ${ownerId}`);
      const now = new Date().toISOString();
      const head: ZoneHead = { domain: { ...zone.domain, created: now, updated: now }, recordCount: zone.records.length };
      const primary = holder === undefined;
      return {
        // As read: the script refuses if another process registered the name meanwhile.
        checks: [
          [this.k('zone', name), holder?.text ?? null],
          [mine, null],
        ],
        limit: {
          key: this.k('udom', ownerId),
          max: owner.limits.max_domains,
          error: new ApiError('LIMIT_EXCEEDED', `the account may hold at most ${owner.limits.max_domains} domains`),
        },
        overlap: pending ? undefined : { name, owner: ownerId },
        ops: this.zoneOps(head, true, zone.records, primary),
        change: { kind: primary ? 'zone' : 'claim', key: name, op: 'put' },
        result: (revision) => ({ ...head, domain: { ...head.domain, revision } }),
      };
    });
  }

  /** A zone's records in id order. */
  private async recordsOf(name: string): Promise<RecordState[]> {
    const flat = await this.redis.hgetall(this.k('zrec', name));
    return Object.entries(flat)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([, json]) => JSON.parse(json) as RecordState);
  }

  getZone(name: string, ownerId?: number): Promise<Zone | undefined> {
    return this.guard(async () => {
      const found = ownerId === undefined ? await this.head(name).then((f) => f && { ...f, key: name }) : await this.claimOf(name, ownerId);
      if (!found) return undefined;
      return { domain: found.head.domain, records: await this.recordsOf(found.key) };
    });
  }

  getZoneHead(name: string, ownerId?: number): Promise<ZoneHead | undefined> {
    return this.guard(async () => (ownerId === undefined ? await this.head(name) : await this.claimOf(name, ownerId))?.head);
  }

  getRecord(zone: string, id: number, ownerId?: number): Promise<RecordState | undefined> {
    return this.guard(async () => {
      await this.splitZoneDocuments();
      const key = ownerId === undefined ? zone : (await this.claimOf(zone, ownerId))?.key;
      if (key === undefined) return undefined;
      const json = await this.redis.hget(this.k('zrec', key), String(id));
      return json === null ? undefined : (JSON.parse(json) as RecordState);
    });
  }

  getRecordsAt(zone: string, owner: string): Promise<RecordState[]> {
    return this.guard(async () => {
      await this.splitZoneDocuments();
      const members = await this.redis.zrangebylex(this.k('zat', zone), `[${owner}|`, `[${owner}|\xff`);
      if (members.length === 0) return [];
      const texts = await this.redis.hmget(this.k('zrec', zone), ...members.map((m) => m.slice(m.lastIndexOf('|') + 1)));
      return texts.flatMap((t) => (t ? [JSON.parse(t) as RecordState] : []));
    });
  }

  listClaims(name: string): Promise<ZoneHead[]> {
    return this.guard(async () => {
      const holder = await this.head(name);
      const owners = (await this.redis.hkeys(this.k('zclaims', name))).map(Number).sort((a, b) => a - b);
      const docs = owners.length === 0 ? [] : await this.redis.mget(owners.map((o) => this.k('zone', claimKey(name, o))));
      const others = docs.flatMap((d) => (d ? [JSON.parse(d) as ZoneHead] : []));
      return holder ? [holder.head, ...others] : others;
    });
  }

  pendingClaimsUnder(name: string): Promise<ClaimRef[]> {
    return this.guard(async () => {
      const prefix = reversedName(name);
      const members = await this.redis.zrangebylex(this.k('pending'), `[${prefix}`, `[${prefix}\xff`);
      return members.map((m) => {
        const bar = m.lastIndexOf('|');
        return { name: nameOfReversed(m.slice(0, bar)), ownerId: Number(m.slice(bar + 1)) };
      });
    });
  }

  proveClaim(name: string, ownerId: number, mutate: (head: ZoneHead) => DomainState): Promise<{ head: ZoneHead; released?: ZoneHead }> {
    return this.mutate(async () => {
      const mine = await this.claimOf(name, ownerId);
      if (!mine) throw notFound(`domain ${name}`);
      const holder = mine.primary ? undefined : await this.head(name);
      if (holder && isProven(holder.head.domain)) throw new ApiError('CONFLICT', `${name} is held, proven, by another account: its proof must lapse first`);
      const next = mutate(mine.head);
      const stored: ZoneHead = { domain: { ...next, domain: name, ownerId, created: mine.head.domain.created, updated: new Date().toISOString() }, recordCount: mine.head.recordCount };
      const ops: Op[] = [];
      if (holder) ops.push(...this.dropClaimOps(name, holder.head.domain.ownerId, true));
      if (!mine.primary) {
        // The claim takes the name: its records move to the holder's place.
        ops.push(
          { op: 'rename', key: this.k('zrec', mine.key), to: this.k('zrec', name) },
          { op: 'rename', key: this.k('zat', mine.key), to: this.k('zat', name) },
          { op: 'del', key: this.k('zone', mine.key) },
          { op: 'hdel', key: this.k('zclaims', name), f: String(ownerId) },
          { op: 'zadd', key: this.k('zones'), s: 0, v: name },
        );
      }
      ops.push(...this.zoneOps(stored, false));
      return {
        checks: [
          [this.k('zone', name), mine.primary ? mine.text : (holder?.text ?? null)],
          [this.k('zone', mine.key), mine.text],
        ],
        ops,
        change: { kind: 'zone', key: name, op: 'put' },
        result: (revision) => ({ head: { ...stored, domain: { ...stored.domain, revision } }, released: holder?.head }),
      };
    });
  }

  listZones(ownerId: number, page: PageRequest, tag?: string): Promise<Page<ZoneHead>> {
    return this.guard(async () => {
      await this.splitZoneDocuments();
      const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
      const items: ZoneHead[] = [];
      let from = after === undefined ? '-' : `(${after}`;
      let more = false;
      // Tag filters skip zones, so read in chunks until the page is full.
      for (;;) {
        const names = await this.redis.zrangebylex(this.k('udom', ownerId), from, '+', 'LIMIT', 0, Math.max(page.limit + 1, 100));
        if (names.length === 0) break;
        const held = await this.redis.mget(names.map((n) => this.k('zone', n)));
        // A name another account holds: this account's claim sits beside it.
        const beside = names.filter((_, i) => !held[i] || (JSON.parse(held[i]) as ZoneHead).domain.ownerId !== ownerId);
        const claims = beside.length === 0 ? [] : await this.redis.mget(beside.map((n) => this.k('zone', claimKey(n, ownerId))));
        const docs = names.map((n, i) => (beside.includes(n) ? claims[beside.indexOf(n)] : held[i]));
        for (const doc of docs) {
          if (!doc) continue;
          const zone = JSON.parse(doc) as ZoneHead;
          if (tag !== undefined && !zone.domain.tags.includes(tag)) continue;
          if (items.length === page.limit) {
            more = true;
            break;
          }
          items.push(zone);
        }
        if (more) break;
        from = `(${names[names.length - 1]}`;
      }
      const last = items[items.length - 1];
      return { items, next: more && last ? encodeCursor(last.domain.domain) : undefined };
    });
  }

  listAllZones(page: PageRequest): Promise<Page<ZoneHead>> {
    return this.guard(async () => {
      await this.splitZoneDocuments();
      const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
      const names = await this.redis.zrangebylex(this.k('zones'), after === undefined ? '-' : `(${after}`, '+', 'LIMIT', 0, page.limit + 1);
      const more = names.length > page.limit;
      const docs = names.length === 0 ? [] : await this.redis.mget(names.slice(0, page.limit).map((n) => this.k('zone', n)));
      const items = docs.flatMap((d) => (d ? [JSON.parse(d) as ZoneHead] : []));
      const last = names[Math.min(names.length, page.limit) - 1];
      return { items, next: more && last ? encodeCursor(last) : undefined };
    });
  }

  countZones(ownerId: number): Promise<number> {
    return this.guard(() => this.redis.zcard(this.k('udom', ownerId)));
  }

  updateZone(name: string, ownerId: number, mutate: ZoneMutation): Promise<ZoneHead> {
    return this.mutate<ZoneHead>(async () => {
      const found = await this.claimOf(name, ownerId);
      if (!found) throw notFound(`domain ${name}`);
      const { text, head, primary } = found;
      const key = this.k('zone', found.key);
      const next = await this.withRecordIds(async (ctx) => mutate(JSON.parse(text) as ZoneHead, ctx));
      if (!next) return { unchanged: head };
      const { settings, domain } = settingsChange(head.domain, { ...next.domain, domain: name, ownerId });
      const stored: ZoneHead = {
        domain: { ...domain, created: head.domain.created, updated: new Date().toISOString() },
        recordCount: head.recordCount,
      };
      return {
        checks: [[key, text]],
        ops: this.zoneOps(stored, false, [], primary),
        // A pending claim beside the holder's is no consumer's business.
        change: primary ? { kind: 'zone', key: name, op: 'put', settings } : { kind: 'claim', key: name, op: 'put' },
        result: (revision) => ({ ...stored, domain: { ...stored.domain, revision } }),
      };
    });
  }

  changeRecords(name: string, ownerId: number, mutate: RecordMutation): Promise<{ head: ZoneHead; delta: RecordDelta }> {
    return this.mutate<{ head: ZoneHead; delta: RecordDelta }>(async () => {
      const found = await this.claimOf(name, ownerId);
      if (!found) throw notFound(`domain ${name}`);
      const { text, head, primary } = found;
      const key = this.k('zone', found.key);
      const zone = found.key;
      // The mutation is synchronous: what it asks for that is not read yet stops it (ReadFirst),
      // is read, and the mutation runs again — it is pure, so running it again is harmless.
      const atName = new Map<string, RecordState[]>();
      const byId = new Map<number, RecordState | null>();
      const view: RecordView = {
        head,
        at: (owner) => atName.get(owner) ?? readFirst({ owner }),
        byId: (id) => {
          const record = byId.get(id);
          return record === undefined ? readFirst({ id }) : (record ?? undefined);
        },
      };
      const readIds = async (ids: number[]) => {
        const missing = ids.filter((id) => !byId.has(id));
        if (missing.length === 0) return;
        const texts = await this.redis.hmget(this.k('zrec', zone), ...missing.map(String));
        missing.forEach((id, i) => byId.set(id, texts[i] ? (JSON.parse(texts[i]) as RecordState) : null));
      };
      const edit = await this.withRecordIds(async (ctx) => {
        for (;;) {
          try {
            return mutate(view, ctx);
          } catch (error) {
            if (!(error instanceof ReadFirst)) throw error;
            if (error.owner !== undefined) {
              const members = await this.redis.zrangebylex(this.k('zat', zone), `[${error.owner}|`, `[${error.owner}|\xff`);
              const ids = members.map((m) => Number(m.slice(m.lastIndexOf('|') + 1)));
              await readIds(ids);
              atName.set(error.owner, ids.flatMap((id) => byId.get(id) ?? []));
            } else await readIds([error.id!]);
          }
        }
      });
      if (!edit) return { unchanged: { head, delta: { put: [], del: [] } } };
      await readIds([...edit.del, ...edit.put.map((r) => r.id)]);
      const ops: Op[] = [];
      const delta: RecordDelta = { put: [], del: [] };
      let count = head.recordCount;
      const removed = new Set<number>();
      for (const id of edit.del) {
        const old = byId.get(id);
        if (!old || removed.has(id)) continue;
        removed.add(id);
        ops.push({ op: 'hdel', key: this.k('zrec', zone), f: String(id) }, { op: 'zremv', key: this.k('zat', zone), v: `${old.name}|${id}` });
        delta.del.push({ id, name: old.name });
        count--;
      }
      for (const record of edit.put) {
        const old = removed.has(record.id) ? undefined : byId.get(record.id);
        if (old) {
          ops.push({ op: 'zremv', key: this.k('zat', zone), v: `${old.name}|${old.id}` });
          if (old.name !== record.name) delta.del.push({ id: old.id, name: old.name });
        } else count++;
        removed.delete(record.id);
        ops.push(...this.recordOps(zone, record));
        delta.put.push(record);
      }
      const stored: ZoneHead = { domain: { ...withoutNsRevision(head.domain), updated: new Date().toISOString() }, recordCount: count };
      return {
        checks: [[key, text]],
        ops: [...this.zoneOps(stored, false, [], primary), ...ops],
        // A pending claim beside the holder's: an entry without the difference (no consumer reads it).
        change: { kind: primary ? 'zone' : 'claim', key: name, op: 'put' },
        detail: primary ? JSON.stringify(delta) : undefined,
        result: (revision) => ({ head: { ...stored, domain: { ...stored.domain, revision } }, delta }),
      };
    });
  }

  deleteZone(name: string, ownerId: number): Promise<boolean> {
    return this.mutate<boolean>(async () => {
      const found = await this.claimOf(name, ownerId);
      if (!found) return { unchanged: false };
      return {
        checks: [[this.k('zone', found.key), found.text]],
        ops: this.dropClaimOps(name, ownerId, found.primary),
        change: { kind: found.primary ? 'zone' : 'claim', key: name, op: 'delete' },
        result: () => true,
      };
    });
  }

  // ---- IP lists
  //
  // An IP list is kept as a head (iplist:ID: everything but its entries, and their count) and
  // its entries in a sorted set (ipe:ID): adding or removing one entry is one ZADD or ZREM,
  // whatever the list's size. Every change rewrites the head (its revision), so checking the
  // head's text covers the entries read beside it.

  private ipListOps(list: IpListState, entries: boolean): Op[] {
    const { ips, ...head } = list;
    const ops: Op[] = [withRevision(this.k('iplist', list.id), { ...head, count: ips.length } satisfies IpListHead, (l) => l)];
    if (entries) {
      ops.push({ op: 'del', key: this.k('ipe', list.id) });
      for (const ip of ips) ops.push({ op: 'zaddv', key: this.k('ipe', list.id), v: ip });
    }
    return ops;
  }

  /**
   * Lists written whole by an earlier release (their entries inside the document) get their
   * entries moved into the sorted set, list by list under WATCH, once.
   */
  private ipListsSplit?: Promise<void>;
  private splitIpLists(): Promise<void> {
    this.ipListsSplit ??= (async () => {
      if ((await this.redis.exists(this.k('meta', 'ipEntries'))) === 1) return;
      for (const id of await this.redis.zrange(this.k('iplists'), '0', '-1')) {
        await this.rewriteWatched(this.k('iplist', id), (text) => {
          const old = text === null ? undefined : (JSON.parse(text) as Partial<IpListState>);
          if (!old || !Array.isArray(old.ips)) return undefined;
          const { ips, ...head } = old;
          const multi = this.redis.multi().set(this.k('iplist', id), JSON.stringify({ ...head, count: ips.length })).del(this.k('ipe', id));
          for (let i = 0; i < ips.length; i += 1000) multi.zadd(this.k('ipe', id), ...ips.slice(i, i + 1000).flatMap((ip) => [0, ip]));
          return multi;
        });
      }
      await this.redis.set(this.k('meta', 'ipEntries'), '1');
    })().catch((error: unknown) => {
      this.ipListsSplit = undefined;
      throw error;
    });
    return this.ipListsSplit;
  }

  /** Heads with their entries (in entry order), one round trip for the entries of all. */
  private async ipListsOf(heads: Array<string | null>): Promise<IpListState[]> {
    const found = heads.flatMap((text) => (text ? [JSON.parse(text) as IpListHead] : []));
    if (found.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const head of found) pipeline.zrange(this.k('ipe', head.id), '0', '-1');
    const results = (await pipeline.exec()) ?? [];
    return found.map(({ count: _count, ...head }, i) => {
      const [error, ips] = results[i]!;
      if (error) throw error;
      return { ...head, ips: ips as string[] };
    });
  }

  async createIpList(build: (ctx: MutationContext & { id: number }) => IpListState): Promise<IpListState> {
    const nodes = await this.guard(() => this.nodeIds());
    const now = new Date().toISOString();
    const ctx = { now, nodeExists: (id: number) => nodes.has(id), nextRecordId: () => 0, id: 0 };
    const draft = build(ctx);
    const owner = await this.getUser(draft.ownerId);
    if (!owner) throw notFound(`user ${draft.ownerId}`);
    const id = await this.guard(() => this.redis.incr(this.k('seq', 'iplist')));
    const list: IpListState = { ...draft, id, created: now, updated: now };
    return this.mutate(async () => ({
      checks: [],
      limit: {
        key: this.k('uipl', list.ownerId),
        max: owner.limits.max_iplists,
        error: new ApiError('LIMIT_EXCEEDED', `the account may hold at most ${owner.limits.max_iplists} IP lists`),
      },
      ops: [
        ...this.ipListOps(list, true),
        { op: 'zadd', key: this.k('uipl', list.ownerId), s: id, v: String(id) },
        { op: 'zadd', key: this.k('iplists'), s: id, v: String(id) },
      ],
      change: { kind: 'iplist', key: String(id), op: 'put' },
      result: (revision) => ({ ...list, revision }),
    }));
  }

  getIpList(id: number): Promise<IpListState | undefined> {
    return this.guard(async () => {
      await this.splitIpLists();
      return (await this.ipListsOf([await this.redis.get(this.k('iplist', id))]))[0];
    });
  }

  listIpLists(ownerId: number, page: PageRequest): Promise<Page<IpListState>> {
    return this.ipListPage(this.k('uipl', ownerId), page);
  }

  /** A page of the IP lists an id set names (an owner's, or all), in id order. */
  private ipListPage(ids: string, page: PageRequest): Promise<Page<IpListState>> {
    return this.guard(async () => {
      await this.splitIpLists();
      const after = page.cursor === undefined ? 0 : decodeIdCursor(page.cursor);
      const chosenAll = await this.redis.zrangebyscore(ids, `(${after}`, '+inf', 'LIMIT', 0, page.limit + 1);
      const more = chosenAll.length > page.limit;
      const chosen = chosenAll.slice(0, page.limit);
      const items = chosen.length === 0 ? [] : await this.ipListsOf(await this.redis.mget(chosen.map((id) => this.k('iplist', id))));
      const last = items[items.length - 1];
      return { items, next: more && last ? encodeCursor(String(last.id)) : undefined };
    });
  }

  countIpLists(ownerId: number): Promise<number> {
    return this.guard(() => this.redis.zcard(this.k('uipl', ownerId)));
  }

  updateIpList(id: number, ownerId: number, mutate: (list: IpListState, ctx: MutationContext) => IpListState | undefined): Promise<IpListState> {
    const key = this.k('iplist', id);
    return this.mutate<IpListState>(async () => {
      await this.splitIpLists();
      const text = await this.redis.get(key);
      const list = (await this.ipListsOf([text]))[0];
      if (!list || list.ownerId !== ownerId) throw notFound(`IP list ${id}`);
      const nodes = await this.nodeIds();
      const next = mutate(list, { now: new Date().toISOString(), nodeExists: (n) => nodes.has(n), nextRecordId: () => 0 });
      if (!next) return { unchanged: list };
      const stored: IpListState = { ...next, id, ownerId, created: list.created, updated: new Date().toISOString() };
      return {
        checks: [[key, text]],
        ops: this.ipListOps(stored, next.ips !== list.ips),
        change: { kind: 'iplist', key: String(id), op: 'put' },
        result: (revision) => ({ ...stored, revision }),
      };
    });
  }

  changeIpEntries(id: number, ownerId: number, change: IpEntryChange, checkCount: (count: number) => void): Promise<IpListSummary> {
    const key = this.k('iplist', id);
    const entries = this.k('ipe', id);
    return this.mutate<IpListSummary>(async () => {
      await this.splitIpLists();
      const text = await this.redis.get(key);
      const head = text === null ? undefined : (JSON.parse(text) as IpListHead);
      if (!head || head.ownerId !== ownerId) throw notFound(`IP list ${id}`);
      const asked = [...change.del, ...change.add];
      const scores = asked.length === 0 ? [] : await this.redis.zmscore(entries, ...asked);
      const present = new Set(asked.filter((_, i) => scores[i] !== null));
      const ops: Op[] = [];
      let count = head.count;
      for (const ip of new Set(change.del)) {
        if (!present.has(ip)) continue;
        present.delete(ip);
        ops.push({ op: 'zremv', key: entries, v: ip });
        count--;
      }
      for (const ip of new Set(change.add)) {
        if (present.has(ip)) continue;
        present.add(ip);
        ops.push({ op: 'zaddv', key: entries, v: ip });
        count++;
      }
      if (ops.length === 0) return { unchanged: head };
      checkCount(count);
      const stored: IpListHead = { ...head, count, updated: new Date().toISOString() };
      return {
        checks: [[key, text]],
        ops: [withRevision(key, stored, (l) => l), ...ops],
        change: { kind: 'iplist', key: String(id), op: 'put' },
        result: (revision) => ({ ...stored, revision }),
      };
    });
  }

  deleteIpList(id: number, ownerId: number): Promise<boolean> {
    const key = this.k('iplist', id);
    return this.mutate<boolean>(async () => {
      await this.splitIpLists();
      const text = await this.redis.get(key);
      const list = text === null ? undefined : (JSON.parse(text) as IpListHead);
      if (!list || list.ownerId !== ownerId) return { unchanged: false };
      return {
        checks: [[key, text]],
        ops: [
          { op: 'del', key },
          { op: 'del', key: this.k('ipe', id) },
          { op: 'zrem', key: this.k('uipl', ownerId), v: String(id) },
          { op: 'zrem', key: this.k('iplists'), v: String(id) },
        ],
        change: { kind: 'iplist', key: String(id), op: 'delete' },
        result: () => true,
      };
    });
  }

  listAllIpLists(page: PageRequest): Promise<Page<IpListState>> {
    return this.ipListPage(this.k('iplists'), page);
  }

  // ---- certificates and ACME challenges: one document per domain, gone with the domain

  putCertificate(cert: CertificateInput): Promise<CertificateState> {
    return this.putDomainItem('certificate', 'cert', 'certs', cert);
  }

  getCertificate(domain: string): Promise<CertificateState | undefined> {
    return this.guard(() => this.json<CertificateState>(this.k('cert', domain)));
  }

  deleteCertificate(domain: string): Promise<boolean> {
    return this.deleteDomainItem('certificate', 'cert', 'certs', domain);
  }

  listCertificates(page: PageRequest): Promise<Page<CertificateState>> {
    return this.domainItemPage<CertificateState>('cert', 'certs', page);
  }

  putChallenge(challenge: AcmeChallengeInput): Promise<AcmeChallengeState> {
    return this.putDomainItem('challenge', 'acmech', 'acmechs', challenge);
  }

  getChallenge(domain: string): Promise<AcmeChallengeState | undefined> {
    return this.guard(() => this.json<AcmeChallengeState>(this.k('acmech', domain)));
  }

  deleteChallenge(domain: string): Promise<boolean> {
    return this.deleteDomainItem('challenge', 'acmech', 'acmechs', domain);
  }

  listChallenges(page: PageRequest): Promise<Page<AcmeChallengeState>> {
    return this.domainItemPage<AcmeChallengeState>('acmech', 'acmechs', page);
  }

  private putDomainItem<T extends { domain: string }>(kind: 'certificate' | 'challenge', prefix: string, index: string, item: T): Promise<T & { updated: string; revision: number }> {
    const zoneKey = this.k('zone', item.domain);
    return this.mutate(async () => {
      const text = await this.redis.get(zoneKey);
      if (text === null) throw notFound(`domain ${item.domain}`);
      const stored = { ...item, updated: new Date().toISOString(), revision: 0 };
      return {
        // The domain must still be there when the script runs (a deletion in between fails the check).
        checks: [[zoneKey, text]],
        ops: [withRevision(this.k(prefix, item.domain), stored, (c) => c), { op: 'zadd', key: this.k(index), s: 0, v: item.domain }],
        change: { kind, key: item.domain, op: 'put' },
        result: (revision) => ({ ...stored, revision }),
      };
    });
  }

  private deleteDomainItem(kind: 'certificate' | 'challenge', prefix: string, index: string, domain: string): Promise<boolean> {
    const key = this.k(prefix, domain);
    return this.mutate<boolean>(async () => {
      const text = await this.redis.get(key);
      if (text === null) return { unchanged: false };
      return {
        checks: [[key, text]],
        ops: [
          { op: 'del', key },
          { op: 'zrem', key: this.k(index), v: domain },
        ],
        change: { kind, key: domain, op: 'delete' },
        result: () => true,
      };
    });
  }

  private domainItemPage<T>(prefix: string, index: string, page: PageRequest): Promise<Page<T>> {
    return this.guard(async () => {
      const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
      const names = await this.redis.zrangebylex(this.k(index), after === undefined ? '-' : `(${after}`, '+', 'LIMIT', 0, page.limit + 1);
      const more = names.length > page.limit;
      const chosen = names.slice(0, page.limit);
      const docs = chosen.length === 0 ? [] : await this.redis.mget(chosen.map((n) => this.k(prefix, n)));
      const items = docs.flatMap((d) => (d ? [JSON.parse(d) as T] : []));
      const last = chosen[chosen.length - 1];
      return { items, next: more && last ? encodeCursor(last) : undefined };
    });
  }

  // ---- internal documents and leases (no revision: no consumer acts on them)
  // A hash per kind (field = id) and a sorted set of its ids for ordered, paged listings.

  getDoc<T>(kind: DocKind, id: string): Promise<T | undefined> {
    return this.guard(async () => {
      const text = await this.redis.hget(this.k('doc', kind), id);
      return text === null ? undefined : (JSON.parse(text) as T);
    });
  }

  async putDoc(kind: DocKind, id: string, value: unknown): Promise<void> {
    await this.guard(() => this.redis.multi().hset(this.k('doc', kind), id, JSON.stringify(value)).zadd(this.k('docids', kind), 0, id).exec());
  }

  deleteDoc(kind: DocKind, id: string): Promise<boolean> {
    return this.guard(async () => {
      const result = await this.redis.multi().hdel(this.k('doc', kind), id).zrem(this.k('docids', kind), id).exec();
      return Number(result?.[0]?.[1] ?? 0) > 0;
    });
  }

  listDocs<T>(kind: DocKind, page: PageRequest, prefix = ''): Promise<Page<{ id: string; value: T }>> {
    return this.guard(async () => {
      const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
      // Ids are ASCII: every id starting with the prefix sorts below prefix + DEL.
      const from = after !== undefined ? `(${after}` : prefix ? `[${prefix}` : '-';
      const to = prefix ? `(${prefix}\x7f` : '+';
      const ids = await this.redis.zrangebylex(this.k('docids', kind), from, to, 'LIMIT', 0, page.limit + 1);
      const chosen = ids.slice(0, page.limit).filter((id) => id.startsWith(prefix));
      const texts = chosen.length === 0 ? [] : await this.redis.hmget(this.k('doc', kind), ...chosen);
      const items = chosen.flatMap((id, i) => (texts[i] ? [{ id, value: JSON.parse(texts[i]!) as T }] : []));
      const last = chosen[chosen.length - 1];
      return { items, next: ids.length > page.limit && last ? encodeCursor(last) : undefined };
    });
  }

  updateDoc<T>(kind: DocKind, id: string, mutate: (current: T | undefined) => T | undefined): Promise<{ before: T | undefined; after: T | undefined }> {
    // Optimistic: read, decide, and write only if the text is still the one read.
    return this.guard(async () => {
      for (let attempt = 0; attempt < 50; attempt++) {
        const text = await this.redis.hget(this.k('doc', kind), id);
        const before = text === null ? undefined : (JSON.parse(text) as T);
        const after = mutate(text === null ? undefined : (JSON.parse(text) as T));
        if (after === undefined) return { before, after: before };
        if ((await this.redis.palisadeDocCas(this.k('doc', kind), this.k('docids', kind), id, text ?? '', JSON.stringify(after))) === 1) return { before, after };
      }
      throw new ApiError('STORE_UNAVAILABLE', `the document ${kind}/${id} kept changing under 50 attempts to update it`);
    });
  }

  // ---- uptime measures (see uptime-redis.ts)

  addUptime(rows: readonly UptimeRow[]): Promise<void> {
    return this.guard(() => this.uptime.add(rows));
  }

  readUptime(domain: string, resolution: Resolution, from: number, to: number): Promise<UptimePoint[]> {
    return this.guard(() => this.uptime.read(domain, resolution, from, to));
  }

  deleteUptime(domain: string): Promise<void> {
    return this.guard(() => this.uptime.delete(domain));
  }

  tryLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    // One script: take the lease when it is free (expired keys are gone) or renew it when it is ours.
    return this.guard(async () => {
      return (await this.redis.palisadeLease(this.k('lease', name), holder, String(ttlMs))) === 1;
    });
  }

  // ---- nodes

  async createNode(node: Omit<EdgeNode, 'id'>): Promise<EdgeNode> {
    const id = await this.guard(() => this.redis.incr(this.k('seq', 'node')));
    const stored: EdgeNode = { ...node, id };
    return this.mutate(async () => ({
      checks: [],
      ops: [
        { op: 'set', key: this.k('node', id), v: JSON.stringify(stored) },
        { op: 'zadd', key: this.k('nodes'), s: id, v: String(id) },
      ],
      change: { kind: 'node', key: String(id), op: 'put' },
      result: () => stored,
    }));
  }

  getNode(id: number): Promise<EdgeNode | undefined> {
    return this.guard(() => this.json<EdgeNode>(this.k('node', id)));
  }

  listNodes(): Promise<EdgeNode[]> {
    return this.guard(() => this.documents<EdgeNode>(this.k('nodes'), 'node'));
  }

  updateNode(id: number, patch: Partial<Omit<EdgeNode, 'id'>>): Promise<EdgeNode> {
    const key = this.k('node', id);
    return this.mutate(async () => {
      const text = await this.redis.get(key);
      if (text === null) throw notFound(`node ${id}`);
      const stored: EdgeNode = { ...(JSON.parse(text) as EdgeNode), ...patch, id };
      return {
        checks: [[key, text]],
        ops: [{ op: 'set', key, v: JSON.stringify(stored) }],
        change: { kind: 'node', key: String(id), op: 'put' },
        result: () => stored,
      };
    });
  }

  deleteNode(id: number): Promise<boolean> {
    const key = this.k('node', id);
    return this.mutate<boolean>(async () => {
      const text = await this.redis.get(key);
      if (text === null) return { unchanged: false };
      const users = await this.usedBy(id);
      if (users.length > 0) {
        throw new ApiError('CONFLICT', `node ${id} is still named by ${users.slice(0, 5).join(', ')}${users.length > 5 ? ` and ${users.length - 5} more` : ''}`);
      }
      return {
        checks: [[key, text]],
        ops: [
          { op: 'del', key },
          { op: 'zrem', key: this.k('nodes'), v: String(id) },
        ],
        change: { kind: 'node', key: String(id), op: 'delete' },
        result: () => true,
      };
    });
  }

  private async usedBy(nodeId: number): Promise<string[]> {
    const out: string[] = [];
    const names = await this.redis.zrange(this.k('zones'), '0', '-1');
    for (let i = 0; i < names.length; i += 500) {
      const docs = await this.redis.mget(names.slice(i, i + 500).map((n) => this.k('zone', n)));
      for (const d of docs) {
        const zone = d && (JSON.parse(d) as ZoneHead);
        if (zone && zone.domain.bind_node.includes(nodeId)) out.push(`domain ${zone.domain.domain}`);
      }
    }
    for (const list of await this.documents<IpListHead>(this.k('iplists'), 'iplist')) {
      if (!list.allnodes && list.nodes.includes(nodeId)) out.push(`IP list ${list.id}`);
    }
    return out;
  }

  // ---- change-feed consumers

  async createConsumer(input: Omit<ConsumerState, 'id' | 'created'>): Promise<ConsumerState> {
    const id = await this.guard(() => this.redis.incr(this.k('seq', 'consumer')));
    const consumer: ConsumerState = { ...input, id, created: new Date().toISOString() };
    return this.mutate(async () => ({
      checks: [],
      ops: [
        { op: 'set', key: this.k('consumer', id), v: JSON.stringify(consumer) },
        { op: 'set', key: this.k('ctoken', consumer.tokenHash), v: String(id) },
        { op: 'zadd', key: this.k('consumers'), s: id, v: String(id) },
      ],
      change: { kind: 'consumer', key: String(id), op: 'put' },
      result: () => consumer,
    }));
  }

  listConsumers(): Promise<ConsumerState[]> {
    return this.guard(() => this.documents<ConsumerState>(this.k('consumers'), 'consumer'));
  }

  findConsumerByTokenHash(hash: string): Promise<ConsumerState | undefined> {
    return this.guard(async () => {
      const id = await this.redis.get(this.k('ctoken', hash));
      return id === null ? undefined : this.json<ConsumerState>(this.k('consumer', id));
    });
  }

  deleteConsumer(id: number): Promise<boolean> {
    const key = this.k('consumer', id);
    return this.mutate<boolean>(async () => {
      const text = await this.redis.get(key);
      if (text === null) return { unchanged: false };
      const consumer = JSON.parse(text) as ConsumerState;
      return {
        checks: [[key, text]],
        ops: [
          { op: 'del', key },
          { op: 'del', key: this.k('ctoken', consumer.tokenHash) },
          { op: 'zrem', key: this.k('consumers'), v: String(id) },
        ],
        change: { kind: 'consumer', key: String(id), op: 'delete' },
        result: () => true,
      };
    });
  }

  // ---- change feed

  snapshot(): Promise<Snapshot> {
    return collectSnapshot(this.streamSnapshot());
  }

  /**
   * The revision is read first: the documents are at least that new, and replaying the changes
   * after it (idempotent puts and deletes) brings a consumer to any later state.
   */
  async *streamSnapshot(): AsyncGenerator<SnapshotChunk, void, undefined> {
    const header = await this.guard(async () => {
      const revision = Number((await this.redis.get(this.k('rev'))) ?? 0);
      const nodesRevision = Number((await this.redis.get(this.k('nodesRevision'))) ?? 0);
      return { kind: 'header' as const, revision, nodesRevision, nodes: await this.listNodes() };
    });
    yield header;
    const names = await this.guard(async () => {
      await this.splitZoneDocuments();
      return this.redis.zrange(this.k('zones'), '0', '-1');
    });
    for (let i = 0; i < names.length; i += SNAPSHOT_BATCH) {
      const json = await this.guard(async () => {
        const batch = names.slice(i, i + SNAPSHOT_BATCH);
        const docs = await this.redis.mget(batch.map((n) => this.k('zone', n)));
        const served = batch.flatMap((name, j) => {
          const head = docs[j] ? (JSON.parse(docs[j]) as ZoneHead) : undefined;
          return head?.domain.ns_active && isProven(head.domain) ? [{ name, head }] : [];
        });
        const pipeline = this.redis.pipeline();
        for (const { name } of served) pipeline.hgetall(this.k('zrec', name));
        const results = (await pipeline.exec()) ?? [];
        // Records are JSON already: joined in id order, never parsed.
        return served.map(({ head }, j) => {
          const [error, flat] = results[j]!;
          if (error) throw error;
          const texts = Object.entries(flat as Record<string, string>)
            .sort(([a], [b]) => Number(a) - Number(b))
            .map(([, t]) => t);
          return `{"domain":${JSON.stringify(head.domain)},"records":[${texts.join(',')}]}`;
        });
      });
      yield { kind: 'zones', json };
    }
  }

  currentRevision(): Promise<number> {
    return this.guard(async () => Number((await this.redis.get(this.k('rev'))) ?? 0));
  }

  changesSince(since: number, limit: number, maxBytes = CHANGES_MAX_BYTES, records = true): Promise<{ changes: Change[] } | { gone: true; oldest: number }> {
    return this.guard(async () => {
      const current = Number((await this.redis.get(this.k('rev'))) ?? 0);
      if (since >= current) return { changes: [] };
      const first = await this.redis.xrange(this.k('changes'), '-', '+', 'COUNT', 1);
      // The stream is trimmed roughly; record differences exactly `retention` back.
      const oldest = Math.max(first.length === 0 ? current + 1 : Number(first[0]![0].split('-')[0]), current - this.retention + 1);
      if (since + 1 < oldest) return { gone: true, oldest };
      // Entries are small (a difference is kept apart, its size noted): read them in batches,
      // then only the differences that fit in maxBytes.
      const changes: Change[] = [];
      let bytes = 0;
      let from = `${since + 1}-0`;
      let full = false;
      while (!full && changes.length < limit) {
        const entries = await this.redis.xrange(this.k('changes'), from, '+', 'COUNT', Math.min(500, limit - changes.length));
        if (entries.length === 0) break;
        for (const [id, fields] of entries) {
          const change = JSON.parse(fields[1]!) as Change;
          // cjson writes an empty list as {}.
          if (change.settings !== undefined && !Array.isArray(change.settings)) change.settings = [];
          const size = records ? (change.bytes ?? 0) : 0;
          if (changes.length > 0 && bytes + size > maxBytes) {
            full = true;
            break;
          }
          bytes += size;
          changes.push(change);
          from = `(${id}`;
        }
      }
      const detailed = records ? changes.filter((c) => c.bytes !== undefined) : [];
      if (detailed.length > 0) {
        const details = await this.redis.hmget(this.k('changedetails'), ...detailed.map((c) => String(c.revision)));
        detailed.forEach((change, i) => {
          const detail = details[i];
          if (detail === null || detail === undefined) throw new ApiError('STORE_UNAVAILABLE', `the change at revision ${change.revision} has lost its detail`);
          change.records = JSON.parse(detail) as RecordDelta;
        });
      }
      return { changes };
    });
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
