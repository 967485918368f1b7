// The Redis store's core (ioredis), for several API processes sharing state: the connection, the
// keys, and the one way to write. Every mutation reads the documents it depends on, computes the
// new state in JS (the same pure rules as the embedded store), and commits with one Lua script
// (commit-script.ts) that re-checks those documents, takes the next revision, writes, and appends
// the change to a stream — atomically. A concurrent writer makes the check fail and the mutation
// is recomputed on the new state. The resource parts (users.ts, zones.ts, …) plan their writes
// (plan.ts) and commit through `mutate`.
//
// All keys share one hash tag, so the store also runs on Redis Cluster (in one slot).
// Redis unreachable: commands fail at once (no offline queue); Redis hung: within 5 s and the API answers
// 503 STORE_UNAVAILABLE; the client reconnects by itself.
import { randomBytes } from 'node:crypto';
import { Redis, type ChainableCommander } from 'ioredis';
import { ApiError } from '../../errors.ts';
import { StoreError } from '../errors.ts';
import type { UserState } from '../../model/user.ts';
import { ancestorsOf, overlapError, reversedName } from '../name-tree.ts';
import type { MutationContext } from '../types.ts';
import { COMMIT_SCRIPT } from './commit-script.ts';
import { clientOptions, type RedisConnection } from './connection.ts';
import type { Attempt } from './plan.ts';

const MAX_ATTEMPTS = 200;
/** How long a commit's mark is kept: far longer than any client waits for its answer. */
const COMMIT_MARK_MS = 10 * 60_000;
/** How long a commit whose answer was lost is settled for (a failover's 503 window fits in it). */
const SETTLE_MS = 15_000;

export interface RedisStoreOptions extends RedisConnection {
  /** Key prefix; keep the {braces}: they pin every key to one Cluster slot. */
  prefix?: string;
  changeRetention?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

declare module 'ioredis' {
  interface RedisCommander {
    palisadeCommit(numKeys: number, ...args: string[]): Promise<number>;
  }
}

export class RedisCore {
  readonly redis: Redis;
  private readonly p: string;
  readonly retention: number;
  /** Replicas a commit must reach before it is answered (PALISADE_REDIS_MIN_REPLICAS). */
  readonly minReplicas: number;
  private readonly waitTimeoutMs: number;
  private readonly commitListeners = new Set<() => void>();
  private closing = false;

  constructor(options: RedisStoreOptions) {
    this.p = options.prefix ?? '{palisade}:';
    this.retention = options.changeRetention ?? 100_000;
    this.minReplicas = options.minReplicas ?? 0;
    this.waitTimeoutMs = Math.min(options.waitTimeoutMs ?? 1000, 4000);
    const { url, options: clientOpts } = clientOptions(options);
    this.redis = url === undefined ? new Redis(clientOpts) : new Redis(url, clientOpts);
    // Connection problems surface as 503s per request; the client reconnects by itself.
    this.redis.on('error', () => undefined);
    // ioredis gives up for good ('end') when finding the primary fails outright (no Sentinel
    // answering at that moment): start again, so that the store recovers whenever Redis does.
    this.redis.on('end', () => {
      if (this.closing) return;
      (setTimeout(() => void this.redis.connect().catch(() => undefined), 500) as unknown as NodeJS.Timeout).unref();
    });
    this.redis.defineCommand('palisadeCommit', { lua: COMMIT_SCRIPT });
  }

  /** The key of a document or index: the prefix, then the parts joined by ":". */
  k(...parts: Array<string | number>): string {
    return this.p + parts.join(':');
  }

  /** Waits (at most a second) for the connection: commands are never queued while it is down. */
  async connected(): Promise<void> {
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
  async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      await this.connected();
      return await fn();
    } catch (error) {
      // The store's own refusals, and a mutation callback's rejection (the caller's ApiError), pass through.
      if (error instanceof StoreError || error instanceof ApiError) throw error;
      throw new StoreError('STORE_UNAVAILABLE', `the store (Redis) did not answer: ${(error as Error).message}`);
    }
  }

  /** The documents an index (sorted set of ids) names, in index order. */
  async documents<T>(index: string, kind: string): Promise<T[]> {
    const ids = await this.redis.zrange(index, '0', '-1');
    if (ids.length === 0) return [];
    const docs = await this.redis.mget(ids.map((id) => this.k(kind, id)));
    return docs.flatMap((d) => (d ? [JSON.parse(d) as T] : []));
  }

  async json<T>(key: string): Promise<T | undefined> {
    const text = await this.redis.get(key);
    return text === null ? undefined : (JSON.parse(text) as T);
  }

