// What an edge keeps on disk so that a restart serves at once, even with the API down: its
// domains, their certificates, the IP lists on its node, the node, and the applied revision, in
// LMDB. A snapshot replaces everything in one transaction and each batch of changes is one
// transaction, so a crash leaves either the old or the new state, never a mix.
//
// A full or failing disk stops nothing (../../sync/local-state-writes.ts): what cannot be written
// is kept here, coalesced by key (the edge serves from memory anyway), and written in one
// transaction once the disk takes writes again — the disk always holds a state served at some
// revision. A start on a full disk reads what is stored; a state that does not exist yet is not
// created without room, the edge runs from the feed meanwhile.
import type { RootDatabase } from 'lmdb';
import type { Logger } from 'pino';
import type { AcmeChallengeState } from '../../model/acme-challenge.ts';
import type { CertificateState } from '../../model/certificate.ts';
import type { DomainState } from '../../model/domain.ts';
import type { IpListState } from '../../model/iplist.ts';
import type { EdgeNode } from '../../model/node.ts';
import { diskFailureOf, guardLmdbCommitFailures } from '../../common/lmdb-commit-guard.ts';
import { freeBytes, LocalStateWrites, closeLocalDb, noRoom, openLocalDb } from '../../sync/local-state-writes.ts';
import type { EdgeBatch } from '../edge-state.ts';

type Key = ['meta', string] | ['domain', string] | ['cert', string] | ['acmech', string] | ['iplist', number];

export interface EdgeStateData {
  revision: number;
  node: EdgeNode | null;
  domains: DomainState[];
  certificates: CertificateState[];
  challenges: AcmeChallengeState[];
  ipLists: IpListState[];
}

/** Served, not written: everything (a snapshot) or changes by key (undefined: removed), and the revision reached. */
interface Unwritten {
  all: boolean;
  domains: Map<string, DomainState | undefined>;
  certificates: Map<string, CertificateState | undefined>;
  challenges: Map<string, AcmeChallengeState | undefined>;
  ipLists: Map<number, IpListState | undefined>;
  node?: EdgeNode | null;
  revision: number;
  bytes: number;
}

const END = '\uffff';

export class EdgeLocalState {
  private db: RootDatabase<unknown, Key> | undefined;
  private pending: Unwritten | undefined;
  private readonly writes: LocalStateWrites;

  constructor(
    private readonly path: string,
    log?: Logger,
  ) {
    guardLmdbCommitFailures();
    this.writes = new LocalStateWrites({ dir: path, log, who: 'edge sync', flush: () => this.flush(), unwritten: () => (this.pending ? this.pending.bytes : this.db ? undefined : 0) });
    try {
      this.openDisk();
    } catch (error) {
      const disk = diskFailureOf(error);
      if (disk === undefined) throw error;
      this.writes.fail(disk, false);
      return;
    }
    if (!this.writes.roomFor(0)) this.writes.fail(noRoom(freeBytes(path)).message, false);
  }

  /** Why what is served is not all on disk, and since when; undefined when it is. */
  get problem(): { reason: string; since: number } | undefined {
    return this.writes.problem === undefined ? undefined : { reason: this.writes.problem, since: this.writes.since };
  }

  private openDisk(): void {
    this.db = openLocalDb<Key>(this.path);
  }

  /** Everything stored (read once at start). */
  read(): EdgeStateData {
    const db = this.db;
    if (!db) return { revision: 0, node: null, domains: [], certificates: [], challenges: [], ipLists: [] };
    const values = <T>(start: Key, end: Key): T[] => [...db.getRange({ start, end })].map((e) => e.value as T);
    return {
      revision: (db.get(['meta', 'revision']) as number | undefined) ?? 0,
      node: (db.get(['meta', 'node']) as EdgeNode | null | undefined) ?? null,
      domains: values<DomainState>(['domain', ''], ['domain', END]),
      certificates: values<CertificateState>(['cert', ''], ['cert', END]),
      challenges: values<AcmeChallengeState>(['acmech', ''], ['acmech', END]),
      ipLists: values<IpListState>(['iplist', 0], ['iplist', Number.MAX_SAFE_INTEGER]),
    };
  }

