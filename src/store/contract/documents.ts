// Internal documents (certificate tasks, the ACME account, events, webhooks) and leases.
import type { Page, PageRequest } from './common.ts';

/** Kinds of internal documents (see Store.getDoc). */
export type DocKind = 'task' | 'taskid' | 'taskdue' | 'acme' | 'meta' | 'health' | 'event' | 'webhook' | 'delivery' | 'deliverydue' | 'hookpending' | 'notice' | 'claimseen' | 'claimdue' | 'nshist' | 'dsseen' | 'dsdue';

/** Internal documents and leases: durable, but no revision and no change entry. */
export interface DocumentStore {
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
   * Takes or renews the lease `name` for `holder` for `ttlMs` when it is free, expired or
   * already `holder`'s (one atomic step); false when another holder has it. How several API
   * processes agree that exactly one runs the certificate work.
   */
  tryLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
}