  /** Reads, computes and commits, again and again while other writers get in between. */
  mutate<T>(attempt: () => Promise<Attempt<T>>): Promise<T> {
    return this.guard(async () => {
      for (let i = 0; i < MAX_ATTEMPTS; i++) {
        const plan = await attempt();
        if ('unchanged' in plan) return plan.unchanged;
        const keys: string[] = [this.k('rev'), this.k('changes')];
        // This commit's mark: how a lost answer is settled, and a commit sent twice applied once.
        const mark = this.k('commit', randomBytes(12).toString('hex'));
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
              case 'swap':
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
          mark: index(mark),
          markMs: COMMIT_MARK_MS,
        };
        const revision = await this.redis.palisadeCommit(keys.length, ...keys, JSON.stringify(body), ...args).catch((error: unknown) => this.settle(mark, error));
        if (revision === -2) throw plan.limit!.error;
        if (revision === -3) throw await this.overlapReason(plan.overlap!.name, plan.overlap!.owner);
        if (revision > 0) {
          for (const listener of this.commitListeners) listener();
          if (this.minReplicas > 0) await this.confirmReplicated(mark);
          return plan.result(revision);
        }
        // Someone else committed in between: back off a little, then recompute.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 1 + i * 2)));
      }
      throw new StoreError('STORE_UNAVAILABLE', 'too much contention on one resource; try again');
    });
  }


  /**
   * A commit whose answer was lost (the connection dropped, the primary failed over, no answer in
   * time): its mark, read on the primary as soon as one answers, says whether it was made — its
   * revision — or not (it is not on the primary now: it never ran, or ran on a primary that
   * failed before passing it on). Only when no primary answers within SETTLE_MS is the outcome
   * unknown, and said so.
   */
  private async settle(mark: string, cause: unknown): Promise<number> {
    const why = (cause as Error)?.message ?? String(cause);
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      try {
        await this.connected();
        const done = await this.redis.get(mark);
        if (done !== null) return Number(done);
        const error = new StoreError('STORE_UNAVAILABLE', `the store (Redis) lost its answer to a commit (${why}); the commit was not made: try again`);
        error.retryAfter = 1;
        throw error;
      } catch (error) {
        if (error instanceof StoreError) throw error;
        if (Date.now() >= deadline) {
          const unknown = new StoreError('STORE_UNAVAILABLE', `the store (Redis) lost its answer to a commit (${why}) and no primary answered since: whether it was made is not known, read before trying again`);
          unknown.retryAfter = 5;
          throw unknown;
        }
        await sleep(200);
      }
    }
  }

  /**
   * With PALISADE_REDIS_MIN_REPLICAS: waits until the last write of this connection (the commit)
   * is on that many replicas, else throws NOT_DURABLE (made on the primary, not confirmed on the
   * replicas: a failover now could lose it). An answer lost meanwhile is settled by the mark: a
   * commit found on the primary after a failover was on the replica that became it.
   */
  private async confirmReplicated(mark: string): Promise<void> {
    let acked: number;
    try {
      acked = await this.redis.wait(this.minReplicas, this.waitTimeoutMs);
    } catch (error) {
      await this.settle(mark, error);
      return this.durable();
    }
    if (acked < this.minReplicas) throw this.notDurable(acked, 'the change was made on the primary but');
  }

  /**
   * With PALISADE_REDIS_MIN_REPLICAS: everything written to the primary so far (by any process)
   * is on that many replicas, else NOT_DURABLE. A write and WAIT: the replication stream is one
   * ordered log, so a replica holding this write holds every write before it. Readers of the
   * change feed call it after reading, so a consumer never applies a change a failover could
   * take back.
   */
  async durable(): Promise<void> {
    if (this.minReplicas === 0) return;
    await this.redis.set(this.k('meta', 'barrier'), String(Date.now()));
    const acked = await this.redis.wait(this.minReplicas, this.waitTimeoutMs);
    if (acked < this.minReplicas) throw this.notDurable(acked, 'the newest changes are');
  }

  private notDurable(acked: number, what: string): StoreError {
    const error = new StoreError(
      'NOT_DURABLE',
      `${what} not yet confirmed on ${this.minReplicas} replica${this.minReplicas === 1 ? '' : 's'} (${acked} within ${this.waitTimeoutMs} ms): a failover now could lose them; read before trying again`,
    );
    error.retryAfter = 1;
    return error;
  }

  onCommit(listener: () => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  committedElsewhere(): void {
    // Every Redis read sees every commit already.
  }

  /** An account as stored (what limits are checked against). */
  readUser(id: number): Promise<UserState | undefined> {
    return this.guard(() => this.json<UserState>(this.k('user', id)));
  }

  async nodeIds(): Promise<Set<number>> {
    return new Set((await this.redis.zrange(this.k('nodes'), '0', '-1')).map(Number));
  }

  /**
   * Runs a mutation twice when it allocates record ids: once to count them, then with ids
   * reserved by one INCRBY, so ids stay dense and a rejected mutation reserves none.
   */
  async withRecordIds<T>(build: (ctx: MutationContext) => Promise<T | undefined>): Promise<T | undefined> {
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


  /** Which way a refused name overlaps (read after the script refused it, for the message). */
  private async overlapReason(name: string, owner: number): Promise<StoreError> {
    const owners = await this.redis.hmget(this.k('zoneowners'), ...ancestorsOf(name));
    return overlapError(name, owners.some((o) => o !== null && Number(o) !== owner) ? 'under' : 'above');
  }



  /**
   * Rewrites one key's document in the earlier layout (an upgrade): read under WATCH, the
   * rewrite planned from its text (undefined: nothing to do), retried if a writer got in between.
   */
  async rewriteWatched(key: string, plan: (text: string | null) => ChainableCommander | undefined): Promise<void> {
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

  async close(): Promise<void> {
    this.closing = true;
    await this.redis.quit().catch(() => undefined);
    // Also ends the connections to the Sentinels (the failover detector's), which QUIT leaves open.
    this.redis.disconnect();
  }
}