  /** Replaces everything with a snapshot, in one transaction. */
  async replace(data: EdgeStateData): Promise<void> {
    this.pending = {
      all: true,
      domains: new Map(data.domains.map((d) => [d.domain, d])),
      certificates: new Map(data.certificates.map((c) => [c.domain, c])),
      challenges: new Map(data.challenges.map((c) => [c.domain, c])),
      ipLists: new Map(data.ipLists.map((l) => [l.id, l])),
      node: data.node,
      revision: data.revision,
      bytes: JSON.stringify(data).length,
    };
    await this.writes.write();
  }

  /** One batch of changes and the revision it reaches, in one transaction (with whatever was not written before it). */
  async apply(batch: EdgeBatch, revision: number): Promise<void> {
    const into: Unwritten = (this.pending ??= { all: false, domains: new Map(), certificates: new Map(), challenges: new Map(), ipLists: new Map(), revision, bytes: 0 });
    for (const [name, d] of batch.domains ?? []) {
      into.domains.set(name, d);
      // A domain that leaves takes its certificate and challenge with it (as in edge-state.ts).
      if (!d) {
        into.certificates.set(name, undefined);
        into.challenges.set(name, undefined);
      }
    }
    for (const [name, c] of batch.certificates ?? []) into.certificates.set(name, c);
    for (const [name, c] of batch.challenges ?? []) into.challenges.set(name, c);
    for (const [id, l] of batch.ipLists ?? []) into.ipLists.set(id, l);
    if (batch.node !== undefined) into.node = batch.node;
    into.revision = revision;
    into.bytes += JSON.stringify([...(batch.domains ?? []), ...(batch.certificates ?? []), ...(batch.challenges ?? []), ...(batch.ipLists ?? [])]).length;
    await this.writes.write();
  }

  /** Writes everything unwritten in one transaction; true when nothing is left. */
  private async flush(): Promise<boolean> {
    if (!this.db) this.openDisk();
    const batch = this.pending;
    const db = this.db!;
    if (!batch) return true;
    this.pending = undefined;
    try {
      await db.transaction(() => {
        if (batch.all) {
          for (const [start, end] of [
            [['domain', ''], ['domain', END]],
            [['cert', ''], ['cert', END]],
            [['acmech', ''], ['acmech', END]],
            [['iplist', 0], ['iplist', Number.MAX_SAFE_INTEGER]],
          ] as Array<[Key, Key]>) {
            for (const key of db.getKeys({ start, end })) void db.remove(key);
          }
        }
        for (const [name, d] of batch.domains) void (d ? db.put(['domain', name], d) : db.remove(['domain', name]));
        for (const [name, c] of batch.certificates) void (c ? db.put(['cert', name], c) : db.remove(['cert', name]));
        for (const [name, c] of batch.challenges) void (c ? db.put(['acmech', name], c) : db.remove(['acmech', name]));
        for (const [id, l] of batch.ipLists) void (l ? db.put(['iplist', id], l) : db.remove(['iplist', id]));
        if (batch.node !== undefined) void db.put(['meta', 'node'], batch.node);
        void db.put(['meta', 'revision'], batch.revision);
      });
    } catch (error) {
      this.pending = this.pending ? merged(batch, this.pending) : batch;
      throw error;
    }
    return this.pending === undefined;
  }

  /** A last write if the disk takes it (what is not written is caught up from the API at the next start). */
  async close(): Promise<void> {
    await this.writes.close();
    const db = this.db;
    this.db = undefined;
    if (db) await closeLocalDb(db);
  }
}

/** `later` on top of `earlier` (a write of `earlier` failed while `later` was gathered). */
function merged(earlier: Unwritten, later: Unwritten): Unwritten {
  if (later.all) return later;
  for (const [name, d] of later.domains) earlier.domains.set(name, d);
  for (const [name, c] of later.certificates) earlier.certificates.set(name, c);
  for (const [name, c] of later.challenges) earlier.challenges.set(name, c);
  for (const [id, l] of later.ipLists) earlier.ipLists.set(id, l);
  if (later.node !== undefined) earlier.node = later.node;
  earlier.revision = later.revision;
  earlier.bytes += later.bytes;
  return earlier;
}
