// What an edge keeps on disk so that a restart serves at once, even with the API down: its
// domains, their certificates, the IP lists on its node, the node, and the applied revision, in
// LMDB. A snapshot replaces everything in one transaction and each batch of changes is one
// transaction, so a crash leaves either the old or the new state, never a mix.
import { open, type RootDatabase } from 'lmdb';
import type { AcmeChallengeState } from '../../model/acme-challenge.ts';
import type { CertificateState } from '../../model/certificate.ts';
import type { DomainState } from '../../model/domain.ts';
import type { IpListState } from '../../model/iplist.ts';
import type { EdgeNode } from '../../model/node.ts';
import { guardLmdbCommitFailures } from '../../store/lmdb-commit-guard.ts';
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

const END = '\uffff';

export class EdgeLocalState {
  private readonly db: RootDatabase<unknown, Key>;

  constructor(path: string) {
    guardLmdbCommitFailures();
    this.db = open<unknown, Key>({ path, compression: false, noSubdir: false });
  }

  /** Everything stored (read once at start). */
  read(): EdgeStateData {
    const values = <T>(start: Key, end: Key): T[] => [...this.db.getRange({ start, end })].map((e) => e.value as T);
    return {
      revision: (this.db.get(['meta', 'revision']) as number | undefined) ?? 0,
      node: (this.db.get(['meta', 'node']) as EdgeNode | null | undefined) ?? null,
      domains: values<DomainState>(['domain', ''], ['domain', END]),
      certificates: values<CertificateState>(['cert', ''], ['cert', END]),
      challenges: values<AcmeChallengeState>(['acmech', ''], ['acmech', END]),
      ipLists: values<IpListState>(['iplist', 0], ['iplist', Number.MAX_SAFE_INTEGER]),
    };
  }

  /** Replaces everything with a snapshot, in one transaction. */
  async replace(data: EdgeStateData): Promise<void> {
    await this.db.transaction(() => {
      for (const [start, end] of [
        [['domain', ''], ['domain', END]],
        [['cert', ''], ['cert', END]],
        [['acmech', ''], ['acmech', END]],
        [['iplist', 0], ['iplist', Number.MAX_SAFE_INTEGER]],
      ] as Array<[Key, Key]>) {
        for (const key of this.db.getKeys({ start, end })) void this.db.remove(key);
      }
      for (const d of data.domains) void this.db.put(['domain', d.domain], d);
      for (const c of data.certificates) void this.db.put(['cert', c.domain], c);
      for (const c of data.challenges) void this.db.put(['acmech', c.domain], c);
      for (const l of data.ipLists) void this.db.put(['iplist', l.id], l);
      void this.db.put(['meta', 'node'], data.node);
      void this.db.put(['meta', 'revision'], data.revision);
    });
  }

  /** One batch of changes and the revision it reaches, in one transaction. */
  async apply(batch: EdgeBatch, revision: number): Promise<void> {
    await this.db.transaction(() => {
      for (const [name, d] of batch.domains ?? []) {
        if (d) void this.db.put(['domain', name], d);
        else {
          // A domain that leaves takes its certificate and challenge with it (as in edge-state.ts).
          void this.db.remove(['domain', name]);
          void this.db.remove(['cert', name]);
          void this.db.remove(['acmech', name]);
        }
      }
      for (const [name, c] of batch.certificates ?? []) void (c ? this.db.put(['cert', name], c) : this.db.remove(['cert', name]));
      for (const [name, c] of batch.challenges ?? []) void (c ? this.db.put(['acmech', name], c) : this.db.remove(['acmech', name]));
      for (const [id, l] of batch.ipLists ?? []) void (l ? this.db.put(['iplist', id], l) : this.db.remove(['iplist', id]));
      if (batch.node !== undefined) void this.db.put(['meta', 'node'], batch.node);
      void this.db.put(['meta', 'revision'], revision);
    });
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
