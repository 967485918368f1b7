// Internal documents and leases (embedded store): no revision, since no consumer acts on them.
import { decodeCursor, encodeCursor } from '../cursor.ts';
import type { DocKind, DocumentStore, Page, PageRequest } from '../types.ts';
import { END, type LmdbCore } from './core.ts';
import { storeWriteError } from './write-error.ts';

export class LmdbDocuments implements DocumentStore {
  constructor(private readonly core: LmdbCore) {}

  async getDoc<T>(kind: DocKind, id: string): Promise<T | undefined> {
    return this.core.get<T>(['doc', kind, id]);
  }

  async putDoc(kind: DocKind, id: string, value: unknown): Promise<void> {
    await this.core.db.put(['doc', kind, id], value).catch(async (error: unknown) => {
      throw await storeWriteError(error);
    });
  }

  async deleteDoc(kind: DocKind, id: string): Promise<boolean> {
    return this.core.writeOnly(() => {
      if (this.core.get(['doc', kind, id]) === undefined) return false;
      this.core.del(['doc', kind, id]);
      return true;
    });
  }

  async listDocs<T>(kind: DocKind, page: PageRequest, prefix = ''): Promise<Page<{ id: string; value: T }>> {
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
    const items: Array<{ id: string; value: T }> = [];
    let more = false;
    for (const { key, value } of this.core.db.getRange({ start: ['doc', kind, after ?? prefix], end: ['doc', kind, `${prefix}${END}`] })) {
      const id = key[2] as string;
      if (id === after) continue;
      if (items.length === page.limit) {
        more = true;
        break;
      }
      items.push({ id, value: value as T });
    }
    const last = items[items.length - 1];
    return { items, next: more && last ? encodeCursor(last.id) : undefined };
  }

  async updateDoc<T>(kind: DocKind, id: string, mutate: (current: T | undefined) => T | undefined): Promise<{ before: T | undefined; after: T | undefined }> {
    return this.core.writeOnly(() => {
      const before = this.core.get<T>(['doc', kind, id]);
      const after = mutate(before === undefined ? undefined : structuredClone(before));
      if (after !== undefined) this.core.put(['doc', kind, id], after);
      return { before, after: after ?? before };
    });
  }

  async tryLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    // LMDB serialises write transactions across processes: the read and the write are one step.
    return this.core.writeOnly(() => {
      const now = Date.now();
      const lease = this.core.get<{ holder: string; until: number }>(['lease', name]);
      if (lease && lease.holder !== holder && lease.until > now) return false;
      this.core.put(['lease', name], { holder, until: now + ttlMs });
      return true;
    });
  }
}
